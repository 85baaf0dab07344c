package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/pgaccel/pgaccel/catalog"
)

// The configs the compose files mount are valid, with the environment the
// compose files give them.
func TestDeployConfigsAreValid(t *testing.T) {
	t.Setenv("POSTGRES_PASSWORD", "pgaccel")
	t.Setenv("S3_KEY", "pgaccel")
	t.Setenv("S3_SECRET", "pgaccel-secret-key")
	for _, p := range []string{"pgaccel.compose.yaml", "scaleout/writer.yaml", "scaleout/reader.yaml"} {
		cfg, err := catalog.Load(filepath.Join("..", "..", "deploy", p))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if p != "pgaccel.compose.yaml" && (cfg.Snapshots == nil || !cfg.Snapshots.Enabled || len(cfg.Datasets) != 2) {
			t.Errorf("%s: snapshots %+v, %d datasets", p, cfg.Snapshots, len(cfg.Datasets))
		}
	}
}

// metricNameRE matches the metric names the deploy files
// PromQL is checked for: pgaccel's own series (pgaccel_, dataset_) and the
// Go and process collectors' (go_, process_).
var metricNameRE = regexp.MustCompile(`\b(?:pgaccel|dataset|go|process)_[a-z0-9_]+\b`)

// promMetric is a metric as declared in pgaccel's source.
type promMetric struct {
	kind   string   // counter, gauge, histogram, summary, untyped; "" for a prometheus.NewDesc (used for any kind)
	labels []string // variable label names
}

// pgaccelSource is what the deploy tests read from the Go source the
// pgaccel binary is built from: the non-test files of the packages of this
// module that cmd/pgaccel imports, directly or not.
type pgaccelSource struct {
	files   int
	metrics map[string]*promMetric
	// goCollector, processCollector: the Go and process collectors are
	// registered (collectors.NewGoCollector, NewProcessCollector).
	goCollector, processCollector bool
	// hangups: a signal.Notify or NotifyContext names SIGHUP, so SIGHUP
	// does not end the process.
	hangups bool
	// notify: it can tell systemd it is ready (NOTIFY_SOCKET, go-systemd).
	notify bool
}

func loadPgaccelSource(t *testing.T) *pgaccelSource {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("go.mod names no module")
	}
	module := string(m[1])

	src := &pgaccelSource{metrics: map[string]*promMetric{}}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	var visit func(importPath string)
	visit = func(importPath string) {
		if seen[importPath] {
			return
		}
		seen[importPath] = true
		dir := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(importPath, module), "/")))
		pkg, err := build.Default.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", importPath, err)
		}
		for _, name := range append(pkg.GoFiles, pkg.CgoFiles...) {
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			src.files++
			src.inspect(f)
		}
		for _, imp := range pkg.Imports {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				visit(imp)
			}
		}
	}
	visit(module + "/cmd/pgaccel")
	if src.files == 0 || len(src.metrics) == 0 {
		t.Fatalf("read %d files and found %d metrics: the source walk is broken", src.files, len(src.metrics))
	}

	// The collectors' series are known by gathering them.
	reg := prometheus.NewRegistry()
	if src.goCollector {
		reg.MustRegister(collectors.NewGoCollector())
	}
	if src.processCollector {
		reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	families, err := reg.Gather()
	if err != nil {
		t.Logf("gathering the Go and process collectors: %v", err)
	}
	for _, mf := range families {
		pm := &promMetric{kind: strings.ToLower(mf.GetType().String())}
		for _, mt := range mf.GetMetric() {
			for _, lp := range mt.GetLabel() {
				if !slices.Contains(pm.labels, lp.GetName()) {
					pm.labels = append(pm.labels, lp.GetName())
				}
			}
		}
		src.metrics[mf.GetName()] = pm
	}
	return src
}

// inspect records the metrics, collectors and signals one file declares.
func (s *pgaccelSource) inspect(f *ast.File) {
	imports := map[string]string{} // local name -> import path
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imports[name] = p
		if strings.HasPrefix(p, "github.com/coreos/go-systemd/") {
			s.notify = true
		}
	}
	pkgFunc := func(e ast.Expr) (pkg, fn string) {
		if sel, ok := e.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok {
				return imports[x.Name], sel.Sel.Name
			}
		}
		return "", ""
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && strings.Contains(lit.Value, "NOTIFY_SOCKET") {
			s.notify = true
		}
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		pkg, fn := pkgFunc(call.Fun)
		switch pkg {
		case "github.com/prometheus/client_golang/prometheus":
			kind, vec := "", false
			switch fn {
			case "NewDesc":
				if len(call.Args) >= 3 {
					if name, ok := stringLit(call.Args[0]); ok {
						s.declare(name, "", stringSlice(call.Args[2]))
					}
				}
				return true
			case "NewCounter", "NewCounterFunc":
				kind = "counter"
			case "NewGauge", "NewGaugeFunc":
				kind = "gauge"
			case "NewHistogram":
				kind = "histogram"
			case "NewSummary":
				kind = "summary"
			case "NewUntypedFunc":
				kind = "untyped"
			case "NewCounterVec":
				kind, vec = "counter", true
			case "NewGaugeVec":
				kind, vec = "gauge", true
			case "NewHistogramVec":
				kind, vec = "histogram", true
			case "NewSummaryVec":
				kind, vec = "summary", true
			default:
				return true
			}
			if len(call.Args) == 0 {
				return true
			}
			name, ok := optsName(call.Args[0])
			if !ok {
				return true
			}
			var labels []string
			if vec && len(call.Args) >= 2 {
				labels = stringSlice(call.Args[1])
			}
			s.declare(name, kind, labels)
		case "github.com/prometheus/client_golang/prometheus/collectors":
			switch fn {
			case "NewGoCollector":
				s.goCollector = true
			case "NewProcessCollector":
				s.processCollector = true
			}
		case "os/signal":
			if fn == "Notify" || fn == "NotifyContext" {
				for _, a := range call.Args {
					if p, name := pkgFunc(a); name == "SIGHUP" && (p == "syscall" || p == "golang.org/x/sys/unix") {
						s.hangups = true
					}
				}
			}
		}
		return true
	})
}

func (s *pgaccelSource) declare(name, kind string, labels []string) {
	m := s.metrics[name]
	if m == nil {
		m = &promMetric{kind: kind}
		s.metrics[name] = m
	}
	for _, l := range labels {
		if !slices.Contains(m.labels, l) {
			m.labels = append(m.labels, l)
		}
	}
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// stringSlice is the strings of a []string{...} literal (nil for anything else).
func stringSlice(e ast.Expr) []string {
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil
	}
	var out []string
	for _, el := range cl.Elts {
		if s, ok := stringLit(el); ok {
			out = append(out, s)
		}
	}
	return out
}

// optsName is the full name of a prometheus.*Opts{...} literal.
func optsName(e ast.Expr) (string, bool) {
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = u.X
	}
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		return "", false
	}
	parts := map[string]string{}
	for _, el := range cl.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		key, ok := kv.Key.(*ast.Ident)
		if !ok {
			continue
		}
		switch key.Name {
		case "Namespace", "Subsystem", "Name":
			v, ok := stringLit(kv.Value)
			if !ok {
				return "", false
			}
			parts[key.Name] = v
		}
	}
	if parts["Name"] == "" {
		return "", false
	}
	return prometheus.BuildFQName(parts["Namespace"], parts["Subsystem"], parts["Name"]), true
}

// series resolves a series name of a PromQL selector to its declared
// metric: the name itself, or a histogram's or summary's _bucket, _sum or
// _count series. It returns the labels a selector of it may use.
func (s *pgaccelSource) series(name string) (labels []string, ok bool) {
	scrape := []string{"instance", "job"} // added by Prometheus
	if m, ok := s.metrics[name]; ok {
		if m.kind == "summary" {
			return slices.Concat(m.labels, scrape, []string{"quantile"}), true
		}
		return slices.Concat(m.labels, scrape), true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, found := strings.CutSuffix(name, suffix)
		if !found {
			continue
		}
		m, ok := s.metrics[base]
		if !ok || (m.kind != "" && m.kind != "histogram" && m.kind != "summary") || (suffix == "_bucket" && m.kind == "summary") {
			continue
		}
		if suffix == "_bucket" {
			return slices.Concat(m.labels, scrape, []string{"le"}), true
		}
		return slices.Concat(m.labels, scrape), true
	}
	return nil, false
}

var (
	promStringRE    = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promSelectorRE  = regexp.MustCompile(`\b((?:pgaccel|dataset|go|process)_[a-z0-9_]+)\s*\{([^}]*)\}`)
	promMatcherRE   = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)`)
	promGroupingRE  = regexp.MustCompile(`\b(?:by|without|on|ignoring)\s*\(([^)]*)\)`)
	labelValuesRE   = regexp.MustCompile(`label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*(?:\{[^}]*\})?\s*,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)`)
	grafanaVarRefRE = regexp.MustCompile(`\$\{?([A-Za-z0-9_]+)`)
)

// checkPromQL checks that every metric expr reads is declared in pgaccel's
// source, and every label it matches or groups by is one of its metrics'.
func (s *pgaccelSource) checkPromQL(expr string) []string {
	var problems []string
	bare := promStringRE.ReplaceAllString(expr, `""`)
	names := metricNameRE.FindAllString(bare, -1)
	if len(names) == 0 {
		problems = append(problems, "reads no pgaccel_, dataset_, go_ or process_ metric")
	}
	known := []string{"le", "quantile"}
	for _, n := range names {
		labels, ok := s.series(n)
		if !ok {
			problems = append(problems, fmt.Sprintf("metric %s is not declared in pgaccel's source (renamed or removed?)", n))
			continue
		}
		known = append(known, labels...)
	}
	for _, sel := range promSelectorRE.FindAllStringSubmatch(bare, -1) {
		labels, ok := s.series(sel[1])
		if !ok {
			continue
		}
		for _, mt := range promMatcherRE.FindAllStringSubmatch(sel[2], -1) {
			if !slices.Contains(labels, mt[1]) {
				problems = append(problems, fmt.Sprintf("%s has no label %s (it has %s)", sel[1], mt[1], strings.Join(labels, ", ")))
			}
		}
	}
	for _, g := range promGroupingRE.FindAllStringSubmatch(bare, -1) {
		for l := range strings.SplitSeq(g[1], ",") {
			if l = strings.TrimSpace(l); l != "" && !slices.Contains(known, l) {
				problems = append(problems, fmt.Sprintf("groups by %s, a label none of %s has", l, strings.Join(names, ", ")))
			}
		}
	}
	return problems
}

type grafanaDatasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type grafanaPanel struct {
	ID         int                `json:"id"`
	Type       string             `json:"type"`
	Title      string             `json:"title"`
	Datasource *grafanaDatasource `json:"datasource"`
	GridPos    struct {
		X, Y, W, H int
	} `json:"gridPos"`
	Targets []struct {
		Datasource *grafanaDatasource `json:"datasource"`
		Expr       string             `json:"expr"`
		RefID      string             `json:"refId"`
	} `json:"targets"`
	Collapsed bool           `json:"collapsed"`
	Panels    []grafanaPanel `json:"panels"`
}

type grafanaVariable struct {
	Name       string             `json:"name"`
	Type       string             `json:"type"`
	Definition string             `json:"definition"`
	Query      json.RawMessage    `json:"query"`
	Datasource *grafanaDatasource `json:"datasource"`
	Multi      bool               `json:"multi"`
	IncludeAll bool               `json:"includeAll"`
}

// query is the variable's query text (a string, or an object's query).
func (v grafanaVariable) query() string {
	var s string
	if json.Unmarshal(v.Query, &s) == nil {
		return s
	}
	var o struct {
		Query string `json:"query"`
	}
	if json.Unmarshal(v.Query, &o) == nil && o.Query != "" {
		return o.Query
	}
	return v.Definition
}

// The Grafana dashboard imports on any Grafana (its Prometheus data source
// is a variable) and reads only metrics and labels pgaccel declares, so a
// renamed metric or label fails here.
func TestDeployGrafanaDashboard(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "grafana", "pgaccel.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID           string         `json:"uid"`
		Title         string         `json:"title"`
		SchemaVersion int            `json:"schemaVersion"`
		Panels        []grafanaPanel `json:"panels"`
		Templating    struct {
			List []grafanaVariable `json:"list"`
		} `json:"templating"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&d); err != nil {
		t.Fatal(err)
	}
	if d.UID == "" || d.Title == "" || d.SchemaVersion == 0 {
		t.Errorf("uid %q, title %q, schemaVersion %d: want all set", d.UID, d.Title, d.SchemaVersion)
	}
	src := loadPgaccelSource(t)

	// Variables: the data source one, instance and dataset.
	vars := map[string]grafanaVariable{}
	dsVar := ""
	for _, v := range d.Templating.List {
		vars[v.Name] = v
		if v.Type == "datasource" {
			if q := v.query(); q != "prometheus" {
				t.Errorf("variable %s: data source type %q, want prometheus", v.Name, q)
			}
			dsVar = v.Name
		}
	}
	if dsVar == "" {
		t.Fatal("no variable of type datasource: the dashboard would name one Grafana's data source")
	}
	followsVar := func(ds *grafanaDatasource) bool {
		return ds != nil && ds.Type == "prometheus" && (ds.UID == "$"+dsVar || ds.UID == "${"+dsVar+"}")
	}
	for name, want := range map[string]string{"instance": "label_values(pgaccel_client_sessions, instance)", "dataset": "dataset_acceleration_status"} {
		v, ok := vars[name]
		if !ok {
			t.Errorf("no variable %s", name)
			continue
		}
		if !strings.Contains(v.query(), want) {
			t.Errorf("variable %s: query %q, want it to use %s", name, v.query(), want)
		}
	}
	if v := vars["dataset"]; !v.Multi || !v.IncludeAll {
		t.Errorf("variable dataset: multi %v, includeAll %v, want both", v.Multi, v.IncludeAll)
	}
	// checkRefs checks the Grafana variables an expression uses exist.
	checkRefs := func(where, expr string) {
		for _, m := range grafanaVarRefRE.FindAllStringSubmatch(expr, -1) {
			if _, ok := vars[m[1]]; !ok && !strings.HasPrefix(m[1], "__") {
				t.Errorf("%s: uses $%s, which is no variable of the dashboard", where, m[1])
			}
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		where := "variable " + v.Name
		if !followsVar(v.Datasource) {
			t.Errorf("%s: data source %+v, want the %s variable", where, v.Datasource, dsVar)
		}
		q := v.query()
		checkRefs(where, q)
		for _, p := range src.checkPromQL(q) {
			t.Errorf("%s: %s: %s", where, q, p)
		}
		for _, m := range labelValuesRE.FindAllStringSubmatch(q, -1) {
			if labels, ok := src.series(m[1]); ok && !slices.Contains(labels, m[2]) {
				t.Errorf("%s: %s has no label %s", where, m[1], m[2])
			}
		}
	}

	// Panels: ids unique, each reads the data source variable with at least
	// one target, and every target's PromQL names declared metrics.
	ids := map[int]string{}
	exprs := 0
	var checkPanels func([]grafanaPanel)
	checkPanels = func(panels []grafanaPanel) {
		for _, p := range panels {
			where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
			if p.ID <= 0 {
				t.Errorf("%s: id must be positive", where)
			} else if other, dup := ids[p.ID]; dup {
				t.Errorf("%s: id also used by %q", where, other)
			}
			ids[p.ID] = p.Title
			if p.Type == "row" {
				if !p.Collapsed && len(p.Panels) > 0 {
					t.Errorf("%s: an open row holds panels; Grafana expects them after it", where)
				}
				checkPanels(p.Panels)
				continue
			}
			if !followsVar(p.Datasource) {
				t.Errorf("%s: data source %+v, want the %s variable", where, p.Datasource, dsVar)
			}
			if len(p.Targets) == 0 {
				t.Errorf("%s: no targets", where)
			}
			refs := map[string]bool{}
			for _, tg := range p.Targets {
				if tg.Datasource != nil && !followsVar(tg.Datasource) {
					t.Errorf("%s, target %s: data source %+v, want the %s variable", where, tg.RefID, tg.Datasource, dsVar)
				}
				if tg.RefID == "" || refs[tg.RefID] {
					t.Errorf("%s: refId %q empty or repeated", where, tg.RefID)
				}
				refs[tg.RefID] = true
				if strings.TrimSpace(tg.Expr) == "" {
					t.Errorf("%s, target %s: no expr", where, tg.RefID)
					continue
				}
				exprs++
				checkRefs(where, tg.Expr)
				for _, prob := range src.checkPromQL(tg.Expr) {
					t.Errorf("%s, target %s: %s: %s", where, tg.RefID, tg.Expr, prob)
				}
			}
		}
	}
	checkPanels(d.Panels)
	if exprs == 0 {
		t.Error("no PromQL expressions")
	}

	// Layout: each panel within the 24 columns, none overlapping another at
	// the same level (the dashboard, or a collapsed row's panels).
	var checkGrid func(string, []grafanaPanel)
	checkGrid = func(level string, panels []grafanaPanel) {
		for i, p := range panels {
			g := p.GridPos
			if g.W <= 0 || g.H <= 0 || g.X < 0 || g.Y < 0 || g.X+g.W > 24 {
				t.Errorf("%s: panel %d %q: gridPos %+v outside the 24 columns", level, p.ID, p.Title, g)
			}
			if p.Type == "row" && (g.X != 0 || g.W != 24 || g.H != 1) {
				t.Errorf("%s: row %d %q: gridPos %+v, want x 0, w 24, h 1", level, p.ID, p.Title, g)
			}
			for _, q := range panels[:i] {
				h := q.GridPos
				if g.X < h.X+h.W && h.X < g.X+g.W && g.Y < h.Y+h.H && h.Y < g.Y+g.H {
					t.Errorf("%s: panel %d %q %+v overlaps panel %d %q %+v", level, p.ID, p.Title, g, q.ID, q.Title, h)
				}
			}
			if p.Type == "row" && len(p.Panels) > 0 {
				checkGrid(fmt.Sprintf("row %q", p.Title), p.Panels)
			}
		}
	}
	checkGrid("dashboard", d.Panels)
}

// unitFile is a systemd unit: section -> key -> the values assigned, in order.
type unitFile map[string]map[string][]string

func parseUnitFile(t *testing.T, path string) unitFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u := unitFile{}
	section := ""
	var pending string
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if pending != "" {
			line, pending = pending+" "+line, ""
		}
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			pending = strings.TrimSpace(cont)
			continue
		}
		if line[0] == '[' && line[len(line)-1] == ']' {
			section = line[1 : len(line)-1]
			if u[section] == nil {
				u[section] = map[string][]string{}
			}
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || section == "" {
			t.Fatalf("%s:%d: not a key=value in a section: %q", path, i+1, line)
		}
		key = strings.TrimSpace(key)
		u[section][key] = append(u[section][key], strings.TrimSpace(value))
	}
	return u
}

// get is the last value of key in section ("" when unset).
func (u unitFile) get(section, key string) string {
	vs := u[section][key]
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1]
}

var timespanPartRE = regexp.MustCompile(`(\d+)\s*([a-z]*)`)

// parseTimespan parses a systemd time span such as 90, 90s, 1min 30s or 2m.
func parseTimespan(s string) (time.Duration, error) {
	units := map[string]time.Duration{"": time.Second, "s": time.Second, "sec": time.Second, "second": time.Second, "seconds": time.Second,
		"m": time.Minute, "min": time.Minute, "minute": time.Minute, "minutes": time.Minute,
		"h": time.Hour, "hr": time.Hour, "hour": time.Hour, "hours": time.Hour, "ms": time.Millisecond, "msec": time.Millisecond}
	parts := timespanPartRE.FindAllStringSubmatch(s, -1)
	if len(parts) == 0 || strings.TrimSpace(timespanPartRE.ReplaceAllString(s, "")) != "" {
		return 0, fmt.Errorf("not a time span: %q", s)
	}
	var d time.Duration
	for _, p := range parts {
		n, _ := strconv.Atoi(p[1])
		u, ok := units[p[2]]
		if !ok {
			return 0, fmt.Errorf("unknown unit %q in %q", p[2], s)
		}
		d += time.Duration(n) * u
	}
	return d, nil
}

// The systemd unit starts pgaccel with a subcommand and flags pgaccel
// accepts, reloads it with a signal it survives, and gives it time to drain.
func TestDeploySystemdUnit(t *testing.T) {
	path := filepath.Join("..", "..", "deploy", "systemd", "pgaccel.service")
	u := parseUnitFile(t, path)
	src := loadPgaccelSource(t)
	for _, s := range []string{"Unit", "Service", "Install"} {
		if u[s] == nil {
			t.Fatalf("no [%s] section", s)
		}
	}
	if u.get("Unit", "Description") == "" || u.get("Install", "WantedBy") == "" {
		t.Errorf("Description %q, WantedBy %q: want both", u.get("Unit", "Description"), u.get("Install", "WantedBy"))
	}
	switch typ := u.get("Service", "Type"); {
	case typ == "notify" && !src.notify:
		t.Error("Type=notify, but pgaccel does not notify systemd (sd_notify): systemd would time out starting it; use Type=simple")
	case typ != "simple" && typ != "notify" && typ != "exec":
		t.Errorf("Type=%s, want simple", typ)
	}
	if user := u.get("Service", "User"); user == "" || user == "root" || user == "0" {
		t.Errorf("User=%q: want a user of its own", user)
	}

	// ExecStart: the binary, then a subcommand and only flags it takes.
	execs := u["Service"]["ExecStart"]
	if len(execs) != 1 {
		t.Fatalf("ExecStart: %q, want one", execs)
	}
	argv := strings.Fields(strings.TrimLeft(execs[0], "-@:+!"))
	if len(argv) < 2 || !filepath.IsAbs(argv[0]) || filepath.Base(argv[0]) != "pgaccel" || strings.ContainsAny(execs[0], `"'$%`) {
		t.Fatalf("ExecStart=%s: want /absolute/path/pgaccel SUBCOMMAND FLAGS..., without quotes or variables", execs[0])
	}
	args := argv[1:]
	if args[0] != "run" {
		t.Errorf("ExecStart runs pgaccel %s, want pgaccel run", args[0])
	}
	var stdout, stderr bytes.Buffer
	if code := runMain(append(slices.Clone(args), "-h"), &stdout, &stderr); code != 0 {
		t.Fatalf("pgaccel %s -h: exit %d, want 0 (flags pgaccel does not take?):\n%s", strings.Join(args, " "), code, stderr.String())
	}
	// The subcommand's flags, from its usage: "  -c string" takes a value,
	// "  -origin" does not.
	flags := map[string]bool{} // name -> takes a value
	for _, m := range regexp.MustCompile(`(?m)^  -([A-Za-z0-9-]+)(?: (\S+))?$`).FindAllStringSubmatch(stderr.String(), -1) {
		flags[m[1]] = m[2] != ""
	}
	if len(flags) == 0 {
		t.Fatalf("pgaccel %s -h printed no flags:\n%s", args[0], stderr.String())
	}
	seen := map[string]string{}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			t.Errorf("ExecStart: argument %q is not a flag; pgaccel %s takes none", a, args[0])
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takesValue, ok := flags[name]
		if !ok {
			t.Errorf("ExecStart: pgaccel %s has no flag -%s", args[0], name)
			continue
		}
		if takesValue && !hasValue {
			if i+1 >= len(args) {
				t.Errorf("ExecStart: -%s needs a value", name)
				break
			}
			i++
			value = args[i]
		}
		seen[name] = value
	}
	if c, ok := seen["c"]; !ok || !filepath.IsAbs(c) {
		t.Errorf("ExecStart: -c %q, want the config's absolute path (the working directory is the state directory)", c)
	}

	// ExecReload sends SIGHUP, which pgaccel must catch: its default action
	// ends the process.
	reload := u.get("Service", "ExecReload")
	if !strings.Contains(reload, "-HUP") || !strings.Contains(reload, "$MAINPID") {
		t.Errorf("ExecReload=%s, want kill -HUP $MAINPID", reload)
	} else if !src.hangups {
		t.Error("ExecReload sends SIGHUP, but pgaccel does not catch it (signal.Notify with syscall.SIGHUP): a reload would kill it")
	}

	// Stopping: SIGTERM drains for server.shutdown_grace, and cmdRun gives
	// the whole shutdown that plus 10s; systemd must wait longer than that
	// before its SIGKILL.
	if sig := u.get("Service", "KillSignal"); sig != "" && sig != "SIGTERM" && sig != "SIGINT" {
		t.Errorf("KillSignal=%s: pgaccel drains on SIGTERM or SIGINT", sig)
	}
	if stop, err := parseTimespan(u.get("Service", "TimeoutStopSec")); err != nil {
		t.Errorf("TimeoutStopSec: %v", err)
	} else if min := catalog.DefaultShutdownGrace + 10*time.Second; stop <= min {
		t.Errorf("TimeoutStopSec=%v: want more than %v, the longest a default shutdown takes", stop, min)
	}

	// State and sandboxing.
	state := u.get("Service", "StateDirectory")
	if state == "" || u.get("Service", "WorkingDirectory") != "/var/lib/"+state {
		t.Errorf("StateDirectory=%s, WorkingDirectory=%s: want the working directory to be the state directory", state, u.get("Service", "WorkingDirectory"))
	}
	if u.get("Service", "ProtectSystem") == "strict" && !slices.Contains(strings.Fields(strings.Join(u["Service"]["ReadWritePaths"], " ")), "/var/lib/"+state) {
		t.Errorf("ProtectSystem=strict without /var/lib/%s in ReadWritePaths", state)
	}
	if ef := u.get("Service", "EnvironmentFile"); !strings.HasPrefix(ef, "-") {
		t.Errorf("EnvironmentFile=%s: want it optional (a leading -)", ef)
	}
	for key, want := range map[string]string{"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
		"Restart": "on-failure", "LimitNOFILE": "65536", "SystemCallFilter": "@system-service"} {
		if got := u.get("Service", key); got != want {
			t.Errorf("%s=%s, want %s", key, got, want)
		}
	}
	families := strings.Fields(u.get("Service", "RestrictAddressFamilies"))
	for _, f := range []string{"AF_UNIX", "AF_INET", "AF_INET6"} {
		if !slices.Contains(families, f) {
			t.Errorf("RestrictAddressFamilies=%s: want %s", strings.Join(families, " "), f)
		}
	}
}
