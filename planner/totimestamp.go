package planner

import (
	"strconv"
	"strings"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/pgaccel/pgaccel/pgdef"
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

// pgdef.FuncToChar is pgdef.FuncToChar: Postgres's to_char of a
// timestamp, timestamptz or date, given the session's TimeZone (to_char
// of other types finds no DuckDB overload and falls back).

// rewriteToChar turns to_char(x, format) into pgdef.FuncToChar(x, format,
// current_setting('TimeZone')).
func rewriteToChar(fc *pg_query.FuncCall) {
	if funcName(fc) != "to_char" || len(fc.Args) != 2 || fc.Over != nil {
		return
	}
	fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode(pgdef.FuncToChar)}
	fc.Args = append(fc.Args, pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode("current_setting")},
		[]*pg_query.Node{pg_query.MakeAConstStrNode("TimeZone", -1)}, -1))
}
