package gen

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// The keys Compare uses to tell ties: each value in the form Postgres
// compares it by.

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
	if sqlStandard {
		return parseSQLStandard(fields)
	}
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if m := ivTime.FindStringSubmatch(f); m != nil {
			us += timeMicros(m)
			continue
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

// parseSQLStandard reads the sql_standard style: [+-]y-m [+-]d
// [+-]h:mm:ss, where a leading minus with no other sign written applies
// to every field ("-3 4:00:00" is minus 3 days 4 hours).
func parseSQLStandard(fields []string) (string, bool) {
	allNegative := strings.HasPrefix(fields[0], "-")
	for _, f := range fields[1:] {
		if strings.HasPrefix(f, "-") || strings.HasPrefix(f, "+") {
			allNegative = false
		}
	}
	var months, days, us int64
	for i, f := range fields {
		if allNegative && i > 0 {
			f = "-" + f
		}
		switch {
		case ivTime.MatchString(f):
			us += timeMicros(ivTime.FindStringSubmatch(f))
		case ivYM.MatchString(f):
			m := ivYM.FindStringSubmatch(f)
			y, _ := strconv.ParseInt(m[2], 10, 64)
			mo, _ := strconv.ParseInt(m[3], 10, 64)
			t := 12*y + mo
			if m[1] == "-" {
				t = -t
			}
			months += t
		case ivSQLFirst.MatchString(f):
			d, _ := strconv.ParseInt(f, 10, 64)
			days += d
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
