package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/pgaccel/pgaccel/pgdef"
)

// Sorting by an exact avg. The rewrite makes a whole-output avg(x) the
// text of its numeric (exactavg.go), so ORDER BY or DISTINCT ON that
// output, by position or by name, would order text: 6574.8 after 35.33
// after 3.5 after 10958. Such items sort and compare instead by
// pgdef.FuncNumericSortkey of that text, a key that orders as the value
// (and is equal for values equal but for trailing zeros, as Postgres's =
// is). SELECT DISTINCT of such an output would compare the texts; its avg
// is not rewritten (exactAvgPositions), and the statement goes to the
// origin.

// sortAvgsByValue makes the ORDER BY and DISTINCT ON items of sel (the
// rewritten statement, its avg outputs at positions already rewritten)
// that name one of those outputs sort by its value.
func sortAvgsByValue(sel *pg_query.SelectStmt, positions []int) {
	if sel == nil || len(positions) == 0 {
		return
	}
	key := func(n *pg_query.Node) (*pg_query.Node, bool) {
		for _, i := range positions {
			if i >= len(sel.TargetList) {
				continue
			}
			rt := sel.TargetList[i].GetResTarget()
			if rt == nil || rt.Val == nil || !namesAvgOutput(n, i, rt) {
				continue
			}
			return fnCall(pgdef.FuncNumericSortkey, proto.Clone(rt.Val).(*pg_query.Node)), true
		}
		return nil, false
	}
	for _, item := range sel.SortClause {
		if sb := item.GetSortBy(); sb != nil {
			if k, ok := key(sb.Node); ok {
				sb.Node = k
			}
		}
	}
	if hasDistinctOn(sel) {
		for j, d := range sel.DistinctClause {
			if k, ok := key(d); ok {
				sel.DistinctClause[j] = k
			}
		}
	}
}

// namesAvgOutput reports whether n, an ORDER BY or DISTINCT ON item,
// names the output rt at position i (from 0), an avg rewritten to its
// exact text: by position, by its alias, or by the name Postgres gives an
// unnamed avg.
func namesAvgOutput(n *pg_query.Node, i int, rt *pg_query.ResTarget) bool {
	if rt.Name != "" {
		return refersTo(n, i, rt)
	}
	return refersTo(n, i, &pg_query.ResTarget{Name: "avg"})
}
