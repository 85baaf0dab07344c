package gen

import (
	"bytes"
	"fmt"
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
