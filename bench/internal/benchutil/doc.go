// Package benchutil holds what the benchmarks under bench/ share: adding a
// run's Markdown to a section of the results file, the description of the
// machine a run was on, and the simple-protocol client the benchmarks check
// answers with.
package benchutil
