// Package resultcache is the proxy's results cache (runtime.results_cache):
// accelerated answers kept as the bytes the client received, each with the
// data generations of the datasets it read, and the origin answers of
// refresh_mode: caching datasets with their freshness windows (fresh,
// stale-while-revalidate, stale-if-error) and one origin request per key
// at a time. Cache is safe for concurrent use by every session.
//
// The proxy decides what is cacheable and builds the keys (proxy's
// resultcache.go: the statement, its parameters, formats and the settings
// that shape the bytes); this package keeps, finds, ages and drops the
// answers, and exports its Prometheus metrics.
//
// Imports of ours: catalog (a caching dataset's status), pgdef. Never the
// proxy, the planner, the accelerator or refresh (internal/importrules).
package resultcache
