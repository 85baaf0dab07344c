package catalog

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that no input makes Parse panic, and that a config it
// accepts validates again unchanged.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed files in testdata: %v", err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("a: &x {b: *x}\n"))
	f.Add([]byte("server: &s\n  tls: *s\n"))
	f.Add([]byte("datasets: &d\n  - *d\n"))
	f.Add([]byte("datasets:\n  - from: postgres:t\n    acceleration:\n      <<: [*a, *b]\n"))
	env := envOf(map[string]string{"PGACCEL_TEST_DSN": testDSN})
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := parse(data, "fuzz.yaml", env)
		if err != nil {
			if cfg != nil {
				t.Fatalf("config returned along with %v", err)
			}
			_ = err.Error()
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("accepted config fails Validate: %v", err)
		}
	})
}
