package encode

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/pgaccel/pgaccel/pgdef"
)

// registerTextFunctions registers pgdef.FuncText and pgdef.FuncToChar in the
// harness's DuckDB.
func (h *harness) registerTextFunctions() {
	h.t.Helper()
	ctx := context.Background()
	conn, err := h.duck.Conn(ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	defer conn.Close()
	for name, get := range map[string]func() ([]duckdb.ScalarFunc, error){pgdef.FuncText: TextFunctions, pgdef.FuncToChar: ToCharFunctions} {
		fs, err := get()
		if err != nil {
			h.t.Fatal(err)
		}
		if err := duckdb.RegisterScalarUDFSet(conn, name, fs...); err != nil {
			h.t.Fatal(err)
		}
	}
}

// duckText runs q (one row, one text column) on DuckDB.
func (h *harness) duckText(q string) (sql.NullString, error) {
	var out sql.NullString
	err := h.duck.QueryRow(q).Scan(&out)
	return out, err
}

// pgText runs q on Postgres under TimeZone tz.
func (h *harness) pgText(tz, q string) (sql.NullString, error) {
	var out sql.NullString
	ctx := context.Background()
	if err := h.pg.Exec(ctx, "SET TimeZone = '"+tz+"'").Close(); err != nil {
		return out, err
	}
	res := h.pg.ExecParams(ctx, q, nil, nil, nil, nil).Read()
	if res.Err != nil {
		return out, res.Err
	}
	if v := res.Rows[0][0]; v != nil {
		out = sql.NullString{String: string(v), Valid: true}
	}
	return out, nil
}

var textFunctionZones = []string{"UTC", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"}

// duckInstant is the DuckDB expression of the Postgres value v::typ as read
// under TimeZone tz: the same instant (or wall clock), built from
// Postgres's epoch in microseconds, with DuckDB's TimeZone UTC.
func (h *harness) duckInstant(tz, v, typ string) string {
	h.t.Helper()
	if strings.Contains(v, "infinity") {
		return "CAST('" + v + "' AS " + typ + ")"
	}
	us, err := h.pgText(tz, "SELECT (extract(epoch FROM '"+v+"'::"+typ+") * 1000000)::bigint")
	if err != nil {
		h.t.Fatal(err)
	}
	switch typ {
	case "date":
		return "CAST(make_timestamp(" + us.String + ") AS DATE)"
	case "timestamptz":
		return "CAST(make_timestamp(" + us.String + ") AS TIMESTAMPTZ)"
	}
	return "make_timestamp(" + us.String + ")"
}

func TestToChar_MatchesPostgres(t *testing.T) {
	h := newHarness(t)
	h.registerTextFunctions()
	if _, err := h.duck.Exec("SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
	formats := []string{
		"YYYY-MM-DD", "YYYY-MM", "YYYY", "YYYY-MM-DD HH24:MI:SS", "YYYY-MM-DD HH24:MI:SS.US", "HH12:MI:SS AM", "hh:mi pm",
		"FMDay", "Day", "DAY", "day", "Dy", "DY", "dy", "FMMonth", "Month", "MONTH", "month", "Mon", "MON", "mon",
		"Q", "\"Q\"Q YYYY", "WW IW W", "IYYY-IW", "IYYY IYY IY I", "DDD IDDD", "D ID", "J", "CC", "RM rm FMRM",
		"YYY YY Y", "Y,YYY", "DDth FMDDth ddth", "MMTH", "BC AD bc ad B.C. a.d.", "MS US FF1 FF3 FF6", "SSSS SSSSS",
		"A.M. p.m.", "FMHH24:FMMI", "YYYY\"年\"MM\"月\"", "Mon DD, YYYY", "\\\"YYYY\\\"", "YYYY-MM-DD\"T\"HH24:MI:SS",
		"Dd Hh Yy", "x yz !", "FMYYYY-FMMM-FMDD", "FX YYYY",
	}
	values := []string{"2024-01-05 13:04:05.123456", "2000-02-29 00:00:00", "1999-12-31 23:59:59.999999", "0044-03-15 12:00:00 BC",
		"0001-01-01 00:00:00", "2021-01-03 00:30:00", "2020-12-31 12:00:00", "10000-06-01 08:00:00", "2024-03-10 02:30:00", "2024-11-11 11:11:11",
		"infinity", "-infinity"}
	checked := 0
	for _, tz := range textFunctionZones {
		for _, ts := range values {
			for _, typ := range []string{"timestamp", "timestamptz", "date"} {
				v := ts
				if typ == "date" && !strings.Contains(ts, "infinity") {
					v, _, _ = strings.Cut(ts, " ")
					if strings.HasSuffix(ts, " BC") {
						v += " BC"
					}
				}
				dv := h.duckInstant(tz, v, typ)
				for _, f := range formats {
					lit := "'" + strings.ReplaceAll(f, "'", "''") + "'"
					want, err := h.pgText(tz, "SELECT to_char('"+v+"'::"+typ+", "+lit+")")
					if err != nil {
						t.Fatalf("to_char(%s %s, %s): %v", typ, v, f, err)
					}
					q := "SELECT " + pgdef.FuncToChar + "(" + dv + ", " + lit + ", '" + tz + "')"
					got, err := h.duckText(q)
					if err != nil {
						t.Errorf("%s: %v", q, err)
						continue
					}
					if got != want {
						t.Errorf("to_char(%s %s, %s) under %s: pgaccel %q, Postgres %q", typ, v, f, tz, got.String, want.String)
					}
					checked++
				}
			}
		}
	}
	t.Logf("%d to_char calls compared", checked)
}

func TestToChar_RefusesWhatItDoesNotPrint(t *testing.T) {
	for _, f := range []string{"YYYY TZ", "OF", "TMMonth", "DDSP", "tzh:tzm"} {
		if _, err := parseToChar(f); err == nil {
			t.Errorf("parseToChar(%q): no error", f)
		}
	}
}

func TestTextFunction_MatchesPostgres(t *testing.T) {
	h := newHarness(t)
	h.registerTextFunctions()
	if _, err := h.duck.Exec("SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
	checked := 0
	compare := func(tz, pgValue, duckValue string) {
		t.Helper()
		want, err := h.pgText(tz, "SELECT ("+pgValue+")::text")
		if err != nil {
			t.Fatalf("%s: %v", pgValue, err)
		}
		q := "SELECT " + pgdef.FuncText + "(" + duckValue + ", '" + tz + "')"
		got, err := h.duckText(q)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			return
		}
		if got != want {
			t.Errorf("%s::text under %s: pgaccel %q, Postgres %q", pgValue, tz, got.String, want.String)
		}
		checked++
	}
	instants := []string{"2024-01-05 13:04:05.123456", "2000-02-29 00:00:00", "0044-03-15 12:00:00 BC", "0001-01-01 00:00:00",
		"10000-06-01 08:00:00", "2024-03-10 02:30:00", "1883-11-18 17:00:00", "infinity", "-infinity"}
	for _, tz := range textFunctionZones {
		for _, v := range instants {
			for _, typ := range []string{"timestamp", "timestamptz", "date"} {
				w := v
				if typ == "date" && !strings.Contains(v, "infinity") {
					w, _, _ = strings.Cut(v, " ")
					if strings.HasSuffix(v, " BC") {
						w += " BC"
					}
				}
				compare(tz, "'"+w+"'::"+typ, h.duckInstant(tz, w, typ))
			}
		}
	}
	for _, v := range []string{"00:00:00", "12:34:56.5", "23:59:59.999999", "01:02:03.000001"} {
		compare("UTC", "'"+v+"'::time", "CAST('"+v+"' AS TIME)")
	}
	for _, v := range []string{"0", "-0", "1.5", "0.1", "1e300", "-1.7976931348623157e308", "5e-324", "NaN", "Infinity", "-Infinity", "123456789012345678", "1e-7", "3.4e38"} {
		compare("UTC", "'"+v+"'::float8", "CAST('"+v+"' AS DOUBLE)")
		if v != "1e300" && v != "-1.7976931348623157e308" && v != "5e-324" && v != "123456789012345678" {
			compare("UTC", "'"+v+"'::float4", "CAST('"+v+"' AS FLOAT)")
		}
	}
	for _, v := range []string{"", "00", "deadbeef", "5c27"} {
		compare("UTC", "'\\x"+v+"'::bytea", "from_hex('"+v+"')")
	}
	for _, v := range []string{"1 day", "-1 year -2 mons +3 days -04:05:06.789", "178000000 years", "00:00:00", "1 mon 2 days 00:00:00.000001", "-00:00:01", "0.5 seconds"} {
		r, err := h.pgText("UTC", "SELECT (extract(year FROM i)*12 + extract(month FROM i))::bigint || ',' || extract(day FROM i)::bigint || ',' || "+
			"((extract(hour FROM i)*3600 + extract(minute FROM i)*60 + extract(second FROM i))*1000000)::bigint FROM (SELECT '"+v+"'::interval AS i) s")
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(r.String, ",")
		compare("UTC", "'"+v+"'::interval", "to_months("+parts[0]+") + to_days("+parts[1]+") + to_microseconds("+parts[2]+")")
	}
	t.Logf("%d values compared", checked)
}

func TestPrintsAsDefaults_ByTheSettings(t *testing.T) {
	for params, want := range map[string]bool{
		"":                          true,
		"DateStyle=ISO, DMY":        true,
		"DateStyle=German, DMY":     false,
		"IntervalStyle=iso_8601":    false,
		"extra_float_digits=0":      false,
		"extra_float_digits=3":      true,
		"bytea_output=escape":       false,
		"TimeZone=America/New_York": true,
	} {
		m := map[string]string{}
		if k, v, ok := strings.Cut(params, "="); ok {
			m[k] = v
		}
		s, err := LoadSettings(m)
		if err != nil {
			t.Fatalf("%s: %v", params, err)
		}
		if got := s.PrintsAsDefaults(); got != want {
			t.Errorf("%q: PrintsAsDefaults %v, want %v", params, got, want)
		}
	}
}
