package proxy

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/planner"
)

// The datasets a write fences: those whose table its text names, or all of
// them where its text does not show what it writes.
func TestConsistency_WrittenDatasets(t *testing.T) {
	reg := catalog.NewRegistry(&catalog.Config{Datasets: []*catalog.Dataset{
		{Name: "orders", Schema: "public", Table: "orders", Acceleration: catalog.Acceleration{Enabled: true}},
		{Name: "items", Schema: "public", Table: "Items", Acceleration: catalog.Acceleration{Enabled: true}},
	}})
	c := NewConsistency(reg, catalog.ReadYourWrites{Scope: catalog.RYWSession}, nil, nil)
	p := planner.New(reg, nil, planner.Options{})
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		{"INSERT INTO orders VALUES (1)", []string{"orders"}},
		{`UPDATE "Items" SET n = 1`, []string{"items"}},
		{"DELETE FROM other", nil},
		{"LOCK TABLE orders", nil},
		{"CALL archive()", []string{allDatasets}},
		{"DO $$ BEGIN PERFORM 1; END $$", []string{allDatasets}},
		{"INSERT INTO a VALUES (1); SELECT 1", []string{allDatasets}},
		{"TRUNCATE items", []string{"items"}},
		{"SELECT * FROM orders FOR UPDATE", nil},
		{"SELECT nextval('orders_id_seq')", nil},
		{"SELECT dblink_exec('dbname=x', 'DELETE FROM orders')", []string{"orders"}},
	} {
		d := p.Plan(context.Background(), tc.sql, &planner.Session{User: "u", SearchPath: []string{"public"}, OriginDown: true})
		got := c.written(tc.sql, d)
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: fences %q, want %q", tc.sql, got, tc.want)
		}
	}
	if got := c.written("SELECT * FROM orders", planner.Decision{Route: planner.RouteAccelerate, Kind: planner.KindSelect}); got != nil {
		t.Errorf("a read fences %q", got)
	}
}

// A fence set keeps the newest fence per dataset; a fence passed is
// dropped unless a newer one replaced it. Scope role shares a set among
// a role's sessions, global among all; session gives each its own.
func TestConsistency_FenceSets(t *testing.T) {
	var fs fenceSet
	t0 := time.Now()
	fs.add([]string{"a", "b"}, t0)
	fs.add([]string{"a"}, t0.Add(-time.Second)) // older: kept the newer
	if f, ok := fs.get("a"); !ok || !f.at.Equal(t0) {
		t.Fatalf("a: %+v %v", f, ok)
	}
	old, _ := fs.get("b")
	fs.add([]string{"b"}, t0.Add(time.Second))
	fs.passed("b", old) // a newer fence stays
	if _, ok := fs.get("b"); !ok {
		t.Fatal("a passed fence dropped a newer one")
	}
	f, _ := fs.get("a")
	f.lsn = 42
	fs.resolved("a", f)
	if g, _ := fs.get("a"); g.lsn != 42 {
		t.Fatalf("the resolved position was not kept: %+v", g)
	}
	fs.passed("a", g(&fs, "a"))
	if _, ok := fs.get("a"); ok || fs.n.Load() != 1 {
		t.Fatalf("a passed fence stayed (%d held)", fs.n.Load())
	}

	reg := catalog.NewRegistry(&catalog.Config{})
	for _, scope := range []string{catalog.RYWSession, catalog.RYWRole, catalog.RYWGlobal} {
		c := NewConsistency(reg, catalog.ReadYourWrites{Scope: scope}, nil, nil)
		a1, a2, b := c.fencesFor("alice"), c.fencesFor("alice"), c.fencesFor("bob")
		if got, want := a1 == a2, scope != catalog.RYWSession; got != want {
			t.Errorf("%s: two sessions of a role share a set: %v, want %v", scope, got, want)
		}
		if got, want := a1 == b, scope == catalog.RYWGlobal; got != want {
			t.Errorf("%s: sessions of two roles share a set: %v, want %v", scope, got, want)
		}
	}
	if NewConsistency(reg, catalog.ReadYourWrites{Scope: catalog.RYWOff}, nil, nil) != nil {
		t.Error("read_your_writes off made a Consistency")
	}
}

func g(fs *fenceSet, ds string) fence { f, _ := fs.get(ds); return f }

// The WAL position is read once for every fence whose commit came before
// the read started, and read again for a later commit.
func TestConsistency_WALClockShared(t *testing.T) {
	var reads atomic.Int64
	release := make(chan struct{})
	c := walClock{read: func(context.Context) (uint64, error) {
		n := reads.Add(1)
		<-release
		return uint64(100 * n), nil
	}}
	commit := time.Now()
	time.Sleep(time.Millisecond)
	var wg sync.WaitGroup
	got := make([]uint64, 8)
	for i := range got {
		wg.Go(func() { got[i], _ = c.after(context.Background(), commit) })
	}
	for started := false; !started; {
		time.Sleep(time.Millisecond)
		c.mu.Lock()
		started = c.cur != nil
		c.mu.Unlock()
	}
	time.Sleep(10 * time.Millisecond)
	close(release)
	wg.Wait()
	if reads.Load() != 1 {
		t.Fatalf("%d reads for 8 fences of one commit", reads.Load())
	}
	if lsn, _ := c.after(context.Background(), commit); lsn != 100 || reads.Load() != 1 {
		t.Fatalf("a fence older than the last read read again: %d, %d reads", lsn, reads.Load())
	}
	if lsn, _ := c.after(context.Background(), time.Now()); lsn != 200 {
		t.Fatalf("a commit after the last read got %d, want a new read", lsn)
	}
}
