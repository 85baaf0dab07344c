// Package importrules holds the test that keeps pgaccel's packages to the
// import rules of ARCHITECTURE.md and PROXY-REDESIGN.md: which of our
// packages each may import. It has no code of its own.
package importrules
