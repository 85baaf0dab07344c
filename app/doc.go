// Package app wires pgaccel's components into a running process: the
// dataset registry, the DuckDB engine, the refresh runner, the planner with
// its origin catalog lookups, the proxy and the admin port. cmd/pgaccel and
// the integration tests start pgaccel through it, so both run the same
// wiring.
//
// app may import every pgaccel package except integration; only cmd/pgaccel
// and tests import it.
package app
