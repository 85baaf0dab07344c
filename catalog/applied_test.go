package catalog

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A reader waits for a position the data has not reached; the stream is
// nudged and sees the wanted position, and the wait ends when the position
// is reached, or at its bound.
func TestApplied_WaitAdvanceWanted(t *testing.T) {
	var a Applied
	nudged := make(chan struct{}, 4)
	a.SetNudge(func() { nudged <- struct{}{} })
	a.Advance(10)
	if !a.Wait(context.Background(), 10, 0) {
		t.Fatal("a position reached had to be waited for")
	}
	if a.Wait(context.Background(), 11, 0) {
		t.Fatal("a wait of 0 reached a position not reached")
	}
	if lo, hi := a.Wanted(); lo != 0 || hi != 0 {
		t.Fatalf("a wait of 0 is wanted: %d, %d", lo, hi)
	}
	done := make(chan bool)
	go func() { done <- a.Wait(context.Background(), 20, 5*time.Second) }()
	<-nudged
	for _, hi := a.Wanted(); hi != 20; _, hi = a.Wanted() {
		time.Sleep(time.Millisecond)
	}
	a.Advance(15)
	select {
	case <-done:
		t.Fatal("the wait ended before its position")
	case <-time.After(20 * time.Millisecond):
	}
	a.Advance(25)
	if !<-done {
		t.Fatal("the wait did not see its position reached")
	}
	if lo, hi := a.Wanted(); lo != 0 || hi != 0 || a.Position() != 25 {
		t.Fatalf("wanted %d-%d, position %d", lo, hi, a.Position())
	}
	a.Advance(5) // never backwards
	if a.Position() != 25 {
		t.Fatal("the position moved back")
	}
	start := time.Now()
	if a.Wait(context.Background(), 30, 30*time.Millisecond) || time.Since(start) < 30*time.Millisecond {
		t.Fatal("a wait ended before its bound without its position")
	}
}

// runtime.read_your_writes is a scope, or a block of scope and max_wait.
func TestParse_ReadYourWrites(t *testing.T) {
	base := "origin:\n  dsn: host=localhost\nruntime:\n"
	for _, c := range []struct {
		yaml, scope, problem string
		wait                 time.Duration
	}{
		{"", RYWSession, "", DefaultRYWMaxWait},
		{"  read_your_writes: off\n", RYWOff, "", DefaultRYWMaxWait},
		{"  read_your_writes: role\n", RYWRole, "", DefaultRYWMaxWait},
		{"  read_your_writes:\n    scope: global\n    max_wait: 1s\n", RYWGlobal, "", time.Second},
		{"  read_your_writes:\n    max_wait: 0s\n", RYWSession, "", 0},
		{"  read_your_writes: sesion\n", "", `runtime.read_your_writes.scope: "sesion" is not session, role, global or off`, 0},
		{"  read_your_writes:\n    scope: all\n", "", `runtime.read_your_writes.scope: "all" is not`, 0},
	} {
		cfg, err := Parse([]byte(base+c.yaml+"  data_dir: /tmp/x\ndatasets: []\n"), "f")
		if c.problem != "" {
			if err == nil || !strings.Contains(err.Error(), c.problem) {
				t.Errorf("%q: error %v, want %q", c.yaml, err, c.problem)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.yaml, err)
			continue
		}
		if got := cfg.Runtime.ReadYourWrites; got.Scope != c.scope || got.MaxWait != c.wait {
			t.Errorf("%q: %+v, want scope %s max_wait %v", c.yaml, got, c.scope, c.wait)
		}
	}
}
