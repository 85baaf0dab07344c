package proxy

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/stmtstats"
)

// The proxy's own statements, answered about itself (README, "Seeing
// what pgaccel does"): SHOW pgaccel.last_route (route.go),
// SHOW pgaccel.statements | stats | datasets | advice, and EXPLAIN
// (pgaccel) <statement>, the dry run. Each becomes a SELECT the origin can
// parse and describe (typed NULLs: what a client that prepares it is
// told), and the proxy answers it from DuckDB with a VALUES list of what
// it knows, through the local path accelerated reads take. Where it
// cannot answer, the origin runs that SELECT, which fails there rather
// than answer with no row: in an aborted transaction with 25P02, as any
// statement; else (a session whose settings the encoder cannot honour,
// such as client_encoding LATIN1) as Postgres fails SHOW of a setting it
// does not know (42704, unrecognized configuration parameter
// "pgaccel.statements").
//
// A session sees the statements of its own login role; a superuser's
// (is_superuser) sees every role's.

// ownCol is a column of an own answer: its name and Postgres type (text,
// bigint, double precision; DuckDB VARCHAR, BIGINT, DOUBLE).
type ownCol struct {
	name, typ string
}

var (
	statementsCols = []ownCol{{"fingerprint", "text"}, {"role", "text"}, {"database", "text"}, {"route", "text"},
		{"calls", "bigint"}, {"rows", "bigint"}, {"total_ms", "float8"}, {"mean_ms", "float8"}, {"p50_ms", "float8"},
		{"p95_ms", "float8"}, {"p99_ms", "float8"}, {"max_ms", "float8"}, {"statement_origin_ms", "float8"},
		{"reason", "text"}, {"rule", "text"}, {"datasets", "text"}, {"query", "text"}}
	statsCols = []ownCol{{"database", "text"}, {"role", "text"}, {"route", "text"}, {"statements", "bigint"},
		{"calls", "bigint"}, {"rows", "bigint"}, {"total_ms", "float8"}, {"mean_ms", "float8"}, {"since", "text"}}
	datasetsCols = []ownCol{{"name", "text"}, {"source", "text"}, {"refresh_mode", "text"}, {"status", "text"},
		{"rows", "bigint"}, {"file_bytes", "bigint"}, {"data_age_seconds", "float8"}, {"last_refresh", "text"},
		{"error", "text"}}
	adviceCols = []ownCol{{"kind", "text"}, {"target", "text"}, {"origin_ms", "float8"}, {"calls", "bigint"},
		{"statements", "bigint"}, {"change", "text"}, {"top_statement", "text"}}
	explainCols = []ownCol{{"route", "text"}, {"datasets", "text"}, {"reason", "text"}, {"rule", "text"},
		{"advice", "text"}}

	statementsSQL = ownSQL(statementsCols, "", "statements")
	statsSQL      = ownSQL(statsCols, "", "stats")
	datasetsSQL   = ownSQL(datasetsCols, "", "datasets")
	adviceSQL     = ownSQL(adviceCols, "", "advice")
	// explainPrefix and explainSuffix wrap EXPLAIN (pgaccel)'s statement,
	// as a literal.
	explainPrefix = ownSQL(explainCols, "FROM (SELECT ", "")
	explainSuffix = "::text) AS pgaccel_explain(statement)" + originFails("explain")
)

// originFails is the WHERE clause of an own statement's SELECT: the
// origin, should it run it, fails as for SHOW of a setting it does not
// know (pgaccel.<name>).
func originFails(name string) string {
	return " WHERE pg_catalog.current_setting('pgaccel." + name + "') IS NULL"
}

// ownSQL is the origin's form of an own answer of cols: typed NULLs
// (from, when set, opens a FROM the caller completes), and originFails
// of name.
func ownSQL(cols []ownCol, from, name string) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("NULL::" + c.typ + " AS " + quoteIdent(c.name))
	}
	if from != "" {
		b.WriteString(" " + from)
		return b.String()
	}
	b.WriteString(originFails(name))
	return b.String()
}

// asOwnStatement returns, for one of the proxy's own statements, the
// SELECT it becomes (see above); sql itself otherwise.
func asOwnStatement(sql string) string {
	switch planner.ShowsPgaccel(sql) {
	case planner.ShowNone:
	case planner.ShowLastRoute:
		return lastRouteSQL
	case planner.ShowStatements:
		return statementsSQL
	case planner.ShowStats:
		return statsSQL
	case planner.ShowDatasets:
		return datasetsSQL
	case planner.ShowAdvice:
		return adviceSQL
	}
	if inner, ok := planner.ExplainPgaccel(sql); ok {
		return explainPrefix + quoteLiteral(inner) + explainSuffix
	}
	return sql
}

// ownKind reports which own statement sql (as asOwnStatement made it)
// is; ShowNone for any other text. It compares lengths first: every
// statement is checked.
func ownKind(sql string) planner.PgaccelShow {
	switch {
	case len(sql) < len(lastRouteSQL):
		return planner.ShowNone
	case sql == lastRouteSQL:
		return planner.ShowLastRoute
	case sql == statementsSQL:
		return planner.ShowStatements
	case sql == statsSQL:
		return planner.ShowStats
	case sql == datasetsSQL:
		return planner.ShowDatasets
	case sql == adviceSQL:
		return planner.ShowAdvice
	case strings.HasPrefix(sql, explainPrefix) && strings.HasSuffix(sql, explainSuffix):
		return showExplain
	}
	return planner.ShowNone
}

// showExplain is EXPLAIN (pgaccel) among ownKind's answers.
const showExplain = planner.ShowAdvice + 1

// ownDecision is the DuckDB answer of the own statement sql of kind k.
func (ss *session) ownDecision(ctx context.Context, sql string, k planner.PgaccelShow) planner.Decision {
	var cols []ownCol
	var rows [][]any
	switch k {
	case planner.ShowLastRoute:
		return ss.lastRouteDecision()
	case planner.ShowStatements:
		cols, rows = statementsCols, ss.statementRows()
	case planner.ShowStats:
		cols, rows = statsCols, ss.statsRows()
	case planner.ShowDatasets:
		cols, rows = datasetsCols, ss.datasetRows()
	case planner.ShowAdvice:
		cols, rows = adviceCols, ss.adviceRows()
	case showExplain:
		lit := strings.TrimSuffix(strings.TrimPrefix(sql, explainPrefix), explainSuffix)
		inner := strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(lit, "'"), "'"), "''", "'")
		cols, rows = explainCols, ss.explainRows(ctx, inner)
	}
	return planner.Decision{Route: planner.RouteAccelerate, Kind: planner.KindShow, SQL: duckValues(cols, rows)}
}

// seesAll reports whether the session may see every role's statements.
func (ss *session) seesAll() bool { return ss.state.Param("is_superuser") == "on" }

func (ss *session) statsFilter() stmtstats.Filter {
	if ss.seesAll() {
		return stmtstats.Filter{}
	}
	return stmtstats.Filter{Role: ss.state.User}
}

func (ss *session) statementRows() [][]any {
	var rows [][]any
	for _, st := range ss.stats().Snapshot(ss.statsFilter()) {
		for _, r := range st.Routes {
			rows = append(rows, []any{st.Fingerprint, st.Role, st.Database, r.Route, int64(r.Calls), int64(r.Rows),
				r.TotalMS, r.MeanMS, r.P50MS, r.P95MS, r.P99MS, r.MaxMS, st.OriginMS, st.Reason, st.Rule,
				strings.Join(st.Datasets, ","), st.Text})
		}
	}
	return rows
}

func (ss *session) statsRows() [][]any {
	var rows [][]any
	for _, t := range ss.stats().Totals(ss.statsFilter()) {
		rows = append(rows, []any{t.Database, t.Role, t.Route, int64(t.Entries), int64(t.Calls), int64(t.Rows),
			t.TotalMS, t.MeanMS, t.Reset})
	}
	return rows
}

func (ss *session) datasetRows() [][]any {
	reg := ss.accel.Registry
	if reg == nil {
		return nil
	}
	now := time.Now()
	var rows [][]any
	for _, st := range reg.States() {
		ds, ok := reg.Dataset(st.Name)
		if !ok {
			continue
		}
		var bytes any
		if s, ok := reg.StorageStatus(st.Name); ok {
			bytes = s.FileBytes
		}
		var age any
		if a, ok := st.ServedAge(ds, now); ok {
			age = a.Seconds()
		}
		var last any
		if !st.LastRefresh.IsZero() {
			last = st.LastRefresh.UTC().Format(time.RFC3339)
		}
		var errText any
		if st.Error != "" {
			errText = st.Error
		}
		rows = append(rows, []any{st.Name, ds.Schema + "." + ds.Table, ds.Acceleration.RefreshMode, st.Status.Display(),
			st.Rows, bytes, age, last, errText})
	}
	return rows
}

func (ss *session) adviceRows() [][]any {
	a := stmtstats.Advise(ss.stats().Snapshot(ss.statsFilter()), ss.adviceInput())
	var rows [][]any
	for _, t := range a.Tables {
		change := "add a dataset:\n" + t.Config
		if len(t.With) > 0 {
			change += "(its statements also read " + strings.Join(t.With, ", ") + ", which must be datasets too)"
		}
		rows = append(rows, []any{"dataset", t.Table, t.OriginMS, int64(t.Calls), int64(t.Statements), change, t.Top})
	}
	for _, c := range a.Changes {
		change := c.Change
		if c.Rule != "" {
			change += " (rule: " + c.Rule + ")"
		}
		rows = append(rows, []any{"change:" + c.Reason, c.Dataset, c.OriginMS, int64(c.Calls), int64(c.Statements), change, c.Top})
	}
	return rows
}

// adviceInput is what the advisor knows of the datasets.
func (ss *session) adviceInput() stmtstats.AdviceInput { return stmtstats.InputFrom(ss.accel.Registry) }

// explainRows is the dry run of inner: how the session would route it
// now, why, and what would change that.
func (ss *session) explainRows(ctx context.Context, inner string) [][]any {
	d := ss.routeOverride(ss.planFresh(ctx, inner, false))
	route := "accelerated"
	if d.Route != planner.RouteAccelerate {
		route = "origin"
	}
	advice := ""
	if d.Route == planner.RouteAccelerate {
		d2, ok := ss.prepareLocal(ctx, d, false)
		if !ok {
			route, d = "origin", d2
		} else if d.Caching {
			route = "origin (results cache: refresh_mode caching)"
		}
	}
	if route == "origin" {
		desc := planner.DescribeStatement(inner)
		missing := ss.adviceInput().MissingTables(desc.Tables)
		switch {
		case !desc.Read:
			advice = "not a read: statements that write, lock or change the session always go to the origin"
		case len(missing) > 0:
			advice = "add " + strings.Join(missing, ", ") + " as dataset(s): every table a read names must be a dataset"
		default:
			advice = stmtstats.ChangeFor(d.Reason)
		}
	}
	var reason, rule any
	if d.Reason != "" {
		reason = d.Reason
	}
	if d.Detail != "" {
		rule = d.Detail
	}
	var adv any
	if advice != "" {
		adv = advice
	}
	return [][]any{{route, strings.Join(d.Datasets, ","), reason, rule, adv}}
}

// duckValues is the DuckDB SELECT of rows under cols.
func duckValues(cols []ownCol, rows [][]any) string {
	duckType := func(t string) string {
		switch t {
		case "bigint":
			return "BIGINT"
		case "float8":
			return "DOUBLE"
		}
		return "VARCHAR"
	}
	var b strings.Builder
	if len(rows) == 0 {
		b.WriteString("SELECT ")
		for i, c := range cols {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("CAST(NULL AS " + duckType(c.typ) + ") AS " + quoteIdent(c.name))
		}
		b.WriteString(" WHERE false")
		return b.String()
	}
	b.WriteString("SELECT * FROM (VALUES ")
	for i, r := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for j, v := range r {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("CAST(")
			switch x := v.(type) {
			case nil:
				b.WriteString("NULL")
			case string:
				b.WriteString(quoteLiteral(x))
			case int64:
				b.WriteString(strconv.FormatInt(x, 10))
			case float64:
				b.WriteString(strconv.FormatFloat(x, 'f', 3, 64))
			default:
				b.WriteString("NULL")
			}
			b.WriteString(" AS " + duckType(cols[j].typ) + ")")
		}
		b.WriteByte(')')
	}
	b.WriteString(") AS t(")
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(c.name))
	}
	b.WriteString(")")
	return b.String()
}
