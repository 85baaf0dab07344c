package planner

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// Relative time. now(), CURRENT_TIMESTAMP, transaction_timestamp(),
// statement_timestamp(), CURRENT_DATE, LOCALTIMESTAMP and LOCALTIME are
// values Postgres fixes before it runs a statement: the start of the
// transaction (statement_timestamp: of the statement), in the session's
// TimeZone for the types without a zone. The acceleration answers them
// with the same values, which the proxy computes from when the transaction
// began at pgaccel and the origin's clock (ClockValues) and binds as
// parameters of the rewritten statement: the analysis sees each as a
// constant of its type (so every rule about timestamptz, date and
// timestamp constants applies), the rewrite prints it as a parameter
// numbered after the client's (Decision.Clocks), and a statement planned
// once serves every execution.
//
// Left to the origin: clock_timestamp() and timeofday() (they change while
// the statement runs), CURRENT_TIME (a timetz), these functions called
// with arguments, as window functions or in FROM, and the special inputs
// 'now', 'today', 'tomorrow' and 'yesterday' (Postgres fixes them when it
// parses the statement, so a prepared statement keeps the value of its
// PREPARE).

// ClockType is the type of a relative-time value.
type ClockType uint8

const (
	// ClockTimestamptz: now(), CURRENT_TIMESTAMP, transaction_timestamp(),
	// statement_timestamp().
	ClockTimestamptz ClockType = iota
	// ClockTimestamp: LOCALTIMESTAMP, the wall clock of the session's
	// TimeZone.
	ClockTimestamp
	// ClockDate: CURRENT_DATE, in the session's TimeZone.
	ClockDate
	// ClockTime: LOCALTIME, in the session's TimeZone.
	ClockTime
)

// Clock is one relative-time value a statement needs, in the order of the
// parameters that carry them (Decision.Clocks).
type Clock struct {
	Type ClockType
	// Statement: the statement's start (statement_timestamp()), not the
	// transaction's.
	Statement bool
	// Precision is the fractional digits kept (rounded, as Postgres does
	// for CURRENT_TIMESTAMP(p)); -1 keeps the microseconds.
	Precision int8
}

// clockMark is the Location the analysis gives the constant standing for
// a relative-time value (minus its number): the rewrite finds the
// constants by it, wherever a rule moved or copied them, and makes them
// parameters.
const clockMark = -1_000_000

// clockStandIn is the constant text the analysis sees for each type.
var clockStandIn = map[ClockType]string{
	ClockTimestamptz: "2000-01-01 00:00:00+00",
	ClockTimestamp:   "2000-01-01 00:00:00",
	ClockDate:        "2000-01-01",
	ClockTime:        "00:00:00",
}

// clockCast is the cast of the stand-in, as the parser writes it.
var clockCast = map[ClockType]string{
	ClockTimestamptz: "timestamptz",
	ClockTimestamp:   "timestamp",
	ClockDate:        "date",
	ClockTime:        "time",
}

// clockFuncs are the relative-time functions called without arguments.
var clockFuncs = map[string]Clock{
	"now":                   {Type: ClockTimestamptz, Precision: -1},
	"transaction_timestamp": {Type: ClockTimestamptz, Precision: -1},
	"statement_timestamp":   {Type: ClockTimestamptz, Statement: true, Precision: -1},
}

// clockOf returns the value a SQLValueFunction stands for.
func clockOf(f *pg_query.SQLValueFunction) (Clock, bool) {
	p := int8(-1)
	if f.Typmod >= 0 && f.Typmod < 6 {
		p = int8(f.Typmod)
	}
	switch f.Op {
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N:
		return Clock{Type: ClockTimestamptz, Precision: p}, true
	case pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		return Clock{Type: ClockTimestamp, Precision: p}, true
	case pg_query.SQLValueFunctionOp_SVFOP_LOCALTIME, pg_query.SQLValueFunctionOp_SVFOP_LOCALTIME_N:
		return Clock{Type: ClockTime, Precision: p}, true
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		return Clock{Type: ClockDate, Precision: -1}, true
	}
	return Clock{}, false
}

// clockFuncOf returns the value a function call stands for: now() and its
// kin, unqualified or in pg_catalog, without arguments, OVER or FILTER.
func clockFuncOf(fc *pg_query.FuncCall) (Clock, bool) {
	if len(fc.Args) > 0 || fc.Over != nil || fc.AggFilter != nil || fc.AggStar || fc.AggDistinct || len(fc.AggOrder) > 0 {
		return Clock{}, false
	}
	name, ok := builtinName(fc.Funcname)
	if !ok {
		return Clock{}, false
	}
	c, ok := clockFuncs[strings.ToLower(name)]
	return c, ok
}

// clockWords are the names every relative-time value is written with
// (LOCALTIMESTAMP contains LOCALTIME).
var clockWords = []string{"now", "current_timestamp", "current_date", "localtime", "statement_timestamp", "transaction_timestamp"}

// mayReadClock reports whether sql names one of clockWords in any case, so
// that a statement that cannot read the clock (most) skips standInClocks'
// walk of its tree (16 µs for a join with GROUP BY, measured alone).
func mayReadClock(sql string) bool {
	for i := 0; i < len(sql); i++ {
		c := sql[i] | 0x20
		if c != 'n' && c != 'c' && c != 'l' && c != 's' && c != 't' {
			continue
		}
		for _, w := range clockWords {
			if len(sql)-i >= len(w) && strings.EqualFold(sql[i:i+len(w)], w) {
				return true
			}
		}
	}
	return false
}

// clockSites collects the Nodes holding relative-time values.
type clockSites struct {
	inFrom map[*pg_query.FuncCall]bool // functions of FROM: left alone
	nodes  []*pg_query.Node
	clocks []Clock
}

func (c *clockSites) enter(m proto.Message, w *walker) {
	switch n := m.(type) {
	case *pg_query.RangeFunction:
		for _, f := range n.Functions {
			for _, item := range f.GetList().GetItems() {
				if fc := item.GetFuncCall(); fc != nil {
					if c.inFrom == nil {
						c.inFrom = map[*pg_query.FuncCall]bool{}
					}
					c.inFrom[fc] = true
				}
			}
		}
	case *pg_query.SQLValueFunction:
		if clk, ok := clockOf(n); ok && w.node() != nil {
			c.nodes, c.clocks = append(c.nodes, w.node()), append(c.clocks, clk)
		}
	case *pg_query.FuncCall:
		if clk, ok := clockFuncOf(n); ok && w.node() != nil && !c.inFrom[n] {
			c.nodes, c.clocks = append(c.nodes, w.node()), append(c.clocks, clk)
		}
	}
}

// standInClocks replaces the relative-time values of stmt with constants
// of their types marked as clockMark - i, and returns them in order. The
// analysis and the rewrite both call it on their parse, so they number
// the nodes alike.
func standInClocks(stmt *pg_query.Node) []Clock {
	var c clockSites
	walk(stmt, &c)
	for i, n := range c.nodes {
		t := c.clocks[i].Type
		cast := &pg_query.TypeCast{
			Arg: &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{
				Val:      &pg_query.A_Const_Sval{Sval: &pg_query.String{Sval: clockStandIn[t]}},
				Location: int32(clockMark - i),
			}}},
			TypeName: clockTypeName(t),
			Location: -1,
		}
		n.Node = &pg_query.Node_TypeCast{TypeCast: cast}
	}
	return c.clocks
}

// clockTypeName is the TypeName of a cast to t as the parser makes it.
func clockTypeName(t ClockType) *pg_query.TypeName {
	name := clockCast[t]
	var names []*pg_query.Node
	if t == ClockTimestamp || t == ClockTime {
		// timestamp and time are keywords: the parser qualifies them.
		names = append(names, pg_query.MakeStrNode("pg_catalog"))
	}
	names = append(names, pg_query.MakeStrNode(name))
	return &pg_query.TypeName{Names: names, Typemod: -1, Location: -1}
}

// clockParams makes the stand-ins of stmt parameters numbered after the
// client's: clock i is $(base+1+i).
func clockParams(stmt *pg_query.Node, base int) {
	walk(stmt, clockParamWalk{base: base})
}

type clockParamWalk struct{ base int }

func (p clockParamWalk) enter(m proto.Message, w *walker) {
	c, ok := m.(*pg_query.A_Const)
	if !ok || c.Location > clockMark || w.node() == nil {
		return
	}
	// Replacing the Node the walk stands on: its children (the A_Const's
	// value) are not walked again.
	w.node().Node = &pg_query.Node_ParamRef{ParamRef: &pg_query.ParamRef{Number: int32(p.base + 1 + int(clockMark-c.Location)), Location: -1}}
}
