package catalog

import (
	"reflect"
	"slices"
	"testing"
)

// keysOf returns the YAML keys of the raw block type T.
func keysOf[T any]() []string {
	keys, _ := structFields(reflect.TypeFor[T]())
	return keys
}

// TestSuggest_Typos: what a user who typed a key wrong most likely meant,
// among the real keys of the block. The first two were suggested as
// refresh_jitter_max: whole-string edit counts favour keys of a similar
// length over the key whose words were typed.
func TestSuggest_Typos(t *testing.T) {
	accel, dataset, server, runtime := keysOf[rawAcceleration](), keysOf[rawDataset](), keysOf[rawServer](), keysOf[rawRuntime]()
	tests := []struct {
		typed string
		known []string
		want  string
	}{
		{"refresh_intervall", accel, "refresh_check_interval"},
		{"refresh_interval", accel, "refresh_check_interval"},
		{"refresh_retry_max", accel, "refresh_retry_max_attempts"},
		{"refresh_retry_maxx", accel, "refresh_retry_max_attempts"},
		{"jitter_enabled", accel, "refresh_jitter_enabled"},
		{"check_enabled", accel, "retention_check_enabled"},
		{"retention_interval", accel, "retention_check_interval"},
		{"refresh_window", accel, "refresh_data_window"},
		{"refresh_data", accel, "refresh_data_window"},
		{"refresh_overlap", accel, "refresh_append_overlap"},
		{"refresh_append", accel, "refresh_append_overlap"},
		{"refresh_check", accel, "refresh_check_interval"},
		{"refresh_max", accel, "refresh_jitter_max"},
		{"on_results", accel, "on_zero_results"},
		{"on_zero_result", accel, "on_zero_results"},
		{"stale_while_revalidate", accel, "caching_stale_while_revalidate"},
		{"snapshot_trigger", accel, "snapshots_trigger"},
		{"refresh-mode", accel, "refresh_mode"},
		{"Refresh_Mode", accel, "refresh_mode"},
		{"refreshmode", accel, "refresh_mode"},
		{"refresh_mdoe", accel, "refresh_mode"},
		{"refresh_crn", accel, "refresh_cron"},
		{"primarykey", accel, "primary_key"},
		{"primary_keys", accel, "primary_key"},
		{"retention_periode", accel, "retention_period"},
		{"time_colum", dataset, "time_column"},
		{"timecolumn", dataset, "time_column"},
		{"max_bytes", server, "max_message_bytes"},
		{"listn", server, "listen"},
		{"point_read", runtime, "point_reads"},
		{"data_directory", runtime, "data_dir"},
		{"pg_publicaton", datasetParams, ParamPublication},
		{"pg_slot", datasetParams, ParamReplicationSlot},
		{"s3_endpiont", []string{"s3_endpoint", "s3_region", "s3_auth", "s3_key", "s3_secret", "s3_session_token", "s3_path_style"}, "s3_endpoint"},
		{"unix_second", timeFormats, TimeFormatUnixSeconds},
		// Nothing close: no suggestion.
		{"colour", accel, ""},
		{"max_connections", accel, ""},
		{"statement_timeout", datasetParams, ""},
		{"pg_host", datasetParams, ""},
		{"pg_db", datasetParams, ""},
		{"duckdb_memory_limit", accelerationParams, ""},
	}
	for _, tt := range tests {
		if got := suggest(tt.typed, tt.known); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.typed, got, tt.want)
		}
	}
}

// TestSuggest_OneEditFromEveryKey: a key of any block with one letter
// dropped, doubled or swapped with the next, or with a letter or an
// underscore added at its end, suggests that key.
func TestSuggest_OneEditFromEveryKey(t *testing.T) {
	blocks := map[string][]string{
		"top": keysOf[rawConfig](), "origin": keysOf[rawOrigin](), "server": keysOf[rawServer](), "tls": keysOf[rawTLS](),
		"admin": keysOf[rawAdmin](), "auth": keysOf[rawAuth](), "runtime": keysOf[rawRuntime](),
		"point_index": keysOf[rawPointIndex](), "duckdb": keysOf[rawDuckDB](), "results_cache": keysOf[rawResultsCache](), "snapshots": keysOf[rawSnapshots](),
		"dataset": keysOf[rawDataset](), "acceleration": keysOf[rawAcceleration](),
	}
	for block, keys := range blocks {
		for _, k := range keys {
			var typos []string
			for i := range len(k) {
				typos = append(typos, k[:i]+k[i+1:], k[:i+1]+k[i:])
				if i+1 < len(k) {
					typos = append(typos, k[:i]+k[i+1:i+2]+k[i:i+1]+k[i+2:])
				}
			}
			typos = append(typos, k+"s", k+"_")
			for _, typo := range typos {
				if typo == k || slices.Contains(keys, typo) {
					continue
				}
				if got := suggest(typo, keys); got != k {
					t.Errorf("%s: suggest(%q) = %q, want %q", block, typo, got, k)
				}
			}
		}
	}
}
