package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// A pgbench 15 run with -R and -P 1.
const pgbenchThrottled = `pgbench (15.18 (Debian 15.18-0+deb12u1))
progress: 1.0 s, 1000.9 tps, lat 0.520 ms stddev 0.211, 0 failed, lag 0.071 ms
progress: 2.0 s, 987.0 tps, lat 0.502 ms stddev 0.187, 0 failed, lag 0.064 ms
transaction type: /tmp/pgaccel-cdc-1/cdc.sql
scaling factor: 1
query mode: prepared
number of clients: 8
number of threads: 2
maximum number of tries: 1
duration: 2 s
number of transactions actually processed: 1988
number of failed transactions: 0 (0.000%)
latency average = 0.511 ms
latency stddev = 0.199 ms
rate limit schedule lag: avg 0.068 (max 3.102) ms
initial connection time = 12.345 ms
tps = 994.123456 (without initial connection time)
`

func TestParseOutput_ThrottledWithProgress(t *testing.T) {
	r, err := parseOutput([]byte(pgbenchThrottled))
	if err != nil {
		t.Fatal(err)
	}
	if r.tps != 994.123456 || r.txns != 1988 || r.latencyMS != 0.511 {
		t.Errorf("summary: %+v", r)
	}
	if !r.hasSchedLag || r.schedLagMS != 0.068 || r.schedLagMaxMS != 3.102 {
		t.Errorf("schedule lag: %+v", r)
	}
	if !slices.Equal(r.perSecond, []float64{1000.9, 987.0}) {
		t.Errorf("per second: %v", r.perSecond)
	}
}

func TestParseOutput_Unthrottled(t *testing.T) {
	out := strings.Replace(pgbenchThrottled, "rate limit schedule lag: avg 0.068 (max 3.102) ms\n", "", 1)
	r, err := parseOutput([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if r.hasSchedLag {
		t.Errorf("schedule lag without -R: %+v", r)
	}
}

func TestLoad_Args(t *testing.T) {
	for _, tc := range []struct {
		l    load
		want string
		cmd  string
	}{
		{load{rate: 5000, d: 30 * time.Second, clients: 8, threads: 2},
			"-n -M prepared -f s.sql -c 8 -j 2 -T 30 -P 1 -R 5000",
			"pgbench -n -M prepared -f cdc.sql -c 8 -j 2 -T 30 -P 1 -R <rate>"},
		{load{d: 10 * time.Second, clients: 4, threads: 2},
			"-n -M prepared -f s.sql -c 4 -j 2 -T 10 -P 1",
			"pgbench -n -M prepared -f cdc.sql -c 4 -j 2 -T 10 -P 1"},
		{load{txnsPerClient: 12500, clients: 8, threads: 2},
			"-n -M prepared -f s.sql -c 8 -j 2 -t 12500",
			"pgbench -n -M prepared -f cdc.sql -c 8 -j 2 -t 12500"},
	} {
		if got := strings.Join(tc.l.args("s.sql"), " "); got != tc.want {
			t.Errorf("args = %q, want %q", got, tc.want)
		}
		if got := tc.l.commandLine(); got != tc.cmd {
			t.Errorf("commandLine = %q, want %q", got, tc.cmd)
		}
	}
}

// The script's ranges: updates in the first half of the ids, which
// deletes never reach (they start in the second half).
func TestScript_Ranges(t *testing.T) {
	s := script(100000)
	for _, want := range []string{`\if :r <= 50`, `\elif :r <= 85`, `\set id random(1, 50000)`, "nextval('cdc_bench_ins')", "nextval('cdc_bench_del')"} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s)
		}
	}
	if insertPct+updatePct+deletePct != 100 {
		t.Error("the mix does not add up to 100%")
	}
}

func TestParseRates(t *testing.T) {
	got, err := parseRates("1000, 5k,max,2.5k")
	if err != nil || !slices.Equal(got, []int{1000, 5000, 0, 2500}) {
		t.Errorf("parseRates = %v, %v", got, err)
	}
	for _, bad := range []string{"", "fast", "0", "-5"} {
		if _, err := parseRates(bad); err == nil {
			t.Errorf("parseRates(%q): no error", bad)
		}
	}
}
