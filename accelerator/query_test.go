package accelerator

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pgaccel/pgaccel/catalog"
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
	// Every connection came back to the pool, and none was closed.
	if n := e.idleConns(); n != sessions {
		t.Errorf("%d connections idle after the rounds, want the %d the sessions used", n, sessions)
	}
	if st := e.db.Stats(); st.OpenConnections != sessions {
		t.Errorf("%d DuckDB connections open, want %d: queries churn connections", st.OpenConnections, sessions)
	}
}

// A statement prepared on a connection is run again from there, and sees
// a dataset's table as it is after a reload, even one whose columns
// changed.
func TestQueryIn_PreparedStatementsFollowReloads(t *testing.T) {
	originExec(t, `DROP TABLE IF EXISTS prep_t;
		CREATE TABLE prep_t (id int, v text);
		INSERT INTO prep_t SELECT g, 'v' || g FROM generate_series(1, 100) g;`)
	e := openEngine(t, "")
	ds := testDataset("prep_t", "prep_t", catalog.ModeMemory)
	loadOrigin(t, e, ds)
	query := "SELECT * FROM " + e.TableRef("prep_t") + " WHERE id = $1"
	columns := func(id int) (int, any) {
		t.Helper()
		rows, err := e.QueryIn(context.Background(), "UTC", query, id)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		if !rows.Next() {
			t.Fatalf("no row for id %d (%v)", id, rows.Err())
		}
		vals := rows.Values()
		return len(rows.Columns()), vals[len(vals)-1]
	}
	if n, v := columns(7); n != 2 || v != "v7" {
		t.Fatalf("before the reload: %d columns, last %v", n, v)
	}
	// A text is kept when it comes again, and then runs as it is.
	for id := 8; id <= 10; id++ {
		if n, v := columns(id); n != 2 || v != fmt.Sprintf("v%d", id) {
			t.Fatalf("run again: %d columns, last %v", n, v)
		}
	}
	if e.idleConns() != 1 || e.prepares.Load() != 2 {
		t.Fatalf("%d idle connections and %d statements prepared, want the one connection, and the text prepared when first seen and when kept", e.idleConns(), e.prepares.Load())
	}

	originExec(t, `ALTER TABLE prep_t ADD COLUMN w text; UPDATE prep_t SET w = 'w' || id;`)
	loadOrigin(t, e, ds)
	if n, v := columns(9); n != 3 || v != "w9" {
		t.Errorf("after the reload: %d columns, last %v; want 3, w9", n, v)
	}
	if n := e.prepares.Load(); n != 3 {
		t.Errorf("%d statements prepared, want 3: the reload makes the statement be prepared again", n)
	}
}

// A query that fails while it runs (here: cancelled) does not give its
// connection back for reuse; one DuckDB cannot plan does.
func TestQueryIn_FailedQueriesAndConnections(t *testing.T) {
	e := openEngine(t, "")
	if _, err := e.Query(context.Background(), "SELECT no_such_function(1)"); err == nil {
		t.Fatal("a query DuckDB cannot plan succeeded")
	}
	if n := e.idleConns(); n != 1 {
		t.Errorf("%d idle connections after a plan error, want 1", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if rows, err := e.Query(ctx, "SELECT count(*) FROM range(100000000000) a"); err == nil {
		rows.Close()
		t.Fatal("the query finished before its deadline")
	}
	if n := e.idleConns(); n != 0 {
		t.Errorf("%d idle connections after a cancelled query, want 0 (it is closed)", n)
	}
	if n := queryInt(t, e, "SELECT 42"); n != 42 {
		t.Errorf("SELECT 42 = %d after the cancel", n)
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
