package benchutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParsePgbenchSummary_Fixtures(t *testing.T) {
	tests := []struct {
		file    string
		want    PgbenchSummary
		wantErr string
	}{
		{file: "pgbench15_select_only.txt", want: PgbenchSummary{TPS: 29354.012345, LatencyMS: 0.272, Txns: 293540}},
		{file: "pgbench15_failed.txt", wantErr: "12 failed transactions"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			out, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParsePgbenchSummary(out)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParsePgbenchSummary error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParsePgbenchSummary: %v", err)
			}
			if got != tt.want {
				t.Errorf("ParsePgbenchSummary = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParsePgbenchSummary_MissingSummary(t *testing.T) {
	_, err := ParsePgbenchSummary([]byte("pgbench: error: connection to server failed\n"))
	if err == nil || !strings.Contains(err.Error(), "connection to server failed") {
		t.Fatalf("ParsePgbenchSummary error = %v, want one quoting pgbench's output", err)
	}
}

func TestTail(t *testing.T) {
	if got := Tail([]byte("a\nb\nc\n"), 2); got != "b\nc" {
		t.Errorf("Tail(2) = %q", got)
	}
	if got := Tail([]byte("a\nb\n"), 15); got != "a\nb" {
		t.Errorf("Tail(15) = %q", got)
	}
}

func TestMajorOf_SortsNumerically(t *testing.T) {
	if majorOf("/usr/lib/postgresql/10/bin") <= majorOf("/usr/lib/postgresql/9.6/bin") {
		t.Error("10 does not sort above 9.6")
	}
}

func TestPgbenchEnv_DropsPGVariables(t *testing.T) {
	t.Setenv("PGHOST", "elsewhere")
	t.Setenv("BENCHUTIL_TEST", "kept")
	env := PgbenchEnv("PGPASSWORD=secret")
	if env[0] != "PGPASSWORD=secret" {
		t.Errorf("env starts with %q", env[0])
	}
	var kept bool
	for _, kv := range env[1:] {
		if strings.HasPrefix(kv, "PG") {
			t.Errorf("kept %q", kv)
		}
		kept = kept || kv == "BENCHUTIL_TEST=kept"
	}
	if !kept {
		t.Error("dropped a variable without the PG prefix")
	}
}
