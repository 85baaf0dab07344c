package encode

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgaccel/pgaccel/internal/pgtest"
	"github.com/pgaccel/pgaccel/pgdef"
)

var srv *pgtest.Server

func TestMain(m *testing.M) { pgtest.RunMain(m, &srv) }

// harness holds one origin session and one DuckDB database.
type harness struct {
	t    testing.TB
	pg   *pgconn.PgConn
	duck *sql.DB
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pg, err := pgconn.Connect(ctx, srv.SuperDSN())
	if err != nil {
		t.Fatalf("connect to the test Postgres: %v", err)
	}
	duck, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatalf("open DuckDB: %v", err)
	}
	duck.SetMaxOpenConns(1)
	t.Cleanup(func() {
		pg.Close(context.Background())
		duck.Close()
	})
	return &harness{t: t, pg: pg, duck: duck}
}

// pgResult is one value read from Postgres.
type pgResult struct {
	oid    uint32
	typmod int32
	value  []byte
	null   bool
}

// query runs sql (one row, one column) on Postgres with the given parameters
// and result format.
func (h *harness) query(sql string, params [][]byte, paramOIDs []uint32, paramFormats []int16, format int16) (pgResult, error) {
	res := h.pg.ExecParams(context.Background(), sql, params, paramOIDs, paramFormats, []int16{format}).Read()
	if res.Err != nil {
		return pgResult{}, res.Err
	}
	if len(res.Rows) != 1 || len(res.FieldDescriptions) != 1 {
		return pgResult{}, fmt.Errorf("%s: %d rows of %d columns, want 1 of 1", sql, len(res.Rows), len(res.FieldDescriptions))
	}
	fd := res.FieldDescriptions[0]
	v := res.Rows[0][0]
	return pgResult{oid: fd.DataTypeOID, typmod: fd.TypeModifier, value: v, null: v == nil}, nil
}

// mustQuery is query that fails the test on error.
func (h *harness) mustQuery(sql string, format int16) pgResult {
	h.t.Helper()
	r, err := h.query(sql, nil, nil, nil, format)
	if err != nil {
		h.t.Fatalf("Postgres: %s: %v", sql, err)
	}
	return r
}

// exec runs statements on Postgres.
func (h *harness) exec(sql string) {
	h.t.Helper()
	if _, err := h.pg.Exec(context.Background(), sql).ReadAll(); err != nil {
		h.t.Fatalf("Postgres: %s: %v", sql, err)
	}
}

// duckValue evaluates a DuckDB expression and returns its value and type name.
func (h *harness) duckValue(expr string, args ...any) (any, string, error) {
	rows, err := h.duck.Query("SELECT "+expr, args...)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, "", err
	}
	if !rows.Next() {
		return nil, "", fmt.Errorf("DuckDB: no row for %s", expr)
	}
	var v any
	if err := rows.Scan(&v); err != nil {
		return nil, "", err
	}
	return v, cts[0].DatabaseTypeName(), rows.Err()
}

// session is one combination of session settings.
type session struct {
	name string
	sets []string // SET statements
}

// settings applies s on the Postgres session and returns the Settings a
// proxy would load from what Postgres reports.
func (h *harness) settings(s session) *Settings {
	h.t.Helper()
	h.exec("RESET ALL")
	for _, set := range s.sets {
		h.exec(set)
	}
	show := func(name string) string {
		return string(h.mustQuery("SHOW "+name, 0).value)
	}
	params := map[string]string{
		"TimeZone":           h.pg.ParameterStatus("TimeZone"),
		"DateStyle":          h.pg.ParameterStatus("DateStyle"),
		"IntervalStyle":      h.pg.ParameterStatus("IntervalStyle"),
		"client_encoding":    h.pg.ParameterStatus("client_encoding"),
		"integer_datetimes":  h.pg.ParameterStatus("integer_datetimes"),
		"extra_float_digits": show("extra_float_digits"),
		"bytea_output":       show("bytea_output"),
	}
	st, err := LoadSettings(params)
	if err != nil {
		h.t.Fatalf("LoadSettings(%v): %v", params, err)
	}
	return st
}

// canonical is the session in which values are read to build DuckDB
// expressions.
var canonical = session{name: "canonical", sets: []string{
	"SET TimeZone = 'UTC'", "SET DateStyle = 'ISO, MDY'", "SET IntervalStyle = 'postgres'",
	"SET extra_float_digits = 1", "SET bytea_output = 'hex'",
}}

// duckExpr builds a DuckDB expression for the Postgres value whose canonical
// text is text and whose binary form is bin, of Postgres type oid, cast to
// the DuckDB type duckElem. It returns the expression and its arguments.
func duckExpr(oid uint32, text, bin []byte, duckElem string) (string, []any) {
	switch oid {
	case pgdef.OIDBool:
		if string(text) == "t" {
			return "true", nil
		}
		return "false", nil
	case pgdef.OIDInt2, pgdef.OIDInt4, pgdef.OIDInt8:
		return fmt.Sprintf("(%s)::%s", text, duckElem), nil
	case pgdef.OIDFloat4, pgdef.OIDFloat8, pgdef.OIDNumeric, pgdef.OIDUUID:
		return fmt.Sprintf("'%s'::%s", text, duckElem), nil
	case pgdef.OIDText, pgdef.OIDVarchar, pgdef.OIDName, pgdef.OIDJSON, pgdef.OIDJSONB:
		return "?::VARCHAR", []any{string(text)}
	case pgdef.OIDBpchar:
		return "?::VARCHAR", []any{strings.TrimRight(string(text), " ")}
	case pgdef.OIDBytea:
		return "?::BLOB", []any{append([]byte{}, bin...)}
	case pgdef.OIDDate:
		switch d := int32(binary.BigEndian.Uint32(bin)); d {
		case pgDateInf:
			return "'infinity'::DATE", nil
		case pgDateNInf:
			return "'-infinity'::DATE", nil
		default:
			return fmt.Sprintf("(DATE '2000-01-01' + (%d))", d), nil
		}
	case pgdef.OIDTime:
		return fmt.Sprintf("(TIME '00:00:00' + to_microseconds(%d))", int64(binary.BigEndian.Uint64(bin))), nil
	case pgdef.OIDTimestamp, pgdef.OIDTimestamptz:
		us := int64(binary.BigEndian.Uint64(bin))
		switch us {
		case 1<<63 - 1:
			return fmt.Sprintf("'infinity'::%s", duckElem), nil
		case -1 << 63:
			return fmt.Sprintf("'-infinity'::%s", duckElem), nil
		}
		fn := "make_timestamp"
		if oid == pgdef.OIDTimestamptz {
			fn = "make_timestamptz"
		}
		return fmt.Sprintf("%s(%d::BIGINT)::%s", fn, us+pgEpochMicros, duckElem), nil
	case pgdef.OIDInterval:
		us := int64(binary.BigEndian.Uint64(bin))
		days := int32(binary.BigEndian.Uint32(bin[8:]))
		months := int32(binary.BigEndian.Uint32(bin[12:]))
		return fmt.Sprintf("(to_months(%d) + to_days(%d) + to_microseconds(%d))", months, days, us), nil
	}
	panic(fmt.Sprintf("duckExpr: no mapping for OID %d", oid))
}

// loadDuck reads the Postgres value `lit::pgType` in the canonical session
// and builds the same value in DuckDB, as duckType. It returns DuckDB's
// value and type name.
func (h *harness) loadDuck(lit, pgType, duckType string) (any, string, error) {
	text := h.mustQuery(fmt.Sprintf("SELECT (%s)::%s", lit, pgType), 0)
	if text.null {
		return h.duckValue("NULL::" + duckType)
	}
	info := types[text.oid]
	if info.elem == 0 {
		bin := h.mustQuery(fmt.Sprintf("SELECT (%s)::%s", lit, pgType), 1)
		expr, args := duckExpr(text.oid, text.value, bin.value, duckType)
		return h.duckValue(expr, args...)
	}
	// Arrays: build a DuckDB list from the elements.
	elemDuck := strings.TrimSuffix(duckType, "[]")
	q := fmt.Sprintf("SELECT u FROM unnest((%s)::%s) WITH ORDINALITY AS x(u, n) ORDER BY n", lit, pgType)
	rt := h.pg.ExecParams(context.Background(), q, nil, nil, nil, []int16{0}).Read()
	rb := h.pg.ExecParams(context.Background(), q, nil, nil, nil, []int16{1}).Read()
	if rt.Err != nil || rb.Err != nil {
		return nil, "", fmt.Errorf("unnest %s: %v %v", lit, rt.Err, rb.Err)
	}
	var exprs []string
	var args []any
	for i := range rt.Rows {
		if rt.Rows[i][0] == nil {
			exprs = append(exprs, "NULL")
			continue
		}
		e, a := duckExpr(info.elem, rt.Rows[i][0], rb.Rows[i][0], elemDuck)
		exprs = append(exprs, e)
		args = append(args, a...)
	}
	return h.duckValue(fmt.Sprintf("[%s]::%s", strings.Join(exprs, ", "), duckType), args...)
}
