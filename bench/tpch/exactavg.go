package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/bench/internal/benchutil"
)

// An exact avg(numeric) on DuckDB, to show what Q1 would cost if the
// planner rewrote avg the way Postgres computes it. DuckDB's avg(DECIMAL)
// is a DOUBLE, which the encoder refuses, so Q1 falls back today.
//
// Postgres's avg(numeric) is numeric_div(sum, count) (numeric_avg in
// utils/adt/numeric.c): the quotient rounded half away from zero to the
// scale select_div_scale picks from the two operands' values,
//
//	rscale = min(max(16 - 4*qweight, dscale(sum), dscale(count)=0), 1000)
//	qweight = weight(sum) - weight(count) - (firstdigit(sum) <= firstdigit(count) ? 1 : 0)
//
// with weight the position and firstdigit the value of the leading
// base-10000 digit (0 and 0 for zero), and dscale(sum) the column's scale
// s for numeric(p,s). The scale depends on the data, row by row, so the
// result cannot be a DuckDB DECIMAL (one scale per column): it is built as
// text here, from the sum as an unscaled HUGEINT and the count, with
// integer arithmetic only.

// avgTerm is one avg(col) of a numeric(p,scale) column.
type avgTerm struct {
	name, col string
	scale     int
}

// pow10 is 10^k as an exact HUGEINT expression (k an SQL integer expression).
func pow10(k string) string {
	return fmt.Sprintf("CAST('1' || repeat('0', %s) AS HUGEINT)", k)
}

// exactAvgCTEs returns the CTEs that follow base (which must have, for
// term i, u<i>: the sum as an unscaled HUGEINT, and n<i>: the count) and
// end in a relation named last whose column t<i> is term i's avg as
// Postgres prints it.
func exactAvgCTEs(base string, terms []avgTerm) (ctes, last string) {
	stage := func(from string, cols func(i int, t avgTerm) string) string {
		var parts []string
		for i, t := range terms {
			parts = append(parts, cols(i, t))
		}
		return fmt.Sprintf("SELECT *, %s FROM %s", strings.Join(parts, ", "), from)
	}
	s1 := stage(base, func(i int, t avgTerm) string {
		// Decimal exponent of the leading digit of |sum| and of count.
		return fmt.Sprintf("abs(u%[1]d) AS a%[1]d, length(CAST(abs(u%[1]d) AS VARCHAR)) - 1 - %[2]d AS e%[1]d, "+
			"length(CAST(n%[1]d AS VARCHAR)) - 1 AS en%[1]d", i, t.scale)
	})
	s2 := stage("s1", func(i int, t avgTerm) string {
		return fmt.Sprintf("CASE WHEN a%[1]d = 0 THEN 0 ELSE CAST(floor(e%[1]d / 4.0) AS INTEGER) END AS w%[1]d, "+
			"CAST(floor(en%[1]d / 4.0) AS INTEGER) AS wn%[1]d", i)
	})
	s3 := stage("s2", func(i int, t avgTerm) string {
		return fmt.Sprintf("CASE WHEN a%[1]d = 0 THEN 0 WHEN %[2]d + 4*w%[1]d >= 0 THEN a%[1]d // %[3]s "+
			"ELSE a%[1]d * %[4]s END AS fd%[1]d, n%[1]d // %[5]s AS fdn%[1]d",
			i, t.scale, pow10(fmt.Sprintf("%d + 4*w%d", t.scale, i)), pow10(fmt.Sprintf("-(%d + 4*w%d)", t.scale, i)),
			pow10(fmt.Sprintf("4*wn%d", i)))
	})
	s4 := stage("s3", func(i int, t avgTerm) string {
		return fmt.Sprintf("least(greatest(16 - 4*(w%[1]d - wn%[1]d - CASE WHEN fd%[1]d <= fdn%[1]d THEN 1 ELSE 0 END), %[2]d, 0), 1000) AS rs%[1]d",
			i, t.scale)
	})
	s5 := stage("s4", func(i int, t avgTerm) string {
		return fmt.Sprintf("(2 * a%[1]d * %[2]s + n%[1]d) // (2 * n%[1]d) AS q%[1]d, %[3]s AS p%[1]d",
			i, pow10(fmt.Sprintf("rs%d - %d", i, t.scale)), pow10(fmt.Sprintf("rs%d", i)))
	})
	s6 := stage("s5", func(i int, t avgTerm) string {
		return fmt.Sprintf("CASE WHEN u%[1]d < 0 AND q%[1]d <> 0 THEN '-' ELSE '' END || CAST(q%[1]d // p%[1]d AS VARCHAR) || "+
			"CASE WHEN rs%[1]d > 0 THEN '.' || lpad(CAST(q%[1]d %% p%[1]d AS VARCHAR), rs%[1]d, '0') ELSE '' END AS t%[1]d", i)
	})
	return fmt.Sprintf("s1 AS (%s), s2 AS (%s), s3 AS (%s), s4 AS (%s), s5 AS (%s), s6 AS (%s)", s1, s2, s3, s4, s5, s6), "s6"
}

// q1ExactSQL is Q1 for DuckDB with Postgres's avg, every column as text.
func q1ExactSQL(lineitem string) string {
	terms := []avgTerm{{"avg_qty", "l_quantity", 2}, {"avg_price", "l_extendedprice", 2}, {"avg_disc", "l_discount", 2}}
	var base strings.Builder
	base.WriteString("SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, sum(l_extendedprice) AS sum_base_price, " +
		"sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price, " +
		"sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, count(*) AS count_order")
	for i, t := range terms {
		fmt.Fprintf(&base, ", CAST(sum(%[2]s) * %[3]s AS HUGEINT) AS u%[1]d, count(%[2]s) AS n%[1]d", i, t.col, pow10(fmt.Sprint(t.scale)))
	}
	fmt.Fprintf(&base, " FROM %s WHERE l_shipdate <= DATE '1998-12-01' - INTERVAL '90 day' GROUP BY l_returnflag, l_linestatus", lineitem)
	ctes, last := exactAvgCTEs("g", terms)
	return fmt.Sprintf("WITH g AS (%s), %s SELECT l_returnflag, l_linestatus, CAST(sum_qty AS VARCHAR), CAST(sum_base_price AS VARCHAR), "+
		"CAST(sum_disc_price AS VARCHAR), CAST(sum_charge AS VARCHAR), t0, t1, t2, CAST(count_order AS VARCHAR) "+
		"FROM %s ORDER BY l_returnflag, l_linestatus", base.String(), ctes, last)
}

// exactAvgProbe is the outcome of running q1ExactSQL.
type exactAvgProbe struct {
	check string
	equal bool
	times []time.Duration
	err   error
}

// probeExactAvg compares q1ExactSQL's answer with the origin's Q1 and
// times it on bare DuckDB, opts.rounds times.
func probeExactAvg(ctx context.Context, a *app.App, c *clients, q1 query, opts options) *exactAvgProbe {
	p := &exactAvgProbe{}
	qctx, cancel := context.WithTimeout(ctx, opts.timeout)
	defer cancel()
	want, err := benchutil.TextRows(qctx, c.origin.PgConn(), q1.sql)
	if err != nil {
		p.err = fmt.Errorf("origin: %w", err)
		return p
	}
	sql := q1ExactSQL(a.Engine.TableRef("lineitem"))
	got, err := duckdbText(qctx, a, sql)
	if err != nil {
		p.err = fmt.Errorf("duckdb: %w", err)
		return p
	}
	p.check, p.equal = compareRows(want, got)
	for range opts.rounds {
		began := time.Now()
		if err := drainDuckDB(qctx, a, sql); err != nil {
			p.err = fmt.Errorf("duckdb: %w", err)
			return p
		}
		p.times = append(p.times, time.Since(began))
	}
	return p
}

// duckdbText runs sql, whose columns are all VARCHAR, on the engine.
func duckdbText(ctx context.Context, a *app.App, sql string) ([]string, error) {
	rows, err := a.Engine.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals := rows.Values()
		fields := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				fields[i] = "NULL"
			} else {
				fields[i] = fmt.Sprint(v)
			}
		}
		out = append(out, strings.Join(fields, "|"))
	}
	return out, rows.Err()
}
