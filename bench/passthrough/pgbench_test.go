package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseOutput_Fixtures(t *testing.T) {
	tests := []struct {
		file    string
		want    outcome
		wantErr string
	}{
		{file: "pgbench15_select_only.txt", want: outcome{tps: 29354.012345, latencyMS: 0.272, txns: 293540}},
		{file: "pgbench15_failed.txt", wantErr: "12 failed transactions"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			out, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseOutput(out)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseOutput error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseOutput: %v", err)
			}
			if got != tt.want {
				t.Errorf("parseOutput = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseOutput_MissingSummary(t *testing.T) {
	_, err := parseOutput([]byte("pgbench: error: connection to server failed\n"))
	if err == nil || !strings.Contains(err.Error(), "connection to server failed") {
		t.Fatalf("parseOutput error = %v, want one quoting pgbench's output", err)
	}
}
