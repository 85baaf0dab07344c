package accelerator

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"
)

// Concurrent queries (the proxy runs one per session) reuse DuckDB
// connections rather than open and close one per query, and what the
// engine keeps per connection (its TimeZone) goes with the connection.
func TestQueryIn_ConcurrentQueriesKeepTheirConnections(t *testing.T) {
	e := openEngine(t, "")
	ctx := context.Background()
	zones := []string{"UTC", "Europe/Paris", "America/New_York", "Asia/Tokyo"}
	const sessions, rounds = 8, 20
	for r := range rounds {
		// Every session holds its result open until all have one: as
		// many connections in use at once as sessions.
		var opened, done sync.WaitGroup
		opened.Add(sessions)
		errs := make(chan error, sessions)
		for s := range sessions {
			done.Add(1)
			go func() {
				defer done.Done()
				zone := zones[(s+r)%len(zones)]
				rows, err := e.QueryIn(ctx, zone, "SELECT current_setting('TimeZone')")
				opened.Done()
				if err != nil {
					errs <- err
					return
				}
				opened.Wait()
				var got any
				if rows.Next() {
					got = rows.Values()[0]
				}
				if err := rows.Close(); err != nil {
					errs <- err
					return
				}
				if got != zone {
					errs <- &zoneError{want: zone, got: got}
				}
			}()
		}
		done.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	if st := e.db.Stats(); st.MaxIdleClosed > 0 {
		t.Errorf("%d DuckDB connections were closed for exceeding the idle pool (%d opened in all): queries churn connections",
			st.MaxIdleClosed, st.OpenConnections+int(st.MaxIdleClosed+st.MaxLifetimeClosed+st.MaxIdleTimeClosed))
	}

	// A connection closed (here: the whole pool) leaves nothing behind.
	e.db.SetMaxIdleConns(0)
	deadline := time.Now().Add(10 * time.Second)
	for e.zonesKept() > 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := e.zonesKept(); n > 0 {
		t.Errorf("%d TimeZones still kept for closed connections", n)
	}
}

type zoneError struct {
	want string
	got  any
}

func (z *zoneError) Error() string {
	return "TimeZone " + z.want + " set, query saw " + toString(z.got)
}

func toString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return "a non-string"
}
