package gen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Field is one column of a result as its RowDescription says.
type Field struct {
	Name      string
	OID       uint32
	Mod       int32
	Size      int16
	Format    int16
	TableOID  uint32
	TableAttr uint16
}

// Error is an ErrorResponse's fields that must match.
type Error struct {
	Code, Message, Detail, Hint string
	Position                    int32
}

func (e *Error) String() string {
	return fmt.Sprintf("ERROR %s: %s (detail %q hint %q position %d)", e.Code, e.Message, e.Detail, e.Hint, e.Position)
}

// Result is what a client saw of one statement.
type Result struct {
	Fields []Field
	Rows   [][][]byte // nil cells are NULL
	Tag    string
	Err    *Error // rows sent before an error are not compared
}

// Verdict is how two results compare.
type Verdict int

const (
	// Same: byte for byte (rows in order when ordered).
	Same Verdict = iota
	// Tie: the rows differ only in values Postgres holds equal but
	// prints differently (-0 and 0, 1.5 and 1.50, '1 mon' and '30 days',
	// char(n) padding), where Postgres itself may return either: one of
	// tied rows kept by GROUP BY, DISTINCT, a set operation, min/max or a
	// LIMIT through tied rows.
	Tie
	// Differ: a wrong answer (or error).
	Differ
)

func (v Verdict) String() string {
	return [...]string{"same", "tie", "differ"}[v]
}

// Opts say how a statement's rows may legitimately differ.
type Opts struct {
	// Ordered: the statement orders by every output column, so rows
	// come in the same order, up to rows that tie (equal as Postgres
	// compares them), which may come in any order.
	Ordered bool
	// Limited: LIMIT or OFFSET may cut through a run of tied rows, so
	// the first and last runs may keep different ones of them.
	Limited bool
	// MayTie: the statement keeps one of several values Postgres holds
	// equal (Query.MayTie), so the rows may differ by ties anywhere.
	MayTie bool
}

// Compare compares the origin's result with pgaccel's.
func Compare(origin, proxy Result, o Opts) (Verdict, string) {
	if (origin.Err == nil) != (proxy.Err == nil) {
		return Differ, fmt.Sprintf("origin: %s\npgaccel: %s", origin.Summary(), proxy.Summary())
	}
	if origin.Err != nil {
		if *origin.Err != *proxy.Err {
			return Differ, fmt.Sprintf("origin: %s\npgaccel: %s", origin.Err, proxy.Err)
		}
		return Same, ""
	}
	if len(origin.Fields) != len(proxy.Fields) {
		return Differ, fmt.Sprintf("columns: origin %v, pgaccel %v", origin.Fields, proxy.Fields)
	}
	for i := range origin.Fields {
		if origin.Fields[i] != proxy.Fields[i] {
			return Differ, fmt.Sprintf("column %d: origin %+v, pgaccel %+v", i+1, origin.Fields[i], proxy.Fields[i])
		}
	}
	if origin.Tag != proxy.Tag {
		return Differ, fmt.Sprintf("command tag: origin %q, pgaccel %q\n%s", origin.Tag, proxy.Tag, rowDiff(origin, proxy))
	}
	if len(origin.Rows) != len(proxy.Rows) {
		return Differ, fmt.Sprintf("rows: origin %d, pgaccel %d\n%s", len(origin.Rows), len(proxy.Rows), rowDiff(origin, proxy))
	}
	keys := func(r Result) []string {
		out := make([]string, len(r.Rows))
		for i, row := range r.Rows {
			out[i] = rowKey(r.Fields, row)
		}
		return out
	}
	exact := func(r Result) []string {
		out := make([]string, len(r.Rows))
		for i, row := range r.Rows {
			out[i] = rowBytes(row)
		}
		return out
	}
	ok, pk := keys(origin), keys(proxy)
	ob, pb := exact(origin), exact(proxy)
	tie := func() (Verdict, string) {
		if o.MayTie {
			return Tie, rowDiff(origin, proxy)
		}
		return Differ, "values Postgres holds equal printed differently where Postgres has one answer:\n" + rowDiff(origin, proxy)
	}
	if !o.Ordered {
		switch {
		case sameMultiset(ob, pb):
			return Same, ""
		case sameMultiset(ok, pk):
			return tie()
		}
		return Differ, rowDiff(origin, proxy)
	}
	// Position by position the rows must tie; within each run of tied
	// rows the exact rows must be the same multiset, but in the runs a
	// LIMIT or OFFSET may cut.
	for i := range ok {
		if ok[i] != pk[i] {
			return Differ, fmt.Sprintf("row %d (in ORDER BY order):\n  origin:  %s\n  pgaccel: %s", i+1,
				origin.FormatRow(i), proxy.FormatRow(i))
		}
	}
	tied := false
	for start := 0; start < len(ok); {
		end := start + 1
		for end < len(ok) && ok[end] == ok[start] {
			end++
		}
		cut := o.Limited && (start == 0 || end == len(ok))
		if !cut && !sameMultiset(ob[start:end], pb[start:end]) {
			tied = true
		}
		start = end
	}
	if tied {
		return tie()
	}
	return Same, ""
}

func sameMultiset(a, b []string) bool {
	x, y := append([]string(nil), a...), append([]string(nil), b...)
	sort.Strings(x)
	sort.Strings(y)
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return len(x) == len(y)
}

// Summary is one line about the result.
func (r Result) Summary() string {
	if r.Err != nil {
		return r.Err.String()
	}
	return fmt.Sprintf("%d rows, tag %s", len(r.Rows), r.Tag)
}

// FormatRow shows row i.
func (r Result) FormatRow(i int) string {
	row := r.Rows[i]
	parts := make([]string, len(row))
	for j, v := range row {
		switch {
		case v == nil:
			parts[j] = "NULL"
		case j < len(r.Fields) && r.Fields[j].Format == 1:
			parts[j] = fmt.Sprintf("\\x%x", v)
		default:
			parts[j] = strconv.Quote(string(v))
		}
	}
	return strings.Join(parts, " | ")
}

// String shows the whole result, for failure messages.
func (r Result) String() string {
	var b strings.Builder
	for _, f := range r.Fields {
		fmt.Fprintf(&b, "col %q type=%d mod=%d size=%d fmt=%d tbl=%d att=%d\n", f.Name, f.OID, f.Mod, f.Size, f.Format, f.TableOID, f.TableAttr)
	}
	for i := range r.Rows {
		if i == 50 {
			fmt.Fprintf(&b, "... %d rows more\n", len(r.Rows)-50)
			break
		}
		fmt.Fprintf(&b, "row %s\n", r.FormatRow(i))
	}
	if r.Err != nil {
		b.WriteString(r.Err.String() + "\n")
	} else {
		fmt.Fprintf(&b, "tag %s\n", r.Tag)
	}
	return b.String()
}

// rowDiff shows the rows one result has and the other has not (as
// multisets), a few of each.
func rowDiff(origin, proxy Result) string {
	count := map[string]int{}
	byKey := map[string]string{}
	for i, row := range origin.Rows {
		k := rowBytes(row)
		count[k]++
		byKey[k] = origin.FormatRow(i)
	}
	var onlyProxy []string
	for i, row := range proxy.Rows {
		k := rowBytes(row)
		if count[k] > 0 {
			count[k]--
			continue
		}
		onlyProxy = append(onlyProxy, proxy.FormatRow(i))
	}
	var onlyOrigin []string
	for i, row := range origin.Rows {
		k := rowBytes(row)
		if count[k] > 0 {
			count[k]--
			onlyOrigin = append(onlyOrigin, origin.FormatRow(i))
		}
	}
	var b strings.Builder
	show := func(label string, rows []string) {
		for i, r := range rows {
			if i == 5 {
				fmt.Fprintf(&b, "  %s: ... %d more\n", label, len(rows)-5)
				break
			}
			fmt.Fprintf(&b, "  %s: %s\n", label, r)
		}
	}
	show("only at the origin", onlyOrigin)
	show("only through pgaccel", onlyProxy)
	return b.String()
}

func rowBytes(row [][]byte) string {
	var b bytes.Buffer
	for _, v := range row {
		if v == nil {
			b.WriteString("\xffN")
			continue
		}
		fmt.Fprintf(&b, "%d:", len(v))
		b.Write(v)
	}
	return b.String()
}

// rowKey is the row with each value in the form Postgres compares it by,
// as far as the generator's types print equal values differently.
func rowKey(fields []Field, row [][]byte) string {
	var b strings.Builder
	for i, v := range row {
		if v == nil {
			b.WriteString("\xffN")
			continue
		}
		k := string(v)
		if i < len(fields) {
			k = valueKey(fields[i], v)
		}
		fmt.Fprintf(&b, "%d:%s", len(k), k)
	}
	return b.String()
}

// valueKey is the form of one value Postgres compares it by: floats'
// zero without its sign, numerics without trailing zeros, intervals as
// microseconds (a month is 30 days, a day 24 hours), char(n) without
// trailing spaces. Anything else is its bytes.
func valueKey(f Field, v []byte) string {
	binaryFmt := f.Format == 1
	switch f.OID {
	case 700, 701:
		var x float64
		switch {
		case binaryFmt && len(v) == 4:
			x = float64(math.Float32frombits(binary.BigEndian.Uint32(v)))
		case binaryFmt && len(v) == 8:
			x = math.Float64frombits(binary.BigEndian.Uint64(v))
		default:
			var err error
			if x, err = strconv.ParseFloat(string(v), 64); err != nil {
				return string(v)
			}
		}
		if x == 0 {
			return "0"
		}
		if math.IsNaN(x) {
			return "NaN"
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case 1700:
		s := string(v)
		if binaryFmt {
			var ok bool
			if s, ok = numericText(v); !ok {
				return string(v)
			}
		}
		return trimNumeric(s)
	case 1186:
		if binaryFmt && len(v) == 16 {
			us := int64(binary.BigEndian.Uint64(v[0:8]))
			days := int64(int32(binary.BigEndian.Uint32(v[8:12])))
			months := int64(int32(binary.BigEndian.Uint32(v[12:16])))
			return intervalKey(months, days, us)
		}
		if k, ok := parseInterval(string(v)); ok {
			return k
		}
		return string(v)
	case 1042:
		if f.Mod < 0 {
			// A char(n)'s values are padded to n; a bpchar without a
			// length keeps its trailing spaces as they came.
			return strings.TrimRight(string(v), " ")
		}
	}
	return string(v)
}

// trimNumeric drops a numeric text's trailing fractional zeros and the
// sign of zero.
func trimNumeric(s string) string {
	if strings.ContainsAny(s, "eE") || !strings.Contains(s, ".") {
		if s == "-0" {
			return "0"
		}
		return s
	}
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" || s == "" || s == "-" {
		return "0"
	}
	return s
}

// numericText decodes a binary numeric into its text.
func numericText(v []byte) (string, bool) {
	if len(v) < 8 {
		return "", false
	}
	n := int(binary.BigEndian.Uint16(v[0:2]))
	weight := int(int16(binary.BigEndian.Uint16(v[2:4])))
	sign := binary.BigEndian.Uint16(v[4:6])
	if len(v) != 8+2*n {
		return "", false
	}
	switch sign {
	case 0xC000:
		return "NaN", true
	case 0xD000:
		return "Infinity", true
	case 0xF000:
		return "-Infinity", true
	}
	r := new(big.Rat)
	base := big.NewRat(10000, 1)
	for i := 0; i < n; i++ {
		d := int64(binary.BigEndian.Uint16(v[8+2*i:]))
		exp := weight - i
		term := new(big.Rat).SetInt64(d)
		p := new(big.Rat).SetInt64(1)
		for e := 0; e < abs(exp); e++ {
			p.Mul(p, base)
		}
		if exp >= 0 {
			term.Mul(term, p)
		} else {
			term.Quo(term, p)
		}
		r.Add(r, term)
	}
	if sign == 0x4000 {
		r.Neg(r)
	}
	return r.FloatString(4 * max(n-weight-1, 0)), true
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func intervalKey(months, days, us int64) string {
	total := new(big.Int).SetInt64(months*30 + days)
	total.Mul(total, big.NewInt(86400_000_000))
	total.Add(total, big.NewInt(us))
	return "iv:" + total.String()
}

var (
	ivUnit     = regexp.MustCompile(`^([+-]?\d+(?:\.\d+)?) (years?|mons?|days?|hours?|mins?|secs?)$`)
	ivTime     = regexp.MustCompile(`^([+-])?(\d+):(\d\d)(?::(\d\d)(?:\.(\d{1,6}))?)?$`)
	ivYM       = regexp.MustCompile(`^([+-])?(\d+)-(\d+)$`)
	ivISO      = regexp.MustCompile(`^P(?:([+-]?\d+)Y)?(?:([+-]?\d+)M)?(?:([+-]?\d+)D)?(?:T(?:([+-]?\d+)H)?(?:([+-]?\d+)M)?(?:([+-]?\d+(?:\.\d+)?)S)?)?$`)
	ivVerbose  = regexp.MustCompile(`^@ `)
	ivSQLFirst = regexp.MustCompile(`^[+-]?\d+$`)
)

// parseInterval reads an interval as any IntervalStyle prints it into its
// key: postgres ("1 year 2 mons -3 days +04:05:06.789"), postgres_verbose
// ("@ 1 year 2 mons -3 days 4 hours 5 mins 6.789 secs ago"), sql_standard
// ("+1-2 -3 +4:05:06.789") and iso_8601 ("P1Y2M-3DT4H5M6.789S").
func parseInterval(s string) (string, bool) {
	if m := ivISO.FindStringSubmatch(s); m != nil && s != "P" {
		n := func(i int) int64 { v, _ := strconv.ParseInt(m[i], 10, 64); return v }
		secs, _ := new(big.Rat).SetString("0")
		if m[6] != "" {
			secs, _ = new(big.Rat).SetString(m[6])
		}
		us := (n(4)*60+n(5))*60*1_000_000 + ratMicros(secs)
		return intervalKey(12*n(1)+n(2), n(3), us), true
	}
	if ivVerbose.MatchString(s) {
		return parseVerbose(s)
	}
	fields := strings.Fields(s)
	var months, days, us int64
	sqlStandard := len(fields) > 0 && (ivYM.MatchString(fields[0]) || ivSQLFirst.MatchString(fields[0]) &&
		(len(fields) == 1 || ivTime.MatchString(fields[1])))
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if m := ivTime.FindStringSubmatch(f); m != nil {
			us += timeMicros(m)
			continue
		}
		if sqlStandard {
			if m := ivYM.FindStringSubmatch(f); m != nil {
				y, _ := strconv.ParseInt(m[2], 10, 64)
				mo, _ := strconv.ParseInt(m[3], 10, 64)
				t := 12*y + mo
				if m[1] == "-" {
					t = -t
				}
				months += t
				continue
			}
			if ivSQLFirst.MatchString(f) {
				d, _ := strconv.ParseInt(f, 10, 64)
				days += d
				continue
			}
			return "", false
		}
		if i+1 >= len(fields) {
			return "", false
		}
		m := ivUnit.FindStringSubmatch(f + " " + fields[i+1])
		if m == nil {
			return "", false
		}
		i++
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return "", false
		}
		switch {
		case strings.HasPrefix(m[2], "year"):
			months += 12 * n
		case strings.HasPrefix(m[2], "mon"):
			months += n
		case strings.HasPrefix(m[2], "day"):
			days += n
		default:
			return "", false
		}
	}
	return intervalKey(months, days, us), true
}

// timeMicros is a [+-]h:mm[:ss[.ffffff]] match in microseconds.
func timeMicros(m []string) int64 {
	h, _ := strconv.ParseInt(m[2], 10, 64)
	mi, _ := strconv.ParseInt(m[3], 10, 64)
	se, _ := strconv.ParseInt(m[4], 10, 64)
	frac := m[5] + strings.Repeat("0", 6-len(m[5]))
	fr, _ := strconv.ParseInt(frac, 10, 64)
	t := ((h*60+mi)*60+se)*1_000_000 + fr
	if m[1] == "-" {
		t = -t
	}
	return t
}

func ratMicros(r *big.Rat) int64 {
	x := new(big.Rat).Mul(r, big.NewRat(1_000_000, 1))
	return new(big.Int).Quo(x.Num(), x.Denom()).Int64()
}

// parseVerbose reads the postgres_verbose style.
func parseVerbose(s string) (string, bool) {
	fields := strings.Fields(strings.TrimPrefix(s, "@ "))
	neg := false
	if len(fields) > 0 && fields[len(fields)-1] == "ago" {
		neg = true
		fields = fields[:len(fields)-1]
	}
	if len(fields) == 1 && fields[0] == "0" {
		return intervalKey(0, 0, 0), true
	}
	var months, days, us int64
	for i := 0; i+1 < len(fields); i += 2 {
		num, ok := new(big.Rat).SetString(fields[i])
		if !ok {
			return "", false
		}
		n := num.Num().Int64()
		switch u := fields[i+1]; {
		case strings.HasPrefix(u, "year"):
			months += 12 * n
		case strings.HasPrefix(u, "mon"):
			months += n
		case strings.HasPrefix(u, "day"):
			days += n
		case strings.HasPrefix(u, "hour"):
			us += n * 3600_000_000
		case strings.HasPrefix(u, "min"):
			us += n * 60_000_000
		case strings.HasPrefix(u, "sec"):
			us += ratMicros(num)
		default:
			return "", false
		}
	}
	if len(fields)%2 != 0 {
		return "", false
	}
	if neg {
		months, days, us = -months, -days, -us
	}
	return intervalKey(months, days, us), true
}
