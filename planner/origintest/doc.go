// Package origintest tests the planner's questions to the origin
// (planner.OriginResolver and planner.Privileges) against a real PostgreSQL
// started by internal/pgtest. It holds only tests; it lives apart from
// package planner so that the planner's unit tests, benchmarks and fuzz
// target run without a server.
package origintest
