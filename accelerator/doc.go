// Package accelerator owns the embedded DuckDB engine: per-dataset tables or
// files, bulk loads from the origin, atomic swaps, and queries that return
// columnar batches for the proxy to encode as Postgres results.
//
// accelerator may import catalog only; it must never import proxy, planner or
// refresh.
package accelerator
