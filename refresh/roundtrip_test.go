package refresh

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/pgaccel/pgaccel/accelerator"
)

// The round trip loads a table holding every supported type, edge values
// included, and compares each stored value with the origin's. Each column
// has an origin expression that prints a canonical text and a renderer that
// prints the DuckDB driver's Go value the same way; a few use a DuckDB
// expression first (TIME through epoch_us, because the driver's time.Time
// cannot show 24:00:00).

// rtColumn is one column of the round trip.
type rtColumn struct {
	name, typ string
	origin    string // canonical text at the origin; %s is the column
	duck      string // DuckDB select expression; %s is the quoted column ("" = the column)
	render    func(any) (string, error)
}

const (
	epochText  = `CASE WHEN isfinite(%[1]s) THEN (extract(epoch from %[1]s) * 1000000)::bigint::text ELSE %[1]s::text END`
	dateText   = `CASE WHEN isfinite(%[1]s) THEN (%[1]s - date '1970-01-01')::text ELSE %[1]s::text END`
	ivText     = `(extract(year from %[1]s) * 12 + extract(month from %[1]s))::bigint::text || ' ' || extract(day from %[1]s)::bigint::text || ' ' || (extract(hour from %[1]s) * 3600000000 + extract(minute from %[1]s) * 60000000 + extract(microseconds from %[1]s))::bigint::text`
	plainText  = `%s::text`
	float4Bits = `encode(float4send(%s), 'hex')`
	float8Bits = `encode(float8send(%s), 'hex')`
)

var rtColumns = []rtColumn{
	{"b", "bool", plainText, "", renderBool},
	{"i2", "int2", plainText, "", renderInt},
	{"i4", "int4", plainText, "", renderInt},
	{"i8", "int8", plainText, "", renderInt},
	{"f4", "float4", float4Bits, "", renderFloat},
	{"f8", "float8", float8Bits, "", renderFloat},
	{"n", "numeric(12,4)", plainText, "", renderDecimal},
	{"nbig", "numeric(38,10)", plainText, "", renderDecimal},
	{"n18", "numeric(18,0)", plainText, "", renderDecimal},
	{"n3", "numeric(3,3)", plainText, "", renderDecimal},
	{"t", "text", plainText, "", renderString},
	{"vc", "varchar(10)", plainText, "", renderString},
	{"nm", "name", plainText, "", renderString},
	{"c", "char(6)", plainText, "", renderString}, // char::text drops the padding, as the load does
	{"d", "date", dateText, "", renderDate},
	{"tm", "time", `(extract(epoch from %s) * 1000000)::bigint::text`, "epoch_us(%s)", renderInt},
	{"ts", "timestamp", epochText, "", renderTimestamp},
	{"tstz", "timestamptz", epochText, "", renderTimestamp},
	{"iv", "interval", ivText, "", renderInterval},
	{"u", "uuid", plainText, "", renderUUID},
	{"j", "json", plainText, "", renderString},
	{"jb", "jsonb", plainText, "", renderString},
	{"by", "bytea", `encode(%s, 'hex')`, "", renderHex},
	{"ai", "int4[]", arrayOf(plainText), "", renderList(renderInt)},
	{"at", "text[]", arrayOf(plainText), "", renderList(renderString)},
	{"an", "numeric(10,2)[]", arrayOf(plainText), "", renderList(renderDecimal)},
	{"ats", "timestamptz[]", arrayOf(epochText), "", renderList(renderTimestamp)},
	{"ad", "date[]", arrayOf(dateText), "", renderList(renderDate)},
	{"ab", "bool[]", arrayOf(plainText), "", renderList(renderBool)},
	{"ac", "char(3)[]", arrayOf(plainText), "", renderList(renderString)},
	{"aiv", "interval[]", arrayOf(ivText), "", renderList(renderInterval)},
	{"au", "uuid[]", arrayOf(plainText), "", renderList(renderUUID)},
	{"aby", "bytea[]", arrayOf(`encode(%s, 'hex')`), "", renderList(renderHex)},
	{"af8", "float8[]", arrayOf(float8Bits), "", renderList(renderFloat)},
}

// arrayOf turns an element's canonical text into the array's: a JSON
// array of the elements' texts, in order.
func arrayOf(elem string) string {
	e := fmt.Sprintf(elem, "e")
	return `CASE WHEN %[1]s IS NULL THEN NULL ELSE coalesce((SELECT json_agg(` + e +
		` ORDER BY o) FROM unnest(%[1]s) WITH ORDINALITY AS x(e, o)), '[]')::text END`
}

// rtRows are the hand-written rows; rtGenerated adds many more.
const rtRows = `
INSERT INTO rt_types (id) VALUES (2);
INSERT INTO rt_types VALUES
(1, true, 1, 2, 3, 1.5, 2.25, 12.3456, 123.4567890123, 42, 0.5,
 'hello', 'world', 'nm', 'ab', '2024-02-29', '13:45:01.5', '2024-02-29 13:45:01.123456', '2024-02-29 13:45:01.123456+02',
 '1 year 2 mons 3 days 04:05:06.789', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"a": 1}', '{"a": 1}', '\x0102',
 '{1,2,3}', '{a,b}', '{1.50,2.25}', '{"2024-01-01 00:00:00+00"}', '{2024-01-01}', '{true,false}', '{ab,c}',
 '{"1 day"}', '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}', '{"\\x00"}', '{1.5}'),
(3, false, -32768, 2147483647, -9223372036854775808, 'NaN', '-Infinity', -99999999.9999,
 999999999999999999999999999.9999999999, -999999999999999999, -0.999,
 '', 'héllo✓ü', '', 'ab    ', 'infinity', '24:00:00', '-infinity', 'infinity',
 '-1 year -2 mons -3 days -04:05:06.000007', '00000000-0000-0000-0000-000000000000',
 '{"b": 1,   "a": [1, 2]}', '{"b": 1,   "a": [1, 2], "aa": null}', '\x00ff00',
 '{1,NULL,3}', '{"a","",NULL,"q\"uote, x"}', '{NULL,-0.01}', '{infinity,-infinity,NULL}', '{-infinity,infinity}', '{}', '{"a  ","   "}',
 '{"-1 mons 1 day -00:00:00.000001",NULL}', '{}', '{"\\x",NULL}', '{NaN,-0,Infinity}'),
(4, NULL, 32767, -2147483648, 9223372036854775807, '-0', '-0', 0, -0.0000000001, 0, 0,
 'line1
line2	tab \ backslash', 'x', 'x', '', '-infinity', '00:00:00.000001', '0001-01-01 00:00:00', '9999-12-31 23:59:59.999999+00',
 '1 mon 2 days 00:00:00.000003', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '[]', '{"é": "\u00e9", "n": 1.500}', '',
 '{}', '{""}', '{}', '{}', '{}', '{NULL}', '{}', '{}', '{}', '{}', '{}'),
(5, true, 0, 0, 0, 'Infinity', 'NaN', 0.0001, -999999999999999999999999999.9999999999, 1, 0.001,
 repeat('long text ', 1000), '0123456789', repeat('n', 63), 'abcdef', '4713-11-24 BC', '23:59:59.999999',
 '0001-01-01 00:00:00 BC', '1970-01-01 00:00:00+00', '0 seconds', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
 'null', 'null', decode(repeat('00ff', 5000), 'hex'),
 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
(6, false, 1, 1, 1, 1.17549435e-38, 4.9e-324, 1, 1, 1, 0.1,
 'x', 'x', 'x', 'x', '1999-12-31', '12:00:00', '1999-12-31 23:59:59.999999', '2000-01-01 00:00:00+14',
 '-178000000 years', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '"str"', '"str"', '\x',
 '{-2147483648,2147483647}', '{"{}"}', '{99999999.99}', '{"2000-01-01 00:00:00.000001+00"}', '{1970-01-01}', '{NULL,true}', '{"a"}',
 '{"178000000 years"}', '{NULL}', '{"\\xdeadbeef"}', '{1e308,-1e-308}');
`

// rtGenerated adds rows with varied values and NULLs, enough for several
// chunks on several threads.
const rtGenerated = `
INSERT INTO rt_types
SELECT g, g % 2 = 0, (g % 30000)::int2, g * 7, g::int8 * 1000003, g / 7.0, g / 3.0,
       (g * 1.0001)::numeric(12,4), (g::numeric * 123456789.0123456789)::numeric(38,10), g * 11, ((g % 999) / 1000.0)::numeric(3,3),
       'row ' || g, left('v' || g, 10), 'n' || g, left('c' || g, 6),
       date '2000-01-01' + g, (g * interval '1 second 1 microsecond')::time,
       timestamp '2020-01-01' + g * interval '1 minute 1 microsecond', timestamptz '2020-01-01 00:00+00' - g * interval '1 hour 1 microsecond',
       make_interval(months => g % 25 - 12, days => g % 61 - 30, secs => (g % 100000) / 1000.0 - 50),
       md5(g::text)::uuid, json_build_object('g', g)::json, jsonb_build_object('g', g, 'h', 'x' || g),
       decode(md5(g::text), 'hex'),
       ARRAY[g, NULL, -g], ARRAY['a' || g, NULL], ARRAY[(g / 100.0)::numeric(10,2)],
       ARRAY[timestamptz '2020-01-01 00:00+00' + g * interval '1 second'], ARRAY[date '2000-01-01' - g],
       ARRAY[g % 3 = 0], ARRAY[left('x' || g, 3)], ARRAY[g * interval '1 microsecond'], ARRAY[md5(g::text)::uuid],
       ARRAY[decode(md5(g::text), 'hex')], ARRAY[g / 9.0::float8]
FROM generate_series(100, 6000) g;
UPDATE rt_types SET t = NULL, d = NULL, tstz = NULL, ai = NULL, n = NULL WHERE id >= 100 AND id % 7 = 0;
`

func TestFullRefresh_RoundTripIsLossless(t *testing.T) {
	var defs []string
	for _, c := range rtColumns {
		defs = append(defs, c.name+" "+c.typ)
	}
	// Columns whose type cannot be accelerated, which must be reported.
	unsupported := map[string]string{"p": "point", "tz": "timetz", "ir": "int4range", "bits": "bit(3)"}
	for n, typ := range unsupported {
		defs = append(defs, n+" "+typ)
	}
	// Numerics a DECIMAL cannot hold (mixed display scales, wider than
	// 38 digits): held as numeric_out's text.
	asText := map[string]string{"nn": "numeric", "n40": "numeric(40,2)"}
	for n, typ := range asText {
		defs = append(defs, n+" "+typ)
	}
	originExec(t, "DROP TABLE IF EXISTS rt_types; CREATE TABLE rt_types (id int PRIMARY KEY, "+strings.Join(defs, ", ")+")")
	originExec(t, rtRows)
	originExec(t, rtGenerated)
	originExec(t, "UPDATE rt_types SET p = point(id, id), nn = id / 3.0, n40 = id, tz = '12:00+02', ir = int4range(1, id), bits = B'101'")

	cfg := parseConfig(t, "", t.TempDir(), dataset("rt_types", "memory", ""))
	h := newHarness(t, cfg)
	if err := h.run.Refresh(context.Background(), "rt_types"); err != nil {
		t.Fatal(err)
	}
	st := h.state(t, "rt_types")
	if !st.Loaded || st.Status != "ready" || st.Rows != 5907 || st.Error != "" || st.Generation != 1 {
		t.Errorf("state = %+v", st)
	}
	for _, c := range st.Columns {
		_, bad := unsupported[c.Name]
		// The data holds TIME 24:00:00, which the driver reads back as
		// 00:00:00, so the column is left to the origin.
		bad = bad || c.TypeName == "time without time zone"
		if c.Accelerated == bad {
			t.Errorf("column %s (%s): Accelerated = %v", c.Name, c.TypeName, c.Accelerated)
		}
	}
	if got := len(st.Columns); got != 1+len(rtColumns)+len(unsupported)+len(asText) {
		t.Errorf("%d columns reported", got)
	}
	wantText := originQuery(t, "SELECT id::text, nn::text, n40::text FROM rt_types ORDER BY rt_types.id")
	gotText := duckQuery(t, h.eng, "SELECT id, nn, n40 FROM "+h.eng.TableRef("rt_types")+" ORDER BY id")
	if len(gotText) != len(wantText) {
		t.Fatalf("DuckDB has %d rows, the origin %d", len(gotText), len(wantText))
	}
	for i := range wantText {
		for j := 1; j < 3; j++ {
			g, _ := gotText[i][j].(string)
			if w := wantText[i][j]; w == nil && gotText[i][j] != nil || w != nil && *w != g {
				t.Fatalf("row %s column %d: origin %s, DuckDB %v", *wantText[i][0], j, show(w), gotText[i][j])
			}
		}
	}

	var originSel, duckSel []string
	for _, c := range rtColumns {
		originSel = append(originSel, fmt.Sprintf(c.origin, c.name))
		d := `"` + c.name + `"`
		if c.duck != "" {
			d = fmt.Sprintf(c.duck, d)
		}
		duckSel = append(duckSel, d)
	}
	want := originQuery(t, "SELECT id::text, "+strings.Join(originSel, ", ")+" FROM rt_types ORDER BY rt_types.id")
	got := duckQuery(t, h.eng, "SELECT id, "+strings.Join(duckSel, ", ")+" FROM "+h.eng.TableRef("rt_types")+" ORDER BY id")
	if len(got) != len(want) {
		t.Fatalf("DuckDB has %d rows, the origin %d", len(got), len(want))
	}
	mismatches := 0
	for i := range want {
		if id := fmt.Sprint(got[i][0]); id != *want[i][0] {
			t.Fatalf("row %d: DuckDB has id %s, the origin %s", i, id, *want[i][0])
		}
		for j, c := range rtColumns {
			if !columnAccelerated(st, c.name) {
				continue // not served: its values need not be kept
			}
			w, g := want[i][j+1], got[i][j+1]
			var gs *string
			if g != nil {
				s, err := c.render(g)
				if err != nil {
					t.Fatalf("row %s column %s: %v", *want[i][0], c.name, err)
				}
				gs = &s
			}
			if !sameText(w, gs, strings.HasSuffix(c.typ, "[]")) {
				mismatches++
				if mismatches <= 20 {
					t.Errorf("row %s column %s (%s): origin %s, DuckDB %s (Go %T %v)", *want[i][0], c.name, c.typ, show(w), show(gs), g, g)
				}
			}
		}
	}
}

// sameText compares canonical texts; arrays as JSON values.
func sameText(a, b *string, isArray bool) bool {
	if a == nil || b == nil {
		return a == b
	}
	if !isArray {
		return *a == *b
	}
	var x, y any
	if json.Unmarshal([]byte(*a), &x) != nil || json.Unmarshal([]byte(*b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func show(s *string) string {
	if s == nil {
		return "NULL"
	}
	if len(*s) > 80 {
		return fmt.Sprintf("%q...", (*s)[:80])
	}
	return fmt.Sprintf("%q", *s)
}

func renderBool(v any) (string, error) {
	b, ok := v.(bool)
	if !ok {
		return "", fmt.Errorf("got %T, want bool", v)
	}
	return fmt.Sprint(b), nil
}

func renderInt(v any) (string, error) {
	switch x := v.(type) {
	case int16, int32, int64:
		return fmt.Sprint(x), nil
	}
	return "", fmt.Errorf("got %T, want an integer", v)
}

func renderFloat(v any) (string, error) {
	switch x := v.(type) {
	case float32:
		return fmt.Sprintf("%08x", math.Float32bits(x)), nil
	case float64:
		return fmt.Sprintf("%016x", math.Float64bits(x)), nil
	}
	return "", fmt.Errorf("got %T, want a float", v)
}

// renderDecimal prints a DECIMAL as Postgres prints numeric(p,s): all s
// fractional digits.
func renderDecimal(v any) (string, error) {
	d, ok := v.(duckdb.Decimal)
	if !ok {
		return "", fmt.Errorf("got %T, want duckdb.Decimal", v)
	}
	digits := new(big.Int).Abs(d.Value).String()
	if s := int(d.Scale); s > 0 {
		if len(digits) <= s {
			digits = strings.Repeat("0", s-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-s] + "." + digits[len(digits)-s:]
	}
	if d.Value.Sign() < 0 {
		digits = "-" + digits
	}
	return digits, nil
}

func renderString(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("got %T, want string", v)
	}
	return s, nil
}

// renderDate prints days since 1970-01-01, or ±infinity.
func renderDate(v any) (string, error) {
	tm, ok := v.(time.Time)
	if !ok {
		return "", fmt.Errorf("got %T, want time.Time", v)
	}
	switch {
	case tm.Equal(accelerator.InfinityDate):
		return "infinity", nil
	case tm.Equal(accelerator.NegInfinityDate):
		return "-infinity", nil
	}
	if tm.Unix()%86400 != 0 {
		return "", fmt.Errorf("date %v is not at midnight", tm)
	}
	return fmt.Sprint(tm.Unix() / 86400), nil
}

// renderTimestamp prints microseconds since the epoch, or ±infinity.
func renderTimestamp(v any) (string, error) {
	tm, ok := v.(time.Time)
	if !ok {
		return "", fmt.Errorf("got %T, want time.Time", v)
	}
	switch {
	case tm.Equal(accelerator.InfinityTimestamp):
		return "infinity", nil
	case tm.Equal(accelerator.NegInfinityTimestamp):
		return "-infinity", nil
	}
	return fmt.Sprint(tm.UnixMicro()), nil
}

func renderInterval(v any) (string, error) {
	iv, ok := v.(duckdb.Interval)
	if !ok {
		return "", fmt.Errorf("got %T, want duckdb.Interval", v)
	}
	return fmt.Sprintf("%d %d %d", iv.Months, iv.Days, iv.Micros), nil
}

func renderUUID(v any) (string, error) {
	b, ok := v.([]byte)
	if !ok || len(b) != 16 {
		return "", fmt.Errorf("got %T %v, want 16 bytes", v, v)
	}
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}

func renderHex(v any) (string, error) {
	b, ok := v.([]byte)
	if !ok {
		return "", fmt.Errorf("got %T, want []byte", v)
	}
	return hex.EncodeToString(b), nil
}

// renderList prints a LIST as a JSON array of its elements' texts.
func renderList(elem func(any) (string, error)) func(any) (string, error) {
	return func(v any) (string, error) {
		list, ok := v.([]any)
		if !ok {
			return "", fmt.Errorf("got %T, want []any", v)
		}
		out := make([]*string, len(list))
		for i, e := range list {
			if e == nil {
				continue
			}
			s, err := elem(e)
			if err != nil {
				return "", fmt.Errorf("element %d: %w", i+1, err)
			}
			out[i] = &s
		}
		b, err := json.Marshal(out)
		return string(b), err
	}
}
