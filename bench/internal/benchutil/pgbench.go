package benchutil

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

const pgbenchInstall = "apt-get update && apt-get install -y postgresql-client"

// FindPgbench looks for pgbench where pgtest looks for the server
// (pg_config --bindir, the highest /usr/lib/postgresql/*/bin), then on
// PATH.
func FindPgbench() (string, error) {
	var dirs []string
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	debian, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(debian, func(i, j int) bool { return majorOf(debian[i]) > majorOf(debian[j]) })
	dirs = append(dirs, debian...)
	for _, d := range dirs {
		p := filepath.Join(d, "pgbench")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("pgbench not found (looked in pg_config --bindir, /usr/lib/postgresql/*/bin and PATH); install it with: %s", pgbenchInstall)
}

// majorOf turns /usr/lib/postgresql/9.6/bin into 9.6 for sorting.
func majorOf(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

// PgbenchEnv is the environment of a pgbench run: set (PGPASSWORD and
// the like), then this process's environment without its PG* variables,
// so that they cannot redirect it.
func PgbenchEnv(set ...string) []string {
	env := append([]string(nil), set...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	return env
}

// PgbenchVersion is the output of `path --version`, "unknown" when it
// fails.
func PgbenchVersion(ctx context.Context, path string) string {
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// PgbenchSummary is what pgbench's closing summary reports.
type PgbenchSummary struct {
	TPS       float64 // without initial connection time
	LatencyMS float64 // latency average
	Txns      int64   // number of transactions actually processed
}

var (
	// With -C (a connection per transaction) pgbench counts the
	// connections in: "(including reconnection times)".
	tpsRe     = regexp.MustCompile(`(?m)^tps = ([0-9.]+) \((?:without initial connection time|including reconnection times)\)`)
	latencyRe = regexp.MustCompile(`(?m)^latency average = ([0-9.]+) ms`)
	failedRe  = regexp.MustCompile(`(?m)^number of failed transactions: ([0-9]+)`)
	txnsRe    = regexp.MustCompile(`(?m)^number of transactions actually processed: ([0-9]+)`)
)

// ParsePgbenchSummary reads TPS, average latency and the transaction
// count from pgbench's output. Failed transactions, or a summary line
// missing, are an error that quotes the end of out.
func ParsePgbenchSummary(out []byte) (PgbenchSummary, error) {
	if m := failedRe.FindSubmatch(out); m != nil && string(m[1]) != "0" {
		return PgbenchSummary{}, fmt.Errorf("pgbench reported %s failed transactions:\n%s", m[1], Tail(out, 15))
	}
	tm, lm, nm := tpsRe.FindSubmatch(out), latencyRe.FindSubmatch(out), txnsRe.FindSubmatch(out)
	if tm == nil || lm == nil || nm == nil {
		return PgbenchSummary{}, errors.New("pgbench output lacks one of the lines \"tps = ... (without initial connection time)\", " +
			"\"latency average\", \"number of transactions actually processed\":\n" + Tail(out, 15))
	}
	var s PgbenchSummary
	var err error
	if s.TPS, err = strconv.ParseFloat(string(tm[1]), 64); err != nil {
		return PgbenchSummary{}, fmt.Errorf("parse pgbench tps %q: %w", tm[1], err)
	}
	if s.LatencyMS, err = strconv.ParseFloat(string(lm[1]), 64); err != nil {
		return PgbenchSummary{}, fmt.Errorf("parse pgbench latency %q: %w", lm[1], err)
	}
	if s.Txns, err = strconv.ParseInt(string(nm[1]), 10, 64); err != nil {
		return PgbenchSummary{}, fmt.Errorf("parse pgbench transaction count %q: %w", nm[1], err)
	}
	return s, nil
}

// Tail is the last n lines of out.
func Tail(out []byte, n int) string {
	lines := strings.Split(string(bytes.TrimRight(out, "\n")), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
