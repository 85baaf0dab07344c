package proxy

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRouteNote_String(t *testing.T) {
	if got := (routeNote{}).String(); got != "none" {
		t.Errorf("no statement yet: %q", got)
	}
	if got := (routeNote{route: "origin", reason: "function", detail: "function pg_backend_pid"}).String(); got != "origin: function: function pg_backend_pid" {
		t.Errorf("origin: %q", got)
	}
	long := routeNote{route: "fallback", reason: "engine", detail: strings.Repeat("é", 400)}.String()
	if !utf8.ValidString(long) || len(long) > len("fallback: engine: ")+maxRouteDetail+len("…") {
		t.Errorf("a long detail is cut at a character boundary and bounded: %d bytes, valid %v", len(long), utf8.ValidString(long))
	}
	for _, c := range []struct{ sql, want string }{
		{"SHOW pgaccel.last_route", lastRouteSQL},
		{"  show PGACCEL.LAST_ROUTE ;", lastRouteSQL},
		{`SHOW "pgaccel.last_route"`, lastRouteSQL},
		{"SHOW pgaccel.last_routes", "SHOW pgaccel.last_routes"},
		{"SELECT 'SHOW pgaccel.last_route'", "SELECT 'SHOW pgaccel.last_route'"},
		{"\t\r\n\fShow pgaccel.last_route", lastRouteSQL},
		{"SHO", "SHO"},
		{"", ""},
	} {
		if got := asOwnStatement(c.sql); got != c.want {
			t.Errorf("asOwnStatement(%q) = %q", c.sql, got)
		}
	}
	if routeSettingDetail("Auto") != "" || routeSettingDetail("") != "" || routeSettingDetail("origin") == "" || !strings.Contains(routeSettingDetail("bogus"), "neither") {
		t.Error("routeSettingDetail")
	}
}
