package planner

import (
	"strconv"
	"strings"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// to_timestamp(text, text) and to_date(text, text) with two string
// literals, as Superset and others write time filters
// (to_timestamp('2024-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')),
// are read here when the literal matches the format exactly (fixed-width
// YYYY, MM, DD, HH24, MI, SS, MS, US fields between separators) and become
// what DuckDB computes the same way:
//
//	to_date(...)      -> make_date(y, m, d)
//	to_timestamp(...) -> timezone(current_setting('TimeZone'), make_timestamp(µs))
//
// to_timestamp reads the fields as a local time in the session's TimeZone,
// which the engine sets for each statement. Other calls are left as they
// are: DuckDB has no such functions, and the statement falls back to the
// origin.

// timeFields are the format fields read, with their widths.
var timeFields = []struct {
	name  string
	width int
}{
	{"YYYY", 4}, {"HH24", 2}, {"MM", 2}, {"DD", 2}, {"MI", 2}, {"SS", 2}, {"MS", 3}, {"US", 6},
}

// parseTimeLiteral reads s by the Postgres format f: the fields of
// timeFields and the separators - : / . T and space, matched exactly.
func parseTimeLiteral(s, f string) (t time.Time, ok bool) {
	v := map[string]int{}
	for f != "" {
		matched := false
		for _, tf := range timeFields {
			if !strings.HasPrefix(f, tf.name) {
				continue
			}
			if len(s) < tf.width {
				return t, false
			}
			n := 0
			for _, c := range s[:tf.width] {
				if c < '0' || c > '9' {
					return t, false
				}
				n = n*10 + int(c-'0')
			}
			if _, dup := v[tf.name]; dup {
				return t, false
			}
			v[tf.name] = n
			s, f, matched = s[tf.width:], f[len(tf.name):], true
			break
		}
		if matched {
			continue
		}
		switch f[0] {
		case '-', ':', '/', '.', ' ', 'T':
			if s == "" || s[0] != f[0] {
				return t, false
			}
			s, f = s[1:], f[1:]
		default:
			return t, false
		}
	}
	if s != "" {
		return t, false
	}
	y, okY := v["YYYY"]
	if !okY || y < 1 {
		return t, false
	}
	mo, d := v["MM"], v["DD"]
	if _, has := v["MM"]; !has {
		mo = 1
	}
	if _, has := v["DD"]; !has {
		d = 1
	}
	h, mi, sec := v["HH24"], v["MI"], v["SS"]
	us := v["US"] + v["MS"]*1000
	if _, both := v["US"]; both && v["MS"] != 0 {
		return t, false
	}
	if mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59 {
		return t, false
	}
	t = time.Date(y, time.Month(mo), d, h, mi, sec, us*1000, time.UTC)
	if t.Day() != d { // 2024-02-30
		return t, false
	}
	return t, true
}

// rewriteTimeLiteral turns to_timestamp or to_date of two string literals
// into DuckDB's equivalent, when the literal matches its format.
func rewriteTimeLiteral(fc *pg_query.FuncCall) {
	name := funcName(fc)
	if (name != "to_timestamp" && name != "to_date") || len(fc.Args) != 2 || fc.Over != nil {
		return
	}
	var lits [2]string
	for i, a := range fc.Args {
		c := a.GetAConst()
		if c == nil {
			return
		}
		sv, ok := c.Val.(*pg_query.A_Const_Sval)
		if !ok {
			return
		}
		lits[i] = sv.Sval.Sval
	}
	t, ok := parseTimeLiteral(lits[0], lits[1])
	if !ok {
		return
	}
	call := func(name string, args ...*pg_query.Node) *pg_query.Node {
		return pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(name)}, args, -1)
	}
	if name == "to_date" {
		if t.Hour() != 0 || t.Minute() != 0 || t.Second() != 0 || t.Nanosecond() != 0 {
			return
		}
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("make_date")}
		fc.Args = []*pg_query.Node{pg_query.MakeAConstIntNode(int64(t.Year()), -1),
			pg_query.MakeAConstIntNode(int64(t.Month()), -1), pg_query.MakeAConstIntNode(int64(t.Day()), -1)}
		return
	}
	micros := t.UnixMicro()
	fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("timezone")}
	fc.Args = []*pg_query.Node{
		call("current_setting", pg_query.MakeAConstStrNode("TimeZone", -1)),
		// An integer literal beyond int32 is a Float node to the parser.
		call("make_timestamp", &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{
			Val: &pg_query.A_Const_Fval{Fval: &pg_query.Float{Fval: strconv.FormatInt(micros, 10)}}, Location: -1}}}),
	}
}

// toCharFunction is encode.ToCharFunction: Postgres's to_char of a
// timestamp, timestamptz or date, given the session's TimeZone (to_char
// of other types finds no DuckDB overload and falls back).
const toCharFunction = "pgaccel_to_char"

// rewriteToChar turns to_char(x, format) into toCharFunction(x, format,
// current_setting('TimeZone')).
func rewriteToChar(fc *pg_query.FuncCall) {
	if funcName(fc) != "to_char" || len(fc.Args) != 2 || fc.Over != nil {
		return
	}
	fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode(toCharFunction)}
	fc.Args = append(fc.Args, pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("current_setting")},
		[]*pg_query.Node{pg_query.MakeAConstStrNode("TimeZone", -1)}, -1))
}

// columnType is the origin type of the datasets' columns of that name
// when they share one (0 otherwise, or for no such column), and whether it
// is an array.
func columnType(r resolution, name string) (oid uint32, array bool) {
	found := false
	for _, d := range r.datasets {
		for _, c := range d.state.Columns {
			if c.Name != name {
				continue
			}
			if found && c.TypeOID != oid {
				return 0, false
			}
			oid, array, found = c.TypeOID, strings.HasSuffix(c.TypeName, "[]"), true
		}
	}
	return oid, array
}

// rewriteByArgType adapts calls whose DuckDB namesake differs by the type
// of their first argument, a column of the datasets (the analysis refuses
// names that are also outputs of subqueries: aliasDefs):
//
//   - date_trunc(part, date): Postgres casts the date to timestamptz (its
//     local midnight in the session's TimeZone) and truncates that; DuckDB
//     truncates the date to a timestamp. The rewrite casts it first.
//   - length(bytea) is octet_length in DuckDB; octet_length(text) is
//     strlen; cardinality(array) is len; every is bool_and (any argument);
//     array_length(a, 1) of an empty array is NULL.
func rewriteByArgType(fc *pg_query.FuncCall, a *analysis, r resolution) {
	name := funcName(fc)
	switch name {
	case "json_typeof", "jsonb_typeof":
		// DuckDB's json_type says OBJECT, VARCHAR, BIGINT...
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("pgaccel_json_typeof")}
		return
	case "json_array_length", "jsonb_array_length":
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("pgaccel_json_array_length")}
		return
	case "justify_hours", "justify_days", "justify_interval":
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("pgaccel_" + name)}
		return
	case "percentile_cont":
		// Postgres interpolates in float8: the ordered values as DuckDB
		// doubles, when they convert exactly alike (percentileDouble).
		if fc.AggWithinGroup && len(fc.AggOrder) == 1 {
			if sb := fc.AggOrder[0].GetSortBy(); sb != nil {
				if cr := sb.Node.GetColumnRef(); cr != nil && len(a.aliasDefs[lastField(cr)]) == 0 && percentileDouble(r, lastField(cr)) {
					sb.Node = &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
						Arg:      sb.Node,
						TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("float8")}, Typemod: -1, Location: -1},
						Location: -1,
					}}}
				}
			}
		}
		return
	}
	if name == "every" && fc.Over == nil && len(fc.Args) == 1 {
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("bool_and")}
		return
	}
	if name == "array_length" && len(fc.Args) == 2 {
		// The length of an empty array is NULL to Postgres, 0 to DuckDB
		// (the analysis admits dimension 1 only).
		inner := &pg_query.FuncCall{Funcname: []*pg_query.Node{pg_query.MakeStrNode("array_length")}, Args: fc.Args, Location: -1}
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("nullif")}
		fc.Args = []*pg_query.Node{{Node: &pg_query.Node_FuncCall{FuncCall: inner}}, pg_query.MakeAConstIntNode(0, -1)}
		return
	}
	var arg *pg_query.Node
	switch name {
	case "date_trunc":
		if len(fc.Args) != 2 {
			return
		}
		arg = fc.Args[1]
	case "length", "octet_length", "cardinality":
		if len(fc.Args) != 1 {
			return
		}
		arg = fc.Args[0]
	default:
		return
	}
	cr := arg.GetColumnRef()
	if cr == nil || lastField(cr) == "" || len(a.aliasDefs[lastField(cr)]) > 0 {
		return
	}
	oid, array := columnType(r, lastField(cr))
	rename := func(to string) { fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode(to)} }
	switch {
	case name == "date_trunc" && oid == 1082 && !array:
		fc.Args[1] = &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
			Arg:      &pg_query.Node{Node: &pg_query.Node_ColumnRef{ColumnRef: cr}},
			TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("timestamptz")}, Typemod: -1, Location: -1},
			Location: -1,
		}}}
	case name == "length" && oid == 17:
		rename("octet_length")
	case name == "octet_length" && textTypeOIDs[oid] && oid != 1042:
		rename("strlen")
	case name == "cardinality" && array:
		rename("len")
	}
}

// percentileDouble reports whether the datasets' columns of that name
// convert to float8 as Postgres converts them: floats, integers, and
// numerics of at most 15 digits (their unscaled value and its power of ten
// are exact doubles, and one division rounds correctly, as Postgres's
// conversion does).
func percentileDouble(r resolution, name string) bool {
	found := false
	for _, d := range r.datasets {
		for _, c := range d.state.Columns {
			if c.Name != name {
				continue
			}
			found = true
			switch c.TypeOID {
			case oidFloat4, oidFloat8, oidInt2, oidInt4, oidInt8:
			case oidNumeric:
				if c.TypeMod < 4 || (c.TypeMod-4)>>16 > 15 {
					return false
				}
			default:
				return false
			}
		}
	}
	return found
}
