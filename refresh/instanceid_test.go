package refresh

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestInstanceID_OneIDForConcurrentCallers: changes datasets starting at
// once all get the one id that is written (none reads a half-written file,
// and no two ids are made); a later call reads it; the file is mode 0600.
func TestInstanceID_OneIDForConcurrentCallers(t *testing.T) {
	dir := t.TempDir()
	ids := make([]string, 16)
	errs := make([]error, 16)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i], errs[i] = InstanceID(dir)
		}()
	}
	wg.Wait()
	for i := range ids {
		if errs[i] != nil || ids[i] != ids[0] || !validInstanceID(ids[i]) {
			t.Fatalf("caller %d: %q %v (first %q)", i, ids[i], errs[i], ids[0])
		}
	}
	if again, err := InstanceID(dir); err != nil || again != ids[0] {
		t.Fatalf("later call: %q %v", again, err)
	}
	fi, err := os.Stat(filepath.Join(dir, instanceIDFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("instance id file: %v %v", fi.Mode(), err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".instance_id-*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}
