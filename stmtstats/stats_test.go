package stmtstats

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func TestQuantilesWithinABucket(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	e := s.Lookup(1, &Scope{Role: "r", Database: "d"}, "SELECT 1")
	now := time.Now()
	for i := 1; i <= 1000; i++ {
		e.Record(Origin, now.Add(-time.Duration(i)*100*time.Microsecond), 2)
	}
	st := e.stat()
	if len(st.Routes) != 1 || st.Calls != 1000 || st.Rows != 2000 || st.Route != "origin" {
		t.Fatalf("%+v", st)
	}
	r := st.Routes[0]
	for _, c := range []struct{ got, want float64 }{{r.P50MS, 50}, {r.P95MS, 95}, {r.P99MS, 99}} {
		if math.Abs(c.got-c.want)/c.want > 0.25 {
			t.Errorf("quantile %.2f ms, want about %.0f", c.got, c.want)
		}
	}
	if r.MaxMS < 100 || r.MaxMS > 110 || st.OriginMS != st.TotalMS {
		t.Errorf("max %.2f, origin %.2f total %.2f", r.MaxMS, st.OriginMS, st.TotalMS)
	}
}

func TestBucketsAreOrdered(t *testing.T) {
	prev := 0
	for d := time.Duration(0); d < 300*time.Second; d = d*11/10 + time.Microsecond {
		b := bucketOf(d)
		if b < prev || (b < numBuckets-1 && d >= bucketBound(b)) || (b > 0 && d < bucketBound(b-1)/2) {
			t.Fatalf("%v in bucket %d [.., %v)", d, b, bucketBound(b))
		}
		prev = b
	}
}

// A full store drops the tenth with the fewest calls, keeps their counts
// in the totals, and a holder of a dropped entry sees it gone.
func TestEvictionKeepsTotals(t *testing.T) {
	s := New(Options{Max: 100})
	defer s.Close()
	sc := &Scope{Role: "r", Database: "d"}
	var es []*Entry
	for i := range 100 {
		e := s.Lookup(uint64(i), sc, fmt.Sprint("SELECT ", i))
		for range i + 1 {
			e.Record(Accelerated, time.Now(), 1)
		}
		es = append(es, e)
	}
	s.Lookup(1000, sc, "SELECT 'new'").Record(Origin, time.Now(), 0)
	if info := s.Info(); info.Entries != 91 || info.Evicted != 10 {
		t.Fatalf("%+v", info)
	}
	for i, e := range es {
		if e.Gone() != (i < 10) {
			t.Errorf("entry %d gone: %v", i, e.Gone())
		}
	}
	var calls uint64
	for _, tot := range s.Totals(Filter{}) {
		calls += tot.Calls
	}
	if calls != 5050+1 {
		t.Errorf("totals count %d calls, want 5051", calls)
	}
	s.Reset()
	if len(s.Snapshot(Filter{})) != 0 || len(s.Totals(Filter{})) != 0 || !es[50].Gone() {
		t.Error("reset kept something")
	}
}

// The text is described in the background and the raw text forgotten.
func TestDescribedOffThePath(t *testing.T) {
	s := New(Options{Describe: func(sql string) Description {
		return Description{Text: strings.ReplaceAll(sql, "42", "$1"), Tables: []string{"t"}, Read: true}
	}})
	defer s.Close()
	e := s.Lookup(7, &Scope{Role: "r"}, "SELECT * FROM t WHERE a = 42")
	e.Record(Origin, time.Now(), 1)
	deadline := time.Now().Add(5 * time.Second)
	for e.desc.Load() == nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	st := s.Snapshot(Filter{})
	if len(st) != 1 || st[0].Text != "SELECT * FROM t WHERE a = $1" || e.raw != "" {
		t.Fatalf("%+v raw %q", st, e.raw)
	}
}

func TestAdviseRanksByOriginTime(t *testing.T) {
	stat := func(ms float64, reason string, tables ...string) Stat {
		return Stat{Read: true, OriginMS: ms, Tables: tables, Reason: reason, Text: fmt.Sprint(tables),
			Routes: []RouteStat{{Route: "origin", Calls: 2, TotalMS: ms}}}
	}
	stats := []Stat{
		stat(10, "no_dataset", "a"),
		stat(300, "no_dataset", "public.c"),
		stat(50, "not_accelerated", "b", "orders"),
		stat(40, "no_dataset", "b", "a"),
		stat(999, "no_dataset", "pg_catalog.pg_class"),
		{Read: false, OriginMS: 5000, Tables: []string{"d"}, Reason: "write"},
		{Read: true, OriginMS: 70, Tables: []string{"orders"}, Reason: "point_read", Datasets: []string{"orders"}, Rule: "by key"},
		{Read: true, OriginMS: 80, Tables: []string{"orders"}, Reason: "function", Datasets: []string{"orders"}},
	}
	a := Advise(stats, AdviceInput{Datasets: map[string]string{"public.orders": "orders"}})
	var got []string
	for _, x := range a.Tables {
		got = append(got, fmt.Sprintf("%s=%.0f%v", x.Table, x.OriginMS, x.With))
	}
	if want := "[public.c=300[] public.b=90[public.a] public.a=50[public.b]]"; fmt.Sprint(got) != want {
		t.Errorf("tables %v, want %s", got, want)
	}
	if len(a.Changes) != 1 || a.Changes[0].Reason != "point_read" || a.Changes[0].OriginMS != 70 || a.Changes[0].Rule != "by key" {
		t.Errorf("changes %+v", a.Changes)
	}
	if !strings.Contains(a.Tables[0].Config, "from: postgres:public.c\n    name: c\n") {
		t.Errorf("config %q", a.Tables[0].Config)
	}
}

func TestTimelineByMinute(t *testing.T) {
	now := time.Date(2026, 12, 7, 10, 30, 15, 0, time.UTC)
	clock := now
	s := New(Options{Now: func() time.Time { return clock }})
	defer s.Close()
	e := s.Lookup(1, &Scope{}, "x")
	e.Record(Accelerated, clock.Add(-time.Millisecond), 1)
	s.sample(clock)
	clock = clock.Add(2 * time.Minute)
	e.Record(Origin, clock.Add(-3*time.Millisecond), 1)
	e.Record(Origin, clock.Add(-time.Millisecond), 1)
	tl := s.Timeline()
	if len(tl) != 60 {
		t.Fatal(len(tl))
	}
	last, first := tl[59], tl[57]
	if last.Calls[Origin] != 2 || math.Abs(last.Mean[Origin]-2) > 0.01 || first.Calls[Accelerated] != 1 || tl[58].Calls != [NumRoutes]uint64{} {
		t.Errorf("%+v %+v %+v", first, tl[58], last)
	}
	// An hour on, the slot is reused for the new minute.
	s.sample(clock)
	clock = clock.Add(time.Hour)
	e.Record(CacheHit, clock, 0)
	if tl := s.Timeline(); tl[59].Calls[Origin] != 0 || tl[59].Calls[CacheHit] != 1 {
		t.Errorf("%+v", tl[59])
	}
}

// Calls counted in different stripes read as one route.
func TestStripesSum(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	e := s.Lookup(9, &Scope{Role: "r"}, "SELECT 9")
	for i := range 20 {
		e.RecordDuration(uint8(i), Origin, time.Duration(i+1)*time.Millisecond, 1)
	}
	st := e.stat()
	if len(st.Routes) != 1 || st.Calls != 20 || st.Rows != 20 || st.Routes[0].MaxMS != 20 || math.Abs(st.TotalMS-210) > 0.001 {
		t.Errorf("%+v", st)
	}
}
