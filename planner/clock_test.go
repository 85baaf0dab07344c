package planner

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestPlan_RelativeTime: now() and its kin are accelerated as parameters
// numbered after the client's, one per occurrence, with their types and
// whether they are the statement's time; the forms Postgres fixes
// otherwise stay at the origin.
func TestPlan_RelativeTime(t *testing.T) {
	p := New(valsRegistry(t), valsResolver(), Options{})
	s := defaultSession()
	tz := Clock{Type: ClockTimestamptz, Precision: -1}
	cases := []struct {
		sql    string
		want   []string
		clocks []Clock
	}{
		{"SELECT count(*) FROM vals WHERE tz > now() - interval '7 days'", []string{"tz > ($1::timestamptz - '7 days'::interval)"}, []Clock{tz}},
		{"SELECT count(*) FROM vals WHERE tz >= CURRENT_TIMESTAMP - interval '1 hour' AND id = $1", []string{"$2::timestamptz"}, []Clock{tz}},
		{"SELECT count(*) FROM vals WHERE d >= current_date - 30", []string{"$1::date - 30"}, []Clock{{Type: ClockDate, Precision: -1}}},
		{"SELECT count(*) FROM vals WHERE ts < localtimestamp(2)", []string{"$1::timestamp"}, []Clock{{Type: ClockTimestamp, Precision: 2}}},
		{"SELECT count(*) FROM vals WHERE tz >= date_trunc('month', now() + interval '-12 month') AND tz < date_trunc('month', now())",
			[]string{"$1::timestamptz", "$2::timestamptz"}, []Clock{tz, tz}},
		{"SELECT statement_timestamp(), pg_catalog.now(), transaction_timestamp() FROM vals LIMIT 1",
			[]string{"$1::timestamptz", "$2::timestamptz", "$3::timestamptz"}, []Clock{{Type: ClockTimestamptz, Statement: true, Precision: -1}, tz, tz}},
		{"SELECT CAST(now() AS date), count(*) FROM vals GROUP BY 1", nil, []Clock{tz}},
	}
	for _, c := range cases {
		d := p.Plan(context.Background(), c.sql, s)
		if d.Route != RouteAccelerate {
			t.Errorf("%s: %s (%s)", c.sql, d.Reason, d.Detail)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(d.SQL, w) {
				t.Errorf("%s:\n  SQL %s\n  lacks %s", c.sql, d.SQL, w)
			}
		}
		if !slices.Equal(d.Clocks, c.clocks) {
			t.Errorf("%s: clocks %+v, want %+v", c.sql, d.Clocks, c.clocks)
		}
		if d.Verifiable || d.Point != nil {
			t.Errorf("%s: verifiable %v, point %v", c.sql, d.Verifiable, d.Point)
		}
	}
	for _, sql := range []string{
		"SELECT count(*) FROM vals WHERE tz > clock_timestamp() - interval '1 day'",
		"SELECT count(*) FROM vals WHERE tz > 'now'::timestamptz",
		"SELECT count(*) FROM vals WHERE d = 'today'",
		"SELECT current_time FROM vals",
		"SELECT * FROM vals, now()",
		"SELECT count(*) FROM vals WHERE tz > myschema.now()",
		"SELECT count(*) FROM vals WHERE tz > timeofday()::timestamptz",
	} {
		if d := p.Plan(context.Background(), sql, s); d.Route != RouteOrigin || len(d.Clocks) > 0 {
			t.Errorf("%s: %v %s, clocks %v (want the origin)", sql, d.Route, d.SQL, d.Clocks)
		}
	}
}

func TestMayReadClock(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT NOW()": true, "select current_DATE": true, "SELECT localtimestamp(2)": true, "x Statement_Timestamp()": true,
		"SELECT id FROM t WHERE a = 1": false, "SELECT count(*) FROM orders": false, "": false, "nowhere": true,
	} {
		if got := mayReadClock(sql); got != want {
			t.Errorf("%q: %v, want %v", sql, got, want)
		}
	}
}
