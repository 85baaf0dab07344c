// Package benchutil holds what the benchmarks under bench/ share: the
// scaffolding of their main (progress lines, starting the origin, the exit
// status, the command line for the report), adding a run's Markdown to a
// section of the results file, the description of the machine a run was
// on, the simple-protocol client the benchmarks check answers with, sums
// of pgaccel's counters by label, and finding pgbench and reading its
// summary.
package benchutil
