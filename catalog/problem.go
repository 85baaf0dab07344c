package catalog

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Problem is one thing wrong with a config file.
type Problem struct {
	Line    int    // 1-based line in the file, 0 when unknown
	Dataset string // dataset name, "" for settings outside datasets or an unnamed dataset
	Key     string // the key at fault, relative to the dataset when Dataset is set, e.g. "acceleration.refresh_cron"
	Message string // what is wrong
	Fix     string // how to fix it, "" when obvious from Message
}

// Error formats the problem without a file name:
// `line 12: dataset "orders": acceleration.refresh_cron: cannot be combined
// with refresh_check_interval; remove one of them`.
func (p Problem) Error() string {
	if p.Line > 0 {
		return "line " + strconv.Itoa(p.Line) + ": " + p.text()
	}
	return p.text()
}

// Format formats the problem as `file:line: dataset "name": key: message; fix`.
func (p Problem) Format(file string) string {
	var b strings.Builder
	b.WriteString(file)
	if p.Line > 0 {
		b.WriteString(":")
		b.WriteString(strconv.Itoa(p.Line))
	}
	b.WriteString(": ")
	b.WriteString(p.text())
	return b.String()
}

// text is the problem after its position.
func (p Problem) text() string {
	var b strings.Builder
	if p.Dataset != "" {
		b.WriteString("dataset ")
		b.WriteString(strconv.Quote(p.Dataset))
		b.WriteString(": ")
	}
	if p.Key != "" {
		b.WriteString(p.Key)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	if p.Fix != "" {
		b.WriteString("; ")
		b.WriteString(p.Fix)
	}
	return b.String()
}

// ValidationError lists every problem of a config file, sorted by line.
type ValidationError struct {
	File     string
	Problems []Problem
}

// Error returns the problems one per line, each as Problem.Format.
func (e *ValidationError) Error() string {
	file := e.File
	if file == "" {
		file = "config"
	}
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.Format(file)
	}
	return strings.Join(lines, "\n")
}

// newValidationError sorts problems by line (keeping the order of problems
// on the same line) and wraps them.
func newValidationError(file string, problems []Problem) *ValidationError {
	sorted := slices.Clone(problems)
	slices.SortStableFunc(sorted, func(a, b Problem) int { return cmp.Compare(a.Line, b.Line) })
	return &ValidationError{File: file, Problems: sorted}
}
