package proxy

import (
	"regexp"
	"strings"

	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/proxy/encode"
)

// Seeing and choosing the route (README, "Seeing the route"):
//
//   - SHOW pgaccel.last_route answers how the session's previous statement
//     was routed. The proxy takes it as lastRouteSQL, a SELECT the origin
//     can parse and describe (one text column named pgaccel.last_route),
//     and answers it itself with the route it noted, through the same
//     local path as accelerated reads (so pipelines, portals and formats
//     behave). Where the proxy cannot answer (an aborted transaction), the
//     origin runs it: 25P02 in an aborted transaction, as for SHOW.
//   - SET pgaccel.route = origin | auto is a Postgres placeholder setting
//     of the origin session (SET LOCAL, RESET, rollback and -c at startup
//     behave as Postgres's own); the session info reads it, and reads go
//     to the origin while it is origin.

// lastRouteSQL is the statement SHOW pgaccel.last_route becomes.
const lastRouteSQL = `SELECT pg_catalog.current_setting('pgaccel.last_route', true) AS "pgaccel.last_route"`

var showLastRoute = regexp.MustCompile(`(?is)^\s*show\s+(pgaccel\.last_route|"pgaccel\.last_route")\s*;?\s*$`)

// asShowLastRoute returns lastRouteSQL for SHOW pgaccel.last_route, and
// sql itself otherwise.
func asShowLastRoute(sql string) string {
	if len(sql) < 64 && containsFold(sql, "last_route") && showLastRoute.MatchString(sql) {
		return lastRouteSQL
	}
	return sql
}

// containsFold reports whether s contains sub (lower case ASCII) in any
// case, without allocating (every Parse is checked).
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// Routes shown by SHOW pgaccel.last_route.
const (
	shownAccelerated = "accelerated"
	maxRouteDetail   = 300
)

// noteRoute records the route of the statement just decided, unless it is
// one of the proxy's own (SHOW pgaccel.last_route).
func (ss *session) noteRoute(d planner.Decision, route, reason, detail string) {
	if d.Internal {
		return
	}
	text := route
	if reason != "" {
		text += ": " + reason
	}
	if detail != "" {
		if len(detail) > maxRouteDetail {
			detail = detail[:maxRouteDetail] + "…"
		}
		text += ": " + detail
	}
	ss.lastRoute = text
}

// lastRouteDecision answers SHOW pgaccel.last_route from DuckDB.
func (ss *session) lastRouteDecision() planner.Decision {
	shown := ss.lastRoute
	if shown == "" {
		shown = "none"
	}
	return planner.Decision{Route: planner.RouteAccelerate, Kind: planner.KindShow, Internal: true,
		SQL: "SELECT " + quoteLiteral(shown) + "::VARCHAR AS \"pgaccel.last_route\""}
}

// Values of pgaccel.route.
const (
	routeSettingAuto   = "auto"
	routeSettingOrigin = "origin"
)

// routeOverride is the decision for a read while pgaccel.route is not
// auto, and false when it is auto (or unset).
func (ss *session) routeOverride(d planner.Decision) (planner.Decision, bool) {
	switch v := strings.ToLower(strings.TrimSpace(ss.info.route)); v {
	case "", routeSettingAuto, "default":
		return d, false
	case routeSettingOrigin:
		return planner.Decision{Route: planner.RouteOrigin, Datasets: d.Datasets, Kind: d.Kind, Reason: "route_setting", Detail: "pgaccel.route = origin"}, true
	default:
		return planner.Decision{Route: planner.RouteOrigin, Datasets: d.Datasets, Kind: d.Kind, Reason: "route_setting",
			Detail: "pgaccel.route = " + quoteLiteral(ss.info.route) + " is neither auto nor origin"}, true
	}
}

// quick is the planner's fast path, which the proxy's own statements and
// EXPLAINs skip (they name no dataset, or name it inside).
func (ss *session) quick(sql string) (planner.Decision, bool) {
	if sql == lastRouteSQL || looksLikeExplain(sql) {
		return planner.Decision{}, false
	}
	return ss.accel.Planner.Quick(sql)
}

func looksLikeExplain(sql string) bool {
	t := strings.TrimLeft(sql, " \t\r\n(")
	return len(t) >= 7 && strings.EqualFold(t[:7], "explain")
}

// decideExplain decides an EXPLAIN [ANALYZE] of inner: when the
// acceleration would answer inner, DuckDB's plan (run, with analyze) is
// the answer, under a first line naming the route and the datasets; the
// origin explains anything else.
func (ss *session) decideExplain(inner string, analyze, settle bool) (planner.Decision, *encode.Settings, bool) {
	ctx := ss.srv.baseCtx
	d := ss.planFresh(ctx, inner)
	if od, over := ss.routeOverride(d); over && d.Route == planner.RouteAccelerate {
		d = od
	}
	ok := false
	if d.Route == planner.RouteAccelerate {
		d, ok = ss.prepareLocal(ctx, d, settle)
	}
	if !ok {
		d.Kind = planner.KindExplain
		ss.countOrigin(d)
		return d, nil, false
	}
	s := ss.settings()
	if s == nil {
		ss.countOrigin(planner.Decision{Datasets: d.Datasets, Reason: "session_setting", Kind: planner.KindExplain})
		return d, nil, false
	}
	lines, err := ss.accel.Engine.Explain(ctx, ss.state.Param("TimeZone"), d.SQL, analyze)
	if err != nil {
		ss.fallback(d, err)
		return d, nil, false
	}
	head := "pgaccel: accelerated, from DuckDB: datasets " + strings.Join(d.Datasets, ", ")
	if analyze {
		head += " (EXPLAIN ANALYZE ran the statement on DuckDB)"
	}
	lits := make([]string, 0, len(lines)+1)
	lits = append(lits, quoteLiteral(head))
	for _, l := range lines {
		lits = append(lits, quoteLiteral(l))
	}
	d.SQL = "SELECT unnest([" + strings.Join(lits, ", ") + "]::VARCHAR[]) AS \"QUERY PLAN\""
	d.Kind, d.FallbackSQL, d.OriginSQL, d.NumericText = planner.KindExplain, "", "", nil
	return d, s, true
}
