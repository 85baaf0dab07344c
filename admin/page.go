package admin

import (
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/stmtstats"
)

// The status page (GET /): the datasets, the routes and latency of the
// last hour as charts, the top statements by origin time and by calls,
// the advisor's list, and the caches' hit rates. It is rendered on the
// server from files embedded in the binary (page/), charts as inline SVG:
// no script, font or request elsewhere, and everything reads without
// JavaScript. It reloads itself every pageRefresh seconds (a meta tag).
//
// Its auth is the admin API's: with admin.token set, a bearer token, or
// the token as the password of HTTP basic auth (any user name), which a
// browser asks for.

//go:embed page/status.html page/status.css
var pageFiles embed.FS

var pageTmpl = template.Must(template.New("status.html").Funcs(template.FuncMap{
	"inc":  func(i int) int { return i + 1 },
	"ms":   func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"join": func(s []string) string { return strings.Join(s, ", ") },
}).ParseFS(pageFiles, "page/status.html"))

// pageRefresh is how often the page reloads itself, in seconds.
const pageRefresh = 15

// pageTop is how many statements each top list shows.
const pageTop = 15

// routeColors are the charts' colours, by stmtstats.Route.
var routeColors = [stmtstats.NumRoutes]string{"#2b6cb0", "#38a169", "#805ad5", "#dd6b20", "#a0aec0"}

type pageData struct {
	Now, Since   string
	Refresh      int
	Datasets     []pageDataset
	Stats        bool
	CallsChart   template.HTML
	TimeChart    template.HTML
	Legend       []pageLegend
	RouteTotals  []pageRouteTotal
	CacheHitRate string
	PointShare   string
	TopOrigin    []pageStatement
	TopCalls     []pageStatement
	Advice       stmtstats.Advice
}

type pageDataset struct {
	Name, Source, Mode, RefreshMode, Status, Class string
	Rows, Bytes, Age, Lag, Progress, Error         string
}

type pageLegend struct{ Route, Color string }

type pageRouteTotal struct {
	Route, Share, Mean string
	Calls              uint64
}

type pageStatement struct {
	Query, Role, Route, Total, Origin, P50, P95, P99, Why string
	Calls, Rows                                           uint64
}

// pageAuth is auth for the page: a bearer token or basic auth whose
// password is the token; without one, a browser is asked for it.
func (s *Server) pageAuth(h http.HandlerFunc) http.HandlerFunc {
	if s.opts.Token == "" {
		return h
	}
	want := []byte(s.opts.Token)
	return func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		var tok []byte
		switch {
		case strings.HasPrefix(got, "Bearer "):
			tok = []byte(strings.TrimPrefix(got, "Bearer "))
		case strings.HasPrefix(got, "Basic "):
			if raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(got, "Basic ")); err == nil {
				if _, pass, ok := strings.Cut(string(raw), ":"); ok {
					tok = []byte(pass)
				}
			}
		}
		if subtle.ConstantTimeCompare(tok, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="pgaccel admin (the password is admin.token)"`)
			http.Error(w, "The admin token is required (admin.token), as a bearer token or as the basic-auth password.", http.StatusUnauthorized)
			return
		}
		h(w, r)
	}
}

func (s *Server) statusCSS(w http.ResponseWriter, _ *http.Request) {
	b, _ := pageFiles.ReadFile("page/status.css")
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "max-age=300")
	_, _ = w.Write(b)
}

func (s *Server) statusPage(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	now := time.Now()
	d := pageData{Now: now.UTC().Format("2006-01-02 15:04:05 UTC"), Refresh: pageRefresh}
	for _, ds := range s.datasetStatuses(true) {
		d.Datasets = append(d.Datasets, s.pageDataset(ds))
	}
	if st := s.opts.Stats; st != nil {
		d.Stats = true
		d.Since = st.Info().Since.UTC().Format("2006-01-02 15:04:05 UTC")
		tl := st.Timeline()
		d.CallsChart, d.TimeChart = lineChart(tl, false), lineChart(tl, true)
		var calls [stmtstats.NumRoutes]uint64
		var msSum [stmtstats.NumRoutes]float64
		var all uint64
		for _, m := range tl {
			for r := range calls {
				calls[r] += m.Calls[r]
				msSum[r] += m.Mean[r] * float64(m.Calls[r])
				all += m.Calls[r]
			}
		}
		for r := stmtstats.Route(0); r < stmtstats.NumRoutes; r++ {
			d.Legend = append(d.Legend, pageLegend{Route: r.String(), Color: routeColors[r]})
			t := pageRouteTotal{Route: r.String(), Calls: calls[r], Share: "–", Mean: "–"}
			if all > 0 {
				t.Share = fmt.Sprintf("%.1f %%", 100*float64(calls[r])/float64(all))
			}
			if calls[r] > 0 {
				t.Mean = fmt.Sprintf("%.2f", msSum[r]/float64(calls[r]))
			}
			d.RouteTotals = append(d.RouteTotals, t)
		}
		d.TopOrigin = pageStatements(st.Snapshot(stmtstats.Filter{Sort: "origin_time", Limit: pageTop}), true)
		d.TopCalls = pageStatements(st.Snapshot(stmtstats.Filter{Sort: "calls", Limit: pageTop}), false)
		d.Advice = s.adviceNow()
	}
	d.CacheHitRate = rate(s.counterSum("pgaccel_results_cache_hits_total"), s.counterSum("pgaccel_results_cache_misses_total"))
	var hits, misses float64
	for _, name := range s.reg.Names() {
		if ps, ok := s.reg.PointIndexStatus(name); ok {
			hits, misses = hits+float64(ps.Hits), misses+float64(ps.Misses)
		}
	}
	d.PointShare = rate(hits, misses)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self' data:")
	if err := pageTmpl.Execute(w, d); err != nil {
		s.log.Warn().Err(err).Msg("status page")
	}
}

func rate(hits, misses float64) string {
	if hits+misses == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f %% (%.0f of %.0f)", 100*hits/(hits+misses), hits, hits+misses)
}

// counterSum sums a counter's series in the process's registry.
func (s *Server) counterSum(name string) float64 {
	mfs, err := s.metrics.Gather()
	if err != nil {
		return 0
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += counterValue(m)
		}
	}
	return sum
}

func counterValue(m *dto.Metric) float64 {
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	if g := m.GetGauge(); g != nil {
		return g.GetValue()
	}
	return 0
}

func (s *Server) pageDataset(ds DatasetStatus) pageDataset {
	p := pageDataset{Name: ds.Name, Source: strings.TrimPrefix(ds.From, "postgres:"), RefreshMode: ds.RefreshMode, Status: ds.Status, Error: ds.Error,
		Rows: "–", Bytes: "–", Age: "–", Lag: "–"}
	if d, ok := s.reg.Dataset(ds.Name); ok {
		p.Mode = d.Acceleration.Mode
		if !d.Acceleration.Enabled {
			p.Mode, p.RefreshMode = "not accelerated", "–"
		}
	}
	switch ds.Status {
	case catalog.StatusReady.Display():
		p.Class = "ready"
	case catalog.StatusError.Display():
		p.Class = "error"
	default:
		p.Class = "busy"
	}
	if ds.Rows != nil {
		p.Rows = fmt.Sprint(*ds.Rows)
	}
	if ds.Storage != nil && ds.Storage.FileBytes > 0 {
		p.Bytes = bytesText(ds.Storage.FileBytes)
	}
	if ds.DataAgeSeconds != nil {
		p.Age = durationText(*ds.DataAgeSeconds)
		if ds.Stale {
			p.Age += " (stale)"
		}
	}
	if rp := ds.Replication; rp != nil {
		p.Lag = fmt.Sprintf("%s, %s", durationText(float64(rp.LagMs)/1000), bytesText(rp.LagBytes))
	}
	if rs := ds.RefreshStatus; rs != nil {
		p.Progress = fmt.Sprintf("%d rows", rs.RowsLoaded)
		if rs.RowsEstimated != nil && *rs.RowsEstimated > 0 {
			p.Progress += fmt.Sprintf(" of about %d (%.0f %%)", *rs.RowsEstimated, math.Min(100, 100*float64(rs.RowsLoaded)/float64(*rs.RowsEstimated)))
		}
	}
	return p
}

func pageStatements(stats []stmtstats.Stat, originOnly bool) []pageStatement {
	var out []pageStatement
	for _, st := range stats {
		if originOnly && st.OriginMS <= 0 {
			continue
		}
		p := pageStatement{Query: st.Text, Role: st.Role, Route: st.Route, Calls: st.Calls, Rows: st.Rows,
			Total: fmt.Sprintf("%.1f", st.TotalMS), Origin: fmt.Sprintf("%.1f", st.OriginMS)}
		if p.Query == "" {
			p.Query = "(being described)"
		}
		// The quantiles of the route most calls took.
		for _, r := range st.Routes {
			if r.Route == st.Route {
				p.P50, p.P95, p.P99 = fmt.Sprintf("%.2f", r.P50MS), fmt.Sprintf("%.2f", r.P95MS), fmt.Sprintf("%.2f", r.P99MS)
			}
		}
		if st.Reason != "" {
			p.Why = st.Reason
			if st.Rule != "" {
				p.Why += ": " + st.Rule
			}
		}
		out = append(out, p)
	}
	return out
}

func bytesText(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

func durationText(secs float64) string {
	d := time.Duration(secs * float64(time.Second))
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%.1f min", d.Minutes())
	}
	return fmt.Sprintf("%.1f h", d.Hours())
}

// lineChart draws the timeline as an SVG line per route: calls per
// minute, or (meanTime) the mean milliseconds of each minute's calls.
func lineChart(tl []stmtstats.Minute, meanTime bool) template.HTML {
	const w, h, left, bottom, top = 560.0, 180.0, 48.0, 22.0, 8.0
	value := func(m stmtstats.Minute, r int) float64 {
		if meanTime {
			return m.Mean[r]
		}
		return float64(m.Calls[r])
	}
	peak := 0.0
	for _, m := range tl {
		for r := range m.Calls {
			peak = math.Max(peak, value(m, r))
		}
	}
	if peak == 0 {
		peak = 1
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`, w, h, w, h, map[bool]string{false: "statements per minute by route", true: "mean milliseconds by route"}[meanTime])
	plotW, plotH := w-left-8, h-bottom-top
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#dde2ea"/>`, left, top+plotH, left+plotW, top+plotH)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#dde2ea"/>`, left, top, left, top+plotH)
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="10" text-anchor="end" fill="#5d6778">%s</text>`, left-4, top+8, axisText(peak))
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="10" text-anchor="end" fill="#5d6778">0</text>`, left-4, top+plotH)
	if len(tl) > 0 {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="10" fill="#5d6778">%s</text>`, left, h-6, tl[0].Start.Format("15:04"))
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="10" text-anchor="end" fill="#5d6778">%s UTC</text>`, left+plotW, h-6, tl[len(tl)-1].Start.Format("15:04"))
	}
	n := len(tl)
	for r := range stmtstats.NumRoutes {
		var pts []string
		any := false
		for i, m := range tl {
			v := value(m, int(r))
			any = any || v > 0
			x := left + plotW*float64(i)/math.Max(1, float64(n-1))
			y := top + plotH - plotH*v/peak
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
		}
		if any {
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.8" points="%s"/>`, routeColors[r], strings.Join(pts, " "))
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // built here from numbers only
}

func axisText(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 1:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.3f", v)
}
