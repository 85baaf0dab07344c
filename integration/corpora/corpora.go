// Package corpora holds the differential corpora of read statements that the
// integration tests and bench/coverage run against a real origin, directly
// and through pgaccel, with the schemas they read.
//
//   - Accel (accel.go) over AccelSchema: the acceleration tests' corpus, each
//     statement with the route it must take.
//   - Coverage (coverage.sql) over CoverageSchema: statements written the
//     way Metabase, Superset, Looker, Tableau, dbt models and hand-written
//     dashboards write them, each with the route recorded in
//     coverage_routes.txt (see Routes).
//
// corpora imports only the standard library.
package corpora

import (
	"bufio"
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Routes a statement may be expected to take.
const (
	Accelerated = "accelerated"
	Origin      = "origin"
	Fallback    = "fallback"
	// AnyRoute asserts only that the answer is exact.
	AnyRoute = "any"
)

// Query is one read statement of a corpus.
type Query struct {
	Name string
	// Style is who writes statements this way (coverage corpus): metabase,
	// superset, looker, tableau, dbt or dashboard.
	Style string
	SQL   string
	// Args are the parameters $1..$n: the extended protocol binds them, the
	// simple protocol inlines them (Inline).
	Args []any
	// Point marks a read pinning a primary key (the point_reads rule).
	Point bool
	// Route is the expected route (Accel); for Coverage it is filled from
	// coverage_routes.txt.
	Route string
}

// AccelSchema creates the acc_* tables Accel reads.
//
//go:embed accel_schema.sql
var AccelSchema string

// CoverageSchema creates the cov_* tables Coverage reads.
//
//go:embed coverage_schema.sql
var CoverageSchema string

// files holds coverage.sql (read by Coverage).
//
//go:embed coverage*.sql
var files embed.FS

//go:embed coverage_routes.txt
var coverageRoutes string

// CoverageDatasets are the tables of CoverageSchema, all accelerated.
var CoverageDatasets = []string{"cov_customers", "cov_products", "cov_orders", "cov_order_items", "cov_events", "cov_employees", "cov_typed"}

// Coverage parses coverage.sql: blocks that start with a "-- name: " line,
// followed by "-- style: ", optional "-- args: <JSON array>" and
// "-- point: true" lines, and the statement, ending in a semicolon. Routes
// are those of coverage_routes.txt.
func Coverage() ([]Query, error) {
	text, err := files.ReadFile("coverage.sql")
	if err != nil {
		return nil, err
	}
	qs, err := ParseBlocks(string(text))
	if err != nil {
		return nil, fmt.Errorf("coverage.sql: %w", err)
	}
	routes, err := ParseRoutes(coverageRoutes)
	if err != nil {
		return nil, fmt.Errorf("coverage_routes.txt: %w", err)
	}
	for i := range qs {
		qs[i].Route = routes[qs[i].Name]
	}
	return qs, nil
}

// ReadCorpus parses a corpus file in coverage.sql's block format (routes
// left empty): bench/coverage -file measures corpora kept elsewhere.
func ReadCorpus(path string) ([]Query, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	qs, err := ParseBlocks(string(text))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return qs, nil
}

// ParseBlocks parses statements in coverage.sql's block format.
func ParseBlocks(text string) ([]Query, error) {
	var (
		qs   []Query
		cur  *Query
		body strings.Builder
		seen = map[string]bool{}
	)
	finish := func() error {
		if cur == nil {
			return nil
		}
		sql := strings.TrimSpace(body.String())
		sql = strings.TrimSpace(strings.TrimSuffix(sql, ";"))
		if sql == "" {
			return fmt.Errorf("%q: no statement", cur.Name)
		}
		cur.SQL = sql
		qs = append(qs, *cur)
		cur = nil
		body.Reset()
		return nil
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		l := sc.Text()
		if name, ok := strings.CutPrefix(l, "-- name:"); ok {
			if err := finish(); err != nil {
				return nil, err
			}
			name = strings.TrimSpace(name)
			if name == "" || seen[name] {
				return nil, fmt.Errorf("line %d: empty or repeated name %q", line, name)
			}
			seen[name] = true
			cur = &Query{Name: name}
			continue
		}
		if cur == nil {
			continue // the file's header
		}
		if body.Len() == 0 {
			if v, ok := strings.CutPrefix(l, "-- style:"); ok {
				cur.Style = strings.TrimSpace(v)
				continue
			}
			if v, ok := strings.CutPrefix(l, "-- args:"); ok {
				if err := json.Unmarshal([]byte(v), &cur.Args); err != nil {
					return nil, fmt.Errorf("line %d: args: %w", line, err)
				}
				for i, a := range cur.Args {
					if f, ok := a.(float64); ok && f == float64(int64(f)) {
						cur.Args[i] = int64(f)
					}
				}
				continue
			}
			if v, ok := strings.CutPrefix(l, "-- point:"); ok {
				cur.Point = strings.TrimSpace(v) == "true"
				continue
			}
			if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "--") {
				continue
			}
		}
		body.WriteString(l)
		body.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := finish(); err != nil {
		return nil, err
	}
	return qs, nil
}

// ParseRoutes parses lines "route<TAB>name" (coverage_routes.txt); lines
// starting with # are comments.
func ParseRoutes(text string) (map[string]string, error) {
	out := map[string]string{}
	for i, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		route, name, ok := strings.Cut(l, "\t")
		if !ok {
			return nil, fmt.Errorf("line %d: want route<TAB>name", i+1)
		}
		switch route {
		case Accelerated, Origin, Fallback, AnyRoute:
		default:
			return nil, fmt.Errorf("line %d: unknown route %q", i+1, route)
		}
		out[name] = route
	}
	return out, nil
}

// FormatRoutes writes routes by name in coverage_routes.txt's format, in
// the order of qs.
func FormatRoutes(qs []Query, routes map[string]string) string {
	var b strings.Builder
	b.WriteString("# The route each statement of coverage.sql takes through pgaccel (route<TAB>name).\n")
	b.WriteString("# Written by PGACCEL_UPDATE_ROUTES=1 go test ./integration -run TestCoverage_DifferentialCorpus.\n")
	for _, q := range qs {
		if r, ok := routes[q.Name]; ok {
			fmt.Fprintf(&b, "%s\t%s\n", r, q.Name)
		}
	}
	return b.String()
}

// Inline substitutes the parameters $n by literals for the simple
// protocol: strings quoted, everything else printed bare.
func Inline(sql string, args []any) string {
	for i := len(args); i >= 1; i-- {
		var lit string
		switch v := args[i-1].(type) {
		case string:
			lit = "'" + strings.ReplaceAll(v, "'", "''") + "'"
		default:
			lit = fmt.Sprint(v)
		}
		sql = strings.ReplaceAll(sql, fmt.Sprintf("$%d", i), lit)
	}
	return sql
}
