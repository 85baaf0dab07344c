package main

import (
	"path/filepath"
	"testing"

	"github.com/pgaccel/pgaccel/catalog"
)

// The configs the compose files mount are valid, with the environment the
// compose files give them.
func TestDeployConfigsAreValid(t *testing.T) {
	t.Setenv("POSTGRES_PASSWORD", "pgaccel")
	t.Setenv("S3_KEY", "pgaccel")
	t.Setenv("S3_SECRET", "pgaccel-secret-key")
	for _, p := range []string{"pgaccel.compose.yaml", "scaleout/writer.yaml", "scaleout/reader.yaml"} {
		cfg, err := catalog.Load(filepath.Join("..", "..", "deploy", p))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if p != "pgaccel.compose.yaml" && (cfg.Snapshots == nil || !cfg.Snapshots.Enabled || len(cfg.Datasets) != 2) {
			t.Errorf("%s: snapshots %+v, %d datasets", p, cfg.Snapshots, len(cfg.Datasets))
		}
	}
}
