package benchutil

import (
	"os"
	"path/filepath"
	"testing"
)

func TestProcField_FirstMatchingKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpuinfo")
	text := "processor\t: 0\nmodel name\t: Example CPU @ 2.00GHz\nmodel name\t: second\nflags\t\t: a:b\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ key, want string }{
		{"model name", "Example CPU @ 2.00GHz"},
		{"flags", "a:b"},
		{"model", "unknown"},
	} {
		if got := procField(path, tt.key, "unknown"); got != tt.want {
			t.Errorf("procField(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
	if got := procField(filepath.Join(t.TempDir(), "missing"), "model name", "unknown"); got != "unknown" {
		t.Errorf("missing file: %q", got)
	}
}
