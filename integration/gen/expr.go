package gen

import (
	"fmt"
	"strings"
)

// ectx is where an expression is written.
type ectx struct {
	lv    *level
	depth int // how much deeper expressions may nest
	agg   bool
	win   bool
	inAgg bool // inside an aggregate's arguments: the level's raw columns, no aggregates
	sub   int  // how many more subquery levels may open
	// noNull: a bare NULL or string literal would leave the type
	// unknown here (a function's argument, an output column).
	noNull bool
	// noOuter: no references to enclosing levels (an aggregate's
	// arguments: Postgres makes an aggregate of outer columns only an
	// aggregate of the outer level).
	noOuter bool
}

func (c ectx) deeper() ectx { c.depth--; return c }

// argCtx is the context of an aggregate's arguments.
func (c ectx) argCtx() ectx {
	c.inAgg, c.agg, c.win = true, false, false
	c.noNull, c.noOuter = true, true
	c.depth = min(c.depth, 2)
	c.sub = 0
	return c
}

// grouped reports whether column references must be GROUP BY keys here.
func (c ectx) grouped() bool { return c.lv.grouped && !c.inAgg }

// expr writes an expression of type t.
func (b *builder) expr(c ectx, t Type) string {
	if c.depth <= 0 {
		return b.leaf(c, t)
	}
	type prod int
	const (
		pLeaf prod = iota
		pConst
		pFn
		pCond
		pAgg
		pWin
		pSub
		pPred
	)
	ws := weighted[prod]{{pLeaf, 30}, {pConst, 7}, {pFn, 45}, {pCond, 8}}
	if c.agg && !c.inAgg {
		ws.add(pAgg, 30)
	}
	if c.win && !c.inAgg {
		ws.add(pWin, 10)
	}
	if c.sub > 0 {
		ws.add(pSub, 5)
		if t == Bool {
			ws.add(pPred, 12)
		}
	}
	switch pickW(b.r, ws) {
	case pConst:
		return b.constant(c, t)
	case pFn:
		if s, ok := b.call(c, t); ok {
			return s
		}
	case pCond:
		return b.conditional(c, t)
	case pAgg:
		if s, ok := b.aggregate(c, t); ok {
			return s
		}
	case pWin:
		if s, ok := b.window(c, t); ok {
			return s
		}
	case pSub:
		if s, ok := b.scalarSubquery(c, t); ok {
			return s
		}
	case pPred:
		if s, ok := b.subqueryPredicate(c); ok {
			return s
		}
	}
	return b.leaf(c, t)
}

// leaf writes a column of type t, or a constant when there is none.
func (b *builder) leaf(c ectx, t Type) string {
	if b.r.chance(0.8) {
		if s, ok := b.column(c, t); ok {
			return s
		}
	}
	return b.constant(c, t)
}

// column writes a reference to a column (or, in a grouped level outside
// aggregates, a GROUP BY key) of type t.
func (b *builder) column(c ectx, t Type) (string, bool) {
	if c.grouped() {
		var keys []string
		for _, k := range c.lv.keys {
			if k.typ == t {
				keys = append(keys, k.sql)
			}
		}
		// Outer levels' columns are constants here.
		for _, ref := range c.lv.outerColumns(t) {
			keys = append(keys, ref)
		}
		if len(keys) == 0 {
			return "", false
		}
		return pick(b.r, keys), true
	}
	refs := c.lv.columns(t)
	if c.noOuter {
		var own []colRef
		for _, r := range refs {
			if !r.outer {
				own = append(own, r)
			}
		}
		refs = own
	}
	if len(refs) == 0 {
		return "", false
	}
	// Prefer this level's columns; correlated ones now and then.
	var own []colRef
	for _, r := range refs {
		if !r.outer {
			own = append(own, r)
		}
	}
	if len(own) > 0 && !b.r.chance(0.15) {
		refs = own
	}
	ref := pick(b.r, refs)
	if ref.outer {
		b.feat("correlated column")
	}
	switch {
	case ref.qualified == "":
		b.feat("merged USING column")
		return ref.bare, true
	case ref.bare != "" && b.r.chance(0.4):
		return ref.bare, true
	}
	return ref.qualified, true
}

// outerColumns are the references of type t to enclosing levels.
func (lv *level) outerColumns(t Type) []string {
	if lv.outer == nil {
		return nil
	}
	var out []string
	for _, r := range lv.outer.columns(t) {
		if r.qualified != "" {
			out = append(out, r.qualified)
		}
	}
	return out
}

// constant writes a constant of type t: an edge value, sometimes a bare
// literal Postgres types by context, sometimes NULL.
func (b *builder) constant(c ectx, t Type) string {
	if b.r.chance(0.06) {
		if c.noNull || b.r.chance(0.5) {
			return "NULL::" + t.castName()
		}
		return "NULL"
	}
	if u := untypedEdge[t]; len(u) > 0 && b.r.chance(0.3) {
		// A string literal is of unknown type, which a function's
		// arguments may not resolve; numbers are typed.
		if lit := pick(b.r, u); !c.noNull || !strings.HasPrefix(lit, "'") {
			b.feat("untyped literal")
			return paren(lit)
		}
	}
	return paren(pick(b.r, edgeValues[t]))
}

// paren wraps a literal that starts with a minus sign, so that it can
// follow any operator.
func paren(s string) string {
	if strings.HasPrefix(s, "-") {
		return "(" + s + ")"
	}
	return s
}

// call writes a catalogue function or operator of result type t.
func (b *builder) call(c ectx, t Type) (string, bool) {
	fs := catalog[t]
	if len(fs) == 0 {
		return "", false
	}
	ws := make(weighted[Fn], len(fs))
	for i, f := range fs {
		ws[i].v, ws[i].w = f, f.weight()
	}
	f := pickW(b.r, ws)
	b.feat(f.Tag())
	args := make([]string, len(f.Args))
	for i, a := range f.Args {
		if a.Lits != nil {
			args[i] = pick(b.r, a.Lits)
			continue
		}
		ac := c.deeper()
		ac.noNull = true // f(NULL) may not resolve
		args[i] = b.expr(ac, a.T)
	}
	return fill(f.Form, args), true
}

// fill replaces $1..$n in form by args.
func fill(form string, args []string) string {
	var out strings.Builder
	for i := 0; i < len(form); i++ {
		if form[i] == '$' && i+1 < len(form) && form[i+1] >= '1' && form[i+1] <= '9' {
			n := int(form[i+1] - '1')
			if n < len(args) {
				out.WriteString(args[n])
				i++
				continue
			}
		}
		out.WriteByte(form[i])
	}
	return out.String()
}

// mixed is a type for one operand of a construct whose common type is t:
// t itself, or a type Postgres casts to t implicitly.
func (b *builder) mixed(t Type) Type {
	if b.r.chance(0.6) {
		return t
	}
	return pick(b.r, implicitInto(t))
}

// conditional writes CASE, COALESCE, NULLIF, GREATEST or LEAST of type t,
// with operands of mixed types.
func (b *builder) conditional(c ectx, t Type) string {
	d := c.deeper()
	// One operand is of t itself, so that the common type is t.
	operands := func(n int) []string {
		out := make([]string, n)
		exact := b.r.intn(n)
		for i := range out {
			ti, di := t, d
			if i != exact {
				ti = b.mixed(t)
			} else {
				di.noNull = true // the common type comes from a typed operand
			}
			out[i] = b.expr(di, ti)
		}
		return out
	}
	switch b.r.intn(6) {
	case 0, 1:
		b.feat("CASE WHEN")
		ops := operands(2 + b.r.intn(2))
		var s strings.Builder
		s.WriteString("CASE")
		for _, o := range ops[:len(ops)-1] {
			fmt.Fprintf(&s, " WHEN %s THEN %s", b.expr(d, Bool), o)
		}
		if b.r.chance(0.8) {
			fmt.Fprintf(&s, " ELSE %s", ops[len(ops)-1])
		}
		s.WriteString(" END")
		return s.String()
	case 2:
		b.feat("CASE x WHEN")
		ops := operands(2)
		subj := pickW(b.r, outputTypes)
		if subj == JSON {
			subj = Text
		}
		typed := d
		typed.noNull = true
		return fmt.Sprintf("CASE %s WHEN %s THEN %s ELSE %s END", b.expr(typed, subj), b.expr(d, subj), ops[0], ops[1])
	case 3:
		b.feat("COALESCE")
		return "COALESCE(" + strings.Join(operands(2+b.r.intn(2)), ", ") + ")"
	case 4:
		if t == JSON {
			return b.expr(d, t)
		}
		b.feat("NULLIF")
		return fmt.Sprintf("NULLIF(%s, %s)", b.expr(d, t), b.expr(d, b.mixed(t)))
	default:
		if !t.orderable() {
			return b.expr(d, t)
		}
		fn := pick(b.r, []string{"GREATEST", "LEAST"})
		b.feat(fn)
		return fn + "(" + strings.Join(operands(2+b.r.intn(2)), ", ") + ")"
	}
}

// aggregate writes an aggregate of result type t over the level's rows:
// DISTINCT, FILTER and ORDER BY now and then.
func (b *builder) aggregate(c ectx, t Type) (string, bool) {
	var ws weighted[Agg]
	for _, a := range aggregates {
		if a.Ret == t {
			ws.add(a, a.weight())
		}
	}
	if len(ws) == 0 {
		return "", false
	}
	a := pickW(b.r, ws)
	b.feat(a.Tag())
	if picksAmongEqual(a) {
		b.mayTie = true
	}
	ac := c.argCtx()
	args := make([]string, len(a.Args))
	for i, x := range a.Args {
		if x.Lits != nil {
			args[i] = pick(b.r, x.Lits)
		} else {
			args[i] = b.expr(ac, x.T)
		}
	}
	var s strings.Builder
	s.WriteString(a.Name + "(")
	distinct := !a.NoDistinct && b.r.chance(0.15)
	switch {
	case a.Name == "count" && len(a.Args) == 0:
		if rs := c.lv.rels; b.r.chance(0.5) && len(rs) > 0 {
			r := pick(b.r, rs)
			if !r.merged {
				b.feat("count(rel.*)")
				s.WriteString(r.alias + ".*")
				break
			}
		}
		s.WriteString("*")
	default:
		if distinct {
			b.feat("aggregate DISTINCT")
			s.WriteString("DISTINCT ")
		}
		s.WriteString(strings.Join(args, ", "))
		if a.Ordered {
			// Ordered by the value itself: a total order of what
			// the aggregate sees (DISTINCT requires exactly that).
			dir := pick(b.r, []string{"", " DESC", " NULLS FIRST", " DESC NULLS LAST"})
			if a.Args[0].T.orderable() {
				fmt.Fprintf(&s, " ORDER BY %s%s", args[0], dir)
				if len(args) > 1 && a.Args[1].Lits == nil && !distinct {
					fmt.Fprintf(&s, ", %s", args[1])
				}
			}
		}
	}
	s.WriteString(")")
	if a.WithinGroup {
		sortExpr := b.expr(ac, a.Sort)
		fmt.Fprintf(&s, " WITHIN GROUP (ORDER BY %s%s)", sortExpr, pick(b.r, []string{"", " DESC"}))
	}
	if b.r.chance(0.15) {
		b.feat("aggregate FILTER")
		fmt.Fprintf(&s, " FILTER (WHERE %s)", b.expr(ac, Bool))
	}
	return s.String(), true
}

// window writes a window function, or an aggregate over a window, of
// type t. Functions that depend on the order of the window's rows get a
// total order (the level's keys last); the rest any order.
func (b *builder) window(c ectx, t Type) (string, bool) {
	keys, total := c.lv.keyRefs()
	if c.lv.grouped {
		// Over groups: ordered by every key, groups are unique.
		total = len(c.lv.keys) > 0
		keys = nil
		for _, k := range c.lv.keys {
			keys = append(keys, k.sql)
		}
	}
	ac := c
	ac.win, ac.depth, ac.noNull = false, min(c.depth-1, 2), true
	var call string
	ordered := false
	if b.r.chance(0.65) {
		var cands []windowFn
		for _, w := range windowFns {
			if (w.Value || w.Ret == t) && (total || !w.Ordered) {
				for i := 0; i < max(w.W, 1); i++ {
					cands = append(cands, w)
				}
			}
		}
		if len(cands) == 0 {
			return "", false
		}
		w := pick(b.r, cands)
		b.feat("window " + w.Form)
		ordered = w.Ordered
		// lag/lead(value, n, default): the common type of value and
		// default is t; one of them may be of a type cast to it
		// (lead(int, 1, -1.4) is numeric).
		vt, dt := t, t
		if strings.Contains(w.Form, "$d") && b.r.chance(0.4) {
			if b.r.chance(0.5) {
				dt = pick(b.r, implicitInto(t))
			} else {
				vt = pick(b.r, implicitInto(t))
			}
			if vt != dt {
				b.feat("window lag/lead value and default of different types")
			}
		}
		v, d := "", ""
		if w.Value {
			v = b.expr(ac, vt)
		}
		if strings.Contains(w.Form, "$d") {
			d = b.constant(ac, dt)
			if b.r.chance(0.3) {
				d = b.expr(ac, dt)
			}
		}
		call = strings.NewReplacer("$v", v, "$n", pick(b.r, windowInts), "$d", d).Replace(w.Form)
	} else {
		if c.lv.grouped {
			return "", false // an aggregate of an aggregate: not here
		}
		var ws weighted[Agg]
		for _, a := range aggregates {
			if a.Ret == t && !a.WithinGroup {
				ws.add(a, a.weight())
			}
		}
		if len(ws) == 0 {
			return "", false
		}
		a := pickW(b.r, ws)
		b.feat("window " + a.Tag())
		if picksAmongEqual(a) {
			b.mayTie = true
		}
		ordered = a.Ordered
		args := make([]string, len(a.Args))
		for i, x := range a.Args {
			if x.Lits != nil {
				args[i] = pick(b.r, x.Lits)
			} else {
				args[i] = b.expr(ac.argCtx(), x.T)
			}
		}
		if a.Name == "count" && len(args) == 0 {
			args = []string{"*"}
		}
		call = a.Name + "(" + strings.Join(args, ", ") + ")"
	}
	// The window.
	var parts []string
	if b.r.chance(0.5) {
		pt := pickW(b.r, outputTypes)
		if pt == JSON {
			pt = JSONB
		}
		parts = append(parts, "PARTITION BY "+b.expr(ac, pt))
	}
	var order []string
	if b.r.chance(0.8) || ordered {
		ot := pickW(b.r, outputTypes)
		if ot == JSON {
			ot = Int4
		}
		order = append(order, b.expr(ac, ot)+pick(b.r, []string{"", " DESC", " NULLS FIRST", " DESC NULLS LAST"}))
	}
	frame := pick(b.r, frames)
	if ordered || (strings.HasPrefix(frame, "ROWS") && total) {
		// Rows in a frame of ROWS, or the order-dependent functions:
		// deterministic only in a total order.
		if !total {
			return "", false
		}
		order = append(order, keys...)
	}
	if strings.HasPrefix(frame, "ROWS") && !total {
		frame = ""
	}
	if len(order) > 0 {
		parts = append(parts, "ORDER BY "+strings.Join(order, ", "))
		if frame != "" {
			b.feat("window frame " + strings.Fields(frame)[0])
			parts = append(parts, strings.ReplaceAll(frame, "%s", pick(b.r, frameOffsets)))
		}
	}
	return call + " OVER (" + strings.Join(parts, " ") + ")", true
}

// picksAmongEqual reports whether an aggregate's result is one of its
// inputs, or orders them, so that of equal inputs printed differently
// either may show.
func picksAmongEqual(a Agg) bool {
	switch a.Name {
	case "min", "max", "percentile_disc", "mode":
		return true
	}
	return a.Ordered
}
