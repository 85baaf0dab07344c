package accelerator

import (
	"fmt"
	"testing"
)

// TestOpen_AllocatorSettings: the engine returns freed memory to the
// system sooner than DuckDB's defaults (engine.go, Open).
func TestOpen_AllocatorSettings(t *testing.T) {
	e := openEngine(t, "")
	got := duckRows(t, e, "SELECT name, value FROM duckdb_settings() WHERE name IN ('allocator_flush_threshold', 'allocator_background_threads') ORDER BY name")
	if fmt.Sprint(got) != "[[allocator_background_threads true] [allocator_flush_threshold 32.0 MiB]]" {
		t.Errorf("settings: %v", got)
	}
}
