package tpchdata

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pgaccel/pgaccel/catalog"
)

// Config is a pgaccel config over the origin at dsn, on loopback ports
// chosen at start, with its data in dataDir: the top-level blocks top
// (YAML lines, "" for none), then one dataset per table of ts (every
// table when nil), each with the acceleration lines acc (indented six
// spaces; "" for the defaults).
func Config(dsn, dataDir, top string, ts []Table, acc string) (*catalog.Config, error) {
	if ts == nil {
		ts = Tables
	}
	var b strings.Builder
	fmt.Fprintf(&b, "origin:\n  dsn: %q\nserver:\n  listen: 127.0.0.1:0\nadmin:\n  listen: 127.0.0.1:0\nruntime:\n  data_dir: %q\n%sdatasets:\n",
		dsn, dataDir, top)
	for _, t := range ts {
		fmt.Fprintf(&b, "  - from: postgres:public.%s\n", t.Name)
		if acc != "" {
			fmt.Fprintf(&b, "    acceleration:\n%s", acc)
		}
	}
	cfg, err := catalog.Parse([]byte(b.String()), "tpch.yaml")
	if err != nil {
		return nil, fmt.Errorf("pgaccel config: %w", err)
	}
	return cfg, nil
}

// ChildMain is the main of a benchmark run with ChildFlag (Load's
// generator): it generates scale factor sf from the DSN on stdin and
// returns the exit status; name prefixes its error.
func ChildMain(ctx context.Context, name string, sf float64, stdout, stderr io.Writer) int {
	if err := GenerateChild(ctx, sf, os.Stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "%s generator: %v\n", name, err)
		return 1
	}
	return 0
}
