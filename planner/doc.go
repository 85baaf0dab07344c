// Package planner decides where a statement runs.
//
// It parses SQL with pg_query, classifies statements (read, write, DDL,
// transaction control, session settings, catalog queries), resolves table
// references against the accelerated datasets, and returns a route: the
// origin, the acceleration (with the rewritten SQL), or a fallback.
//
// planner may import catalog only; it must never import proxy, refresh or
// accelerator.
package planner
