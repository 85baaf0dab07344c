// Package admin serves pgaccel's HTTP admin port (admin.listen):
//
//	GET    /health                                   200 "ok" while the process runs
//	GET    /v1/ready                                 200 "ready" or 503 "not ready" (runtime.ready_state, runtime.ready_requires_fresh; ?login=true: and a new session can log in)
//	GET    /v1/datasets                              the datasets; ?status=true adds status, refreshes,
//	                                                 error, rows and a running refresh's progress
//	POST   /v1/datasets/{name}/acceleration/refresh  start an on-demand refresh (201); the body may be
//	                                                 {"refresh_mode": "full"} for a full reload
//	PATCH  /v1/datasets/{name}/acceleration          {"refresh_sql": "..."}: replace refresh_sql until restart
//	GET    /v1/replication/slots                     the origin's replication slots named like pgaccel's
//	DELETE /v1/replication/slots/{name}              drop one no dataset uses
//	GET    /v1/memory                                accounted memory (MemoryStatus): DuckDB's, the point
//	                                                 indexes', the results cache's, with their limits
//	GET    /metrics                                  Prometheus metrics, from a private registry
//	GET    /                                         the status page (page.go; page/ embedded)
//	GET    /v1/statements, /v1/stats, /v1/advice     the statement statistics and the advisor (statements.go)
//	DELETE /v1/statements                            reset them
//	POST   /v1/reload                                reload the config file's datasets (Options.Reload)
//
// With admin.token set, every endpoint but /health, /v1/ready and the
// page's stylesheet requires "Authorization: Bearer <token>" (the page
// also takes the token as a basic-auth password, which a browser asks
// for). The refresh and slot endpoints go
// through a Refresher (refresh.Runner). NewStatusCollector exports each
// dataset's status as dataset_acceleration_status.
//
// admin may import catalog, refresh, stmtstats and pgdef only; it must
// never import proxy.
package admin
