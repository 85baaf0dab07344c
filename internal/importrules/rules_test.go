package importrules

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/pgaccel/pgaccel/"

// rules: which of our packages (module-relative) each of ours may import
// in its code. A package not listed fails the test: a new package gets a
// rule when it is added. "*" is everything.
var rules = map[string][]string{
	"pgdef":              {},
	"catalog":            {"pgdef"},
	"auth":               {"pgdef"},
	"accelerator":        {"catalog", "pgdef"},
	"planner":            {"catalog", "pgdef"},
	"planner/origintest": {"catalog", "planner", "pgdef"},
	"snapshot":           {"catalog", "accelerator", "pgdef"},
	"refresh":            {"catalog", "accelerator", "snapshot", "pgdef"},
	"stmtstats":          {"catalog"},
	"proxy/encode":       {"pgdef"},
	"proxy/resultcache":  {"catalog", "pgdef"}, // catalog.CachingStatus
	"proxy/wire":         {},
	"proxy/originlink":   {"auth", "pgdef", "proxy/wire"},
	"proxy": {"catalog", "planner", "accelerator", "auth", "pgdef",
		"proxy/wire", "proxy/originlink", "proxy/resultcache", "proxy/encode", "stmtstats"},
	"admin":                {"catalog", "refresh", "pgdef", "stmtstats"},
	"app":                  {"*"}, // but integration and bench: see never
	"cmd/pgaccel":          {"app", "admin", "auth", "catalog", "refresh", "pgdef", "internal/pgtest", "stmtstats"},
	"internal/pgtest":      {},
	"internal/importrules": {},
}

// never: what nothing outside these trees imports (tests included).
var never = []string{"integration", "bench"}

// testHarnesses are what any package's tests may import besides its rule:
// the throwaway Postgres, S3 server and TCP relay the tests start.
var testHarnesses = []string{"internal/pgtest", "integration/s3test", "integration/tcprelay"}

// free are the trees that may import anything of ours.
var free = []string{"integration", "bench"}

type listed struct {
	ImportPath                         string
	Imports, TestImports, XTestImports []string
}

// TestImportRules fails on any import of one of our packages by another
// that its rule does not allow.
func TestImportRules(t *testing.T) {
	cmd := exec.Command("go", "list", "-json", module+"...")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, errb.String())
	}
	dec := json.NewDecoder(&out)
	seen := 0
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		seen++
		name := strings.TrimPrefix(p.ImportPath, module)
		for _, v := range Violations(name, p.Imports, p.TestImports, p.XTestImports) {
			t.Error(v)
		}
	}
	if seen < 10 {
		t.Fatalf("go list gave %d packages", seen)
	}
}

// Violations lists the imports of package name (its code's, its tests')
// that the rules do not allow.
func Violations(name string, imports, testImports, xtestImports []string) []string {
	if inTree(name, free) {
		return nil
	}
	allowed, ok := rules[name]
	if !ok {
		return []string{name + ": a package without an import rule; add it to rules in internal/importrules"}
	}
	var out []string
	check := func(imps []string, test bool) {
		for _, imp := range ours(imps) {
			switch {
			case imp == name:
			case inTree(imp, never):
				if !(test && slices.Contains(testHarnesses, imp)) {
					out = append(out, name+" imports "+imp+", which nothing outside integration and bench may import")
				}
			case slices.Contains(allowed, "*") || slices.Contains(allowed, imp):
			case test && slices.Contains(testHarnesses, imp):
			default:
				what := "imports"
				if test {
					what = "'s tests import"
				}
				out = append(out, name+" "+what+" "+imp+"; its rule allows "+strings.Join(allowed, ", "))
			}
		}
	}
	check(imports, false)
	check(append(append([]string(nil), testImports...), xtestImports...), true)
	sort.Strings(out)
	return slices.Compact(out)
}

func ours(imps []string) []string {
	var out []string
	for _, i := range imps {
		if strings.HasPrefix(i, module) {
			out = append(out, strings.TrimPrefix(i, module))
		}
	}
	return out
}

func inTree(name string, trees []string) bool {
	for _, t := range trees {
		if name == t || strings.HasPrefix(name, t+"/") {
			return true
		}
	}
	return false
}

// TestViolations: the rules catch an import outside them, one of a
// package without a rule, and one of integration from outside it.
func TestViolations(t *testing.T) {
	for _, c := range []struct {
		name                 string
		imports, testImports []string
		want                 int
	}{
		{"accelerator", []string{module + "catalog", module + "pgdef"}, []string{module + "internal/pgtest"}, 0},
		{"accelerator", []string{module + "planner"}, nil, 1},
		{"refresh", []string{module + "proxy"}, nil, 1},
		{"cmd/pgaccel", []string{module + "integration/pgtest"}, nil, 1},
		{"proxy", nil, []string{module + "refresh"}, 1},
		{"newpkg", nil, nil, 1},
		{"integration", []string{module + "app", module + "bench/internal"}, nil, 0},
	} {
		if got := Violations(c.name, c.imports, c.testImports, nil); len(got) != c.want {
			t.Errorf("%s importing %v (tests %v): %v, want %d violations", c.name, c.imports, c.testImports, got, c.want)
		}
	}
}
