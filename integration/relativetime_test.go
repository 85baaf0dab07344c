package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// Relative time (issue 45): now(), CURRENT_TIMESTAMP, CURRENT_DATE,
// LOCALTIMESTAMP, statement_timestamp() and transaction_timestamp() in
// the filters of dashboards, accelerated with Postgres's meaning.

// relTimeSchema holds rows an hour apart reaching back 90 days from when
// it is created, each half an hour off the hour: every boundary a query
// below draws (now() minus whole hours, days or months) falls half an
// hour from the nearest row for the first half hour of the test, so the
// origin and the acceleration, reading their clocks milliseconds apart,
// count the same rows.
const relTimeSchema = `DROP TABLE IF EXISTS rel_events;
	CREATE TABLE rel_events (id int PRIMARY KEY, at timestamptz, local_at timestamp, day date, amount numeric(12,2), kind text);
	INSERT INTO rel_events SELECT k, now() - k * interval '1 hour' - interval '30 minutes',
	  (now() - k * interval '1 hour' - interval '30 minutes') AT TIME ZONE 'UTC',
	  ((now() - k * interval '1 hour') AT TIME ZONE 'UTC')::date, (k % 97) * 1.25, 'k' || (k % 5)
	FROM generate_series(0, 2160) k;
	GRANT SELECT ON rel_events TO app;`

// relTimeQueries are dashboard filters over the last hours, days and
// months: Grafana's and Metabase's forms among them.
var relTimeQueries = []routeCase{
	{"SELECT count(*), sum(amount) FROM rel_events WHERE at > now() - interval '7 days'", acc},
	{"SELECT kind, count(*) FROM rel_events WHERE at >= CURRENT_TIMESTAMP - interval '36 hours' AND at < current_timestamp GROUP BY kind ORDER BY kind", acc},
	{"SELECT date_trunc('month', at) AS m, count(*) FROM rel_events WHERE at >= date_trunc('month', now() + interval '-12 month') AND at < date_trunc('month', now()) GROUP BY 1 ORDER BY 1", acc},
	{"SELECT day, count(*) FROM rel_events WHERE day >= current_date - 30 GROUP BY day ORDER BY day", acc},
	{"SELECT count(*) FROM rel_events WHERE day = CURRENT_DATE - 1", acc},
	{"SELECT count(*) FROM rel_events WHERE local_at > localtimestamp - interval '2 days'", acc},
	{"SELECT date_trunc('hour', at) AS time, count(*) FROM rel_events WHERE at BETWEEN now() - interval '6 hours' AND now() GROUP BY 1 ORDER BY 1", acc},
	{"SELECT count(*) FILTER (WHERE at > now() - interval '1 day'), count(*) FROM rel_events", acc},
	{"SELECT id FROM rel_events WHERE at > statement_timestamp() - interval '3 hours' ORDER BY id", acc},
	{"SELECT id FROM rel_events WHERE at > transaction_timestamp() - interval '5 hours' AND at <= pg_catalog.now() ORDER BY id DESC LIMIT 3", acc},
	{"SELECT CAST(at AS date) AS d, count(*) FROM rel_events WHERE at >= CAST(CAST(now() AS timestamp) + INTERVAL '-30 day' AS date) AND at < CAST(CAST(now() AS timestamp) AS date) GROUP BY 1 ORDER BY 1", acc},
	{"SELECT count(*) FROM rel_events WHERE at::date > now()::date - 14", acc},
	{"SELECT count(*) FROM rel_events WHERE local_at > now() AT TIME ZONE 'UTC' - interval '1 day'", acc},
	{"SELECT count(*), date_part('year', now()), to_char(now(), 'YYYY') FROM rel_events WHERE at > date_trunc('day', now()) - interval '3 days'", acc},
	{"SELECT count(*) FROM rel_events WHERE at BETWEEN current_date AND current_date + 1", acc},
	{"SELECT count(*) FROM rel_events WHERE extract(year from at) = extract(year from now()) AND day > current_date - 7", acc},
	{"SELECT id, now()::date - day AS days_ago FROM rel_events WHERE id < 50 ORDER BY id", acc},
	// Grafana's $__timeGroupAlias(at, '1h') and $__timeGroup(at, '1d'), Metabase's bins, and buckets of
	// amounts: floor of an exact division (floordiv.go).
	{`SELECT floor(extract(epoch from at)/3600)*3600 AS "time", count(*) FROM rel_events WHERE at BETWEEN now() - interval '12 hours' AND now() GROUP BY 1 ORDER BY 1`, acc},
	{`SELECT floor(extract(epoch from local_at)/86400)*86400 AS "time", sum(amount) FROM rel_events WHERE at > now() - interval '10 days' GROUP BY 1 ORDER BY 1`, acc},
	{"SELECT floor(amount / 10) * 10 AS bucket, count(*) FROM rel_events GROUP BY 1 ORDER BY 1", acc},
	{"SELECT floor(((amount - 0.0) / 12.5)) * 12.5 + 0.0 AS bin, count(*) FROM rel_events GROUP BY 1 ORDER BY 1", acc},
	{"SELECT floor((id - 1) / 2.5) * 2.5 AS bin, count(*) FROM rel_events WHERE id < 100 GROUP BY 1 ORDER BY 1", acc},
	{"SELECT floor(-amount / 7) AS bucket, count(*) FROM rel_events GROUP BY 1 ORDER BY 1", acc},
	{"SELECT round(extract(epoch from at) / 60) * 60 AS minute, ceil(amount / 3), trunc(-amount / 7) FROM rel_events WHERE id < 20 ORDER BY 1", acc},
	{"SELECT floor(amount * 2 / 7) AS bucket, count(*) FROM rel_events GROUP BY 1 ORDER BY 1", org},
	// What changes while the statement runs stays at the origin.
	{"SELECT count(*) FROM rel_events WHERE at > clock_timestamp() - interval '7 days'", org},
}

// TestRelativeTime_DashboardFilters: relTimeQueries answered by the
// acceleration, byte for byte as the origin answers them, in a C database
// under UTC and an en_US.UTF-8 one under Australia/Sydney (a zone with
// daylight saving, east of UTC, so CURRENT_DATE is not UTC's date for
// half the day), in both protocols; and the values themselves keep
// Postgres's meaning: one now() per transaction, statement_timestamp()
// per statement, on the origin's clock, rounded to a precision.
func TestRelativeTime_DashboardFilters(t *testing.T) {
	run := func(t *testing.T, a *app.App, direct, proxied string) {
		checkRouteCases(t, a, direct, proxied, relTimeQueries)
		t.Run("values", func(t *testing.T) { checkClockValues(t, direct, proxied) })
		// The origin's clock was measured (the harness's origin shares
		// this host's clock: the offset is within its bound, which is
		// the half round trip of a local query).
		var offset, bound float64
		pgtest.WaitFor(t, "the origin's clock measured", func() bool {
			offset = metricSums(t, a.Metrics, "pgaccel_origin_clock_offset_seconds")[""]
			bound = metricSums(t, a.Metrics, "pgaccel_origin_clock_offset_bound_seconds")[""]
			return bound >= 0
		})
		t.Logf("origin clock offset %.1f µs, bound %.1f µs", offset*1e6, bound*1e6)
	}
	inBothLocales(t, "pgaccel_reltime_enus", relTimeSchema, "", "  - from: postgres:public.rel_events\n", run)
}

// checkClockValues checks the values of the relative-time functions the
// acceleration gives against Postgres's rules and the origin's clock.
func checkClockValues(t *testing.T, direct, proxied string) {
	ctx := ctxT(t)
	c, err := pgx.Connect(ctx, proxied)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	o, err := pgx.Connect(ctx, direct)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close(context.Background())
	accelerated := func(what string) {
		t.Helper()
		var route string
		if err := c.QueryRow(ctx, "SHOW pgaccel.last_route", pgx.QueryExecModeSimpleProtocol).Scan(&route); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(route, "accelerated") {
			t.Errorf("%s: routed %q", what, route)
		}
	}
	// EXPLAIN shows DuckDB's plan with the values bound.
	rows, err := c.Query(ctx, "EXPLAIN SELECT count(*) FROM rel_events WHERE at > now() - interval '1 day'", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if rows.Close(); len(plan) == 0 || !strings.HasPrefix(plan[0], "pgaccel: accelerated") {
		t.Errorf("EXPLAIN: %q, want DuckDB's plan", plan)
	}
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
		// Outside a transaction block, a statement is its transaction.
		var now, stmt time.Time
		var same bool
		if err := c.QueryRow(ctx, "SELECT now(), statement_timestamp(), now() = statement_timestamp() FROM rel_events LIMIT 1", mode).Scan(&now, &stmt, &same); err != nil {
			t.Fatal(err)
		}
		accelerated("now() outside a transaction")
		if !same || !now.Equal(stmt) {
			t.Errorf("%v: now() %v, statement_timestamp() %v: want equal outside a transaction block", mode, now, stmt)
		}
		// On the origin's clock: read between two readings of it.
		var before, after time.Time
		if err := o.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&before); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRow(ctx, "SELECT now() FROM rel_events LIMIT 1", mode).Scan(&now); err != nil {
			t.Fatal(err)
		}
		if err := o.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&after); err != nil {
			t.Fatal(err)
		}
		// The offset's bound is well under a millisecond here; a
		// second's slack keeps a loaded machine from failing it.
		if now.Before(before.Add(-time.Second)) || now.After(after.Add(time.Second)) {
			t.Errorf("%v: now() %v not within the origin's clock readings %v .. %v", mode, now, before, after)
		}

		// In a transaction block: now() is the BEGIN's, the same for every
		// statement; statement_timestamp() moves.
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var first, second, s2 time.Time
		if err := tx.QueryRow(ctx, "SELECT now() FROM rel_events LIMIT 1", mode).Scan(&first); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		if err := tx.QueryRow(ctx, "SELECT current_timestamp, statement_timestamp() FROM rel_events LIMIT 1", mode).Scan(&second, &s2); err != nil {
			t.Fatal(err)
		}
		accelerated("now() in a transaction")
		if !first.Equal(second) || !s2.After(second.Add(10*time.Millisecond)) {
			t.Errorf("%v: in one transaction now() %v then %v, statement_timestamp() %v: want now() fixed, the statement's time later", mode, first, second, s2)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		var third time.Time
		if err := c.QueryRow(ctx, "SELECT now() FROM rel_events LIMIT 1", mode).Scan(&third); err != nil {
			t.Fatal(err)
		}
		if !third.After(first) {
			t.Errorf("%v: now() after COMMIT %v, want later than the transaction's %v", mode, third, first)
		}

		// Beside the client's parameters, numbered after them.
		var n, on int64
		const sql = "SELECT count(*) FROM rel_events WHERE at > now() - interval '2 days' AND kind = $1 AND id > $2 AND day <= current_date"
		if err := c.QueryRow(ctx, sql, mode, "k1", 1).Scan(&n); err != nil {
			t.Fatal(err)
		}
		accelerated("now() beside parameters")
		if err := o.QueryRow(ctx, sql, mode, "k1", 1).Scan(&on); err != nil {
			t.Fatal(err)
		}
		if n != on || n == 0 {
			t.Errorf("%v: %s: %d rows, the origin %d", mode, sql, n, on)
		}

		// Precision is rounded as Postgres rounds; CURRENT_DATE and
		// LOCALTIMESTAMP are the session's zone's.
		var ts0, lts2, cd, od time.Time
		if err := c.QueryRow(ctx, "SELECT current_timestamp(0), localtimestamp(2), current_date FROM rel_events LIMIT 1", mode).Scan(&ts0, &lts2, &cd); err != nil {
			t.Fatal(err)
		}
		accelerated("precision and dates")
		if err := o.QueryRow(ctx, "SELECT current_date").Scan(&od); err != nil {
			t.Fatal(err)
		}
		if ts0.Nanosecond() != 0 || lts2.Nanosecond()%int(10*time.Millisecond) != 0 || !cd.Equal(od) {
			t.Errorf("%v: current_timestamp(0) %v, localtimestamp(2) %v, current_date %v (the origin's %v)", mode, ts0, lts2, cd, od)
		}
	}
}
