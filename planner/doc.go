// Package planner decides where a statement runs.
//
// It parses SQL with pg_query, classifies statements (read, write, DDL,
// transaction control, session settings, cursors, catalog queries),
// resolves table references against the accelerated datasets as Postgres
// would, and returns a route: the origin (with a short reason for metrics),
// or the acceleration with the statement rewritten for DuckDB.
//
// # How Plan decides
//
//  0. The fast path (fastpath.go): a single SELECT that names no dataset and
//     cannot write, or a single INSERT/UPDATE/DELETE, goes to the origin
//     after a scan of its tokens, without a parse.
//  1. Session-independent analysis, cached per statement text in a bounded
//     LRU (cache.go): parse, fingerprint, statement kind (classify.go), and
//     for a read, one walk of the parse tree (walk.go, relations.go) that
//     collects the relations (minus CTE names in scope), the columns named,
//     stars, and everything that sends a read to the origin whatever the
//     session: locking clauses, data-modifying CTEs, SELECT INTO, catalog
//     schemas, reg* types, and functions or operators with side effects or
//     session dependence, or that DuckDB answers differently without an
//     error (functions.go).
//  2. Session-dependent checks, every call: Session.TxWrote, the fallback
//     memory (RememberFallback: fingerprints DuckDB failed on, forgotten
//     when a dataset they read changes generation), resolution of each relation through the
//     session's temporary tables and search path (Resolver, with its own
//     cache), the dataset's readiness (catalog.DatasetState.Servable), the
//     columns the acceleration holds, and optionally the role's privileges.
//  3. The rewrite (rewrite.go): dataset tables become their DuckDB tables,
//     with Postgres' NULL ordering and LIKE escaping made explicit; exact
//     numerics where DuckDB's differ: avg as a whole output column
//     (exactavg.go) or inside predicates (predavg.go), display scales that
//     vary row by row and numeric division as a whole output column
//     (scaletrack.go: the candidates; scaleexpr.go: the rules per
//     expression; scalesubquery.go: scales out of subqueries and CTEs;
//     scaleplan.go: the plan and the rewrite; also over windows, and
//     round(avg(x), k));
//     Postgres's text of values (textout.go: pgaccel_text, to_char,
//     to_timestamp of literals), ASCII case mapping under the C LC_CTYPE
//     (collation.go), json operators (jsonops.go), and functions whose
//     DuckDB namesakes differ by argument type (totimestamp.go); names
//     that are subquery or CTE outputs are followed to what they hold
//     (aliases.go). The result is cached per statement and resolution.
//  4. For datasets with on_zero_results: use_source, the statement the
//     origin runs when the accelerated answer is empty (fallback.go).
//
// OriginResolver (resolver.go) and Privileges (privileges.go) ask the origin,
// as the refresh account, what it would resolve and allow; both cache their
// answers for a few seconds. Their tests against a real Postgres are in
// planner/origintest.
//
// Everything the planner cannot prove safe goes to the origin: a wrong
// answer from the acceleration is worse than a slower one from the origin.
//
// planner may import catalog only; it must never import proxy, refresh or
// accelerator.
package planner
