package stmtstats

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pgaccel/pgaccel/catalog"
)

// AdviceInput is what the advisor knows beside the statistics.
type AdviceInput struct {
	// Datasets maps each dataset's origin table (schema.table, lower
	// case as Postgres folds unquoted names) to its name.
	Datasets map[string]string
	// DefaultSchema qualifies a table named without a schema ("public").
	DefaultSchema string
}

// TableAdvice is an origin table whose reads went to the origin because
// it is not a dataset.
type TableAdvice struct {
	// Table is schema.table.
	Table string `json:"table"`
	// OriginMS is the origin time of the read statements it would let
	// pgaccel answer once it (and the tables in With) are datasets;
	// Calls their calls at the origin, Statements how many.
	OriginMS   float64 `json:"origin_ms"`
	Calls      uint64  `json:"calls"`
	Statements int     `json:"statements"`
	// With are the other tables, not datasets either, that some of those
	// statements read too (each needs every one of its tables).
	With []string `json:"with,omitempty"`
	// Top is the normalised text of the statement that cost the most.
	Top string `json:"top_statement,omitempty"`
	// Config is a snippet for the datasets: list of the config.
	Config string `json:"config"`
}

// ChangeAdvice is a dataset whose reads went to the origin for a reason a
// config change would lift.
type ChangeAdvice struct {
	Dataset    string  `json:"dataset"`
	Reason     string  `json:"reason"`
	Rule       string  `json:"rule,omitempty"`
	OriginMS   float64 `json:"origin_ms"`
	Calls      uint64  `json:"calls"`
	Statements int     `json:"statements"`
	Change     string  `json:"change"`
	Top        string  `json:"top_statement,omitempty"`
}

// Advice is the advisor's answer.
type Advice struct {
	Tables  []TableAdvice  `json:"tables"`
	Changes []ChangeAdvice `json:"changes"`
}

// changes are the origin reasons a config change lifts, with the change.
var changes = map[string]string{
	"point_read":             "runtime.point_reads: index (reads by key then come from the point index; see docs/configuration.md for what other sessions see)",
	"column_not_accelerated": "accelerate the column the rule names (the dataset's columns, or a type mapping it lacks)",
	"max_staleness":          "refresh the dataset more often (acceleration.refresh_check_interval, or refresh_mode: changes) or allow older data (acceleration.max_staleness)",
	"read_your_writes":       "refresh_mode: changes applies a session's writes within runtime.read_your_writes.max_wait; or runtime.read_your_writes.scope",
	"route_setting":          "the sessions set pgaccel.route = origin",
}

// qualify names a table as schema.table, as Postgres folds an unquoted
// name (the describer keeps names as written, quotes removed).
func qualify(name, schema string) string {
	if !strings.Contains(name, ".") {
		name = schema + "." + name
	}
	return name
}

// systemTable reports a catalog table the advisor never proposes.
func systemTable(t string) bool {
	return strings.HasPrefix(t, "pg_catalog.") || strings.HasPrefix(t, "information_schema.") ||
		strings.Contains(t, ".pg_") || strings.HasPrefix(t, "pg_")
}

// MissingTables are the tables of a statement (as the describer names
// them) that are not datasets, schema-qualified, sorted, each once; none
// when the statement reads a system catalog (the origin's in any case).
func (in AdviceInput) MissingTables(tables []string) []string {
	schema := in.DefaultSchema
	if schema == "" {
		schema = "public"
	}
	var missing []string
	for _, t := range tables {
		q := qualify(t, schema)
		if systemTable(q) {
			return nil
		}
		if _, ok := in.Datasets[q]; !ok {
			missing = append(missing, q)
		}
	}
	sort.Strings(missing)
	return dedup(missing)
}

// Advise ranks, from the statistics, the origin tables whose reads cost
// the origin the most time and are not datasets, and the datasets whose
// reads went to the origin for a reason a config change lifts. Only read
// statements count (a write is the origin's in any case).
func Advise(stats []Stat, in AdviceInput) Advice {
	type tableAcc struct {
		TableAdvice
		with    map[string]bool
		topCost float64
	}
	tables := map[string]*tableAcc{}
	type changeKey struct{ dataset, reason string }
	type changeAcc struct {
		ChangeAdvice
		topCost float64
	}
	chg := map[changeKey]*changeAcc{}
	for i := range stats {
		st := &stats[i]
		if st.OriginMS <= 0 || !st.Read {
			continue
		}
		var calls uint64
		for _, r := range st.Routes {
			if r.Route == Origin.String() || r.Route == Fallback.String() {
				calls += r.Calls
			}
		}
		missing := in.MissingTables(st.Tables)
		if len(missing) > 0 && (st.Reason == "no_dataset" || st.Reason == "not_accelerated" || st.Reason == "") {
			for _, t := range missing {
				a := tables[t]
				if a == nil {
					a = &tableAcc{TableAdvice: TableAdvice{Table: t}, with: map[string]bool{}}
					tables[t] = a
				}
				a.OriginMS += st.OriginMS
				a.Calls += calls
				a.Statements++
				for _, o := range missing {
					if o != t {
						a.with[o] = true
					}
				}
				if st.OriginMS > a.topCost {
					a.topCost, a.Top = st.OriginMS, st.Text
				}
			}
			continue
		}
		change, ok := changes[st.Reason]
		if !ok || len(st.Datasets) == 0 {
			continue
		}
		for _, ds := range st.Datasets {
			k := changeKey{ds, st.Reason}
			a := chg[k]
			if a == nil {
				a = &changeAcc{ChangeAdvice: ChangeAdvice{Dataset: ds, Reason: st.Reason, Change: change}}
				chg[k] = a
			}
			a.OriginMS += st.OriginMS
			a.Calls += calls
			a.Statements++
			if st.OriginMS > a.topCost {
				a.topCost, a.Top, a.Rule = st.OriginMS, st.Text, st.Rule
			}
		}
	}
	var out Advice
	for _, a := range tables {
		for w := range a.with {
			a.With = append(a.With, w)
		}
		sort.Strings(a.With)
		a.Config = snippet(a.Table)
		out.Tables = append(out.Tables, a.TableAdvice)
	}
	sort.Slice(out.Tables, func(i, j int) bool {
		a, b := out.Tables[i], out.Tables[j]
		if a.OriginMS != b.OriginMS {
			return a.OriginMS > b.OriginMS
		}
		return a.Table < b.Table
	})
	for _, a := range chg {
		out.Changes = append(out.Changes, a.ChangeAdvice)
	}
	sort.Slice(out.Changes, func(i, j int) bool {
		a, b := out.Changes[i], out.Changes[j]
		if a.OriginMS != b.OriginMS {
			return a.OriginMS > b.OriginMS
		}
		return a.Dataset+a.Reason < b.Dataset+b.Reason
	})
	return out
}

func dedup(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// snippet is the datasets: entry that accelerates table (schema.table).
func snippet(table string) string {
	name := table
	if i := strings.IndexByte(table, '.'); i >= 0 && table[:i] == "public" {
		name = table[i+1:]
	} else {
		name = strings.ReplaceAll(table, ".", "_")
	}
	return fmt.Sprintf("  - from: postgres:%s\n    name: %s\n    acceleration:\n      enabled: true\n      refresh_mode: full\n      refresh_check_interval: 1m\n", table, name)
}

// ChangeFor says what would let the acceleration answer a read the
// origin got for reason.
func ChangeFor(reason string) string {
	if c, ok := changes[reason]; ok {
		return c
	}
	switch reason {
	case "not_ready":
		return "wait for the dataset to load (its status says why it is not ready)"
	case "privilege", "row_security":
		return "none in pgaccel's config: the role's privileges at the origin decide"
	case "tx_wrote":
		return "none: after a write in a transaction its reads stay with the origin"
	case "":
		return ""
	}
	return "none in pgaccel's config: the acceleration cannot answer this exactly (" + reason + "); the rule says which construct"
}

// InputFrom is the advisor's view of reg's datasets.
func InputFrom(reg *catalog.Registry) AdviceInput {
	in := AdviceInput{Datasets: map[string]string{}, DefaultSchema: "public"}
	if reg == nil {
		return in
	}
	for _, n := range reg.Names() {
		if ds, ok := reg.Dataset(n); ok {
			in.Datasets[ds.Schema+"."+ds.Table] = ds.Name
		}
	}
	return in
}
