// Package gen generates random read statements for differential tests:
// typed expressions, built recursively from a catalogue of the operators,
// functions, casts, aggregates and window functions the planner lets
// through (catalog.go), over the gen_* tables (schema.go), whose columns
// hold edge values, NULLs and ties in every type an acceleration holds.
//
// Every statement is a function of a seed and an index (Generator.Query):
// query i of seed s is the same whatever was generated before it, so one
// failing query reproduces on its own. Each comes with the session
// settings to run it under (settings.go) and whether its rows have a total
// order (Query.Ordered).
//
// Compare (compare.go) decides whether two results are the same: columns,
// command tag, the error's SQLSTATE and message, and the rows byte for
// byte, in order when the statement orders by every output column and as
// a multiset otherwise. Rows that Postgres itself may return either way
// (tied values that print differently, such as -0 and 0) are a tie, not a
// difference.
//
// gen talks to no database: integration/generator_test.go runs what it
// generates against the origin and through pgaccel. It imports only the
// standard library (and pg_query in its tests).
package gen
