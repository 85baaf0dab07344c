package benchutil

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestExit(t *testing.T) {
	live := context.Background()
	cancelled, cancel := context.WithCancel(live)
	cancel()
	tests := []struct {
		name   string
		ctx    context.Context
		err    error
		code   int
		stderr string
	}{
		{"success", live, nil, 0, ""},
		{"success after an interrupt", cancelled, nil, 0, ""},
		{"interrupted", cancelled, context.Canceled, 130, "cdc: interrupted; everything started was stopped\n"},
		{"failed", live, errors.New("boom"), 1, "cdc: boom\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := Exit(tt.ctx, "cdc", tt.err, &stderr); code != tt.code || stderr.String() != tt.stderr {
				t.Errorf("Exit = %d, %q; want %d, %q", code, stderr.String(), tt.code, tt.stderr)
			}
		})
	}
}

func TestProgress_TimeThenMessage(t *testing.T) {
	var b bytes.Buffer
	Progress(&b)("rate %d", 5000)
	got := b.String()
	if len(got) != len("15:04:05  rate 5000\n") || !strings.HasSuffix(got, "  rate 5000\n") || got[2] != ':' {
		t.Errorf("progress line %q", got)
	}
}

// Under go test the binary is in go-build's directory, as under go run.
func TestCommandLine_GoRun(t *testing.T) {
	if got, want := CommandLine("./bench/cdc", []string{"-rates", "1k"}), "go run ./bench/cdc -rates 1k"; got != want {
		t.Errorf("CommandLine = %q, want %q", got, want)
	}
	if got, want := CommandLine("./bench/tpch", nil), "go run ./bench/tpch"; got != want {
		t.Errorf("CommandLine = %q, want %q", got, want)
	}
}

func TestMetricSums_ByLabel(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pgaccel_statements_total"}, []string{"route", "kind"})
	other := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pgaccel_queries_total"}, []string{"route"})
	reg.MustRegister(c, other)
	c.WithLabelValues("origin", "select").Add(2)
	c.WithLabelValues("origin", "insert").Add(3)
	c.WithLabelValues("accelerated", "select").Add(4)
	other.WithLabelValues("origin").Add(100)
	got, err := MetricSums(reg, "pgaccel_statements_total", "route")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["origin"] != 5 || got["accelerated"] != 4 {
		t.Errorf("MetricSums = %v", got)
	}
}
