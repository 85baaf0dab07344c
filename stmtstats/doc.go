// Package stmtstats keeps pgaccel's statement statistics: per statement
// fingerprint, login role and database, the calls, rows and time (total,
// p50, p95, p99, max) of each route a call took (accelerated, cache hit,
// point index, fallback, origin), the origin time the statement cost, and
// why its last call that went to the origin went there (the planner's
// reason and rule). It also keeps a per-minute timeline of the last hour
// by route, for the status page.
//
// Bounded: at most Options.Max entries; when full, the tenth with the
// fewest calls is dropped and its counts kept in its scope's totals.
// Never a value: the statement's text is kept only until the background
// describer has normalised it (every constant replaced by $n, through
// Options.Describe: pg_query's normaliser) and named its tables; only
// the normalised text is ever shown. Recording a call is a few atomic
// adds on the statement's entry, which the proxy's session keeps beside
// its memo of the statement.
//
// The proxy records (proxy/stats.go); the admin port, the status page and
// SHOW pgaccel.statements read; the advisor (advise.go) ranks the origin
// tables whose reads cost the origin the most time.
//
// stmtstats imports none of pgaccel's packages.
package stmtstats
