package gen

// col is a column a query level can see.
type col struct {
	name string
	typ  Type
}

// rel is one item of a FROM clause as the names of its columns see it.
type rel struct {
	alias string
	cols  []col
	// key is a column whose values are unique and not NULL per row of the
	// relation ("" when none is known): windows and LIMITs order by it.
	key string
	// base is the table a plain table reference reads (nil otherwise).
	base *Table
	// merged: the columns of a JOIN ... USING, which have no qualifier
	// and hide the joined tables' columns of their names from bare
	// references.
	merged bool
}

// level is one query level: its FROM items, and the level it is nested in
// (whose columns are visible as correlated references).
type level struct {
	rels  []rel
	outer *level
	// keys are a grouped level's GROUP BY expressions: outside aggregates
	// only they (and expressions of them) may be used.
	keys    []typedExpr
	grouped bool
}

// typedExpr is an SQL expression and its type.
type typedExpr struct {
	sql string
	typ Type
}

// colRef is a column reference a level can make: qualified (always valid
// except for merged columns) and bare when the bare name resolves to it.
type colRef struct {
	qualified string
	bare      string
	typ       Type
	outer     bool // a correlated reference to an enclosing level
}

// resolution is where a bare name resolves from lv: the level, and
// whether to a merged column; found=false when nowhere or ambiguously.
func (lv *level) resolve(name string) (at *level, merged, found bool) {
	for l := lv; l != nil; l = l.outer {
		n := 0
		for _, r := range l.rels {
			for _, c := range r.cols {
				if c.name != name {
					continue
				}
				if r.merged {
					return l, true, true
				}
				n++
			}
		}
		if n == 1 {
			return l, false, true
		}
		if n > 1 {
			return l, false, false
		}
	}
	return nil, false, false
}

// columns lists the references of type want (any type when want is "")
// the level can make: its own columns, then enclosing levels'.
func (lv *level) columns(want Type) []colRef {
	var out []colRef
	depth := 0
	for l := lv; l != nil; l = l.outer {
		for _, r := range l.rels {
			for _, c := range r.cols {
				if want != "" && c.typ != want {
					continue
				}
				ref := colRef{typ: c.typ, outer: depth > 0}
				at, merged, found := lv.resolve(c.name)
				if found && at == l && merged == r.merged {
					ref.bare = c.name
				}
				if !r.merged {
					ref.qualified = r.alias + "." + c.name
				}
				if ref.bare == "" && ref.qualified == "" {
					continue
				}
				out = append(out, ref)
			}
		}
		depth++
	}
	return out
}

// keyRefs returns the key columns of every relation of the level,
// qualified, or ok=false when one has none.
func (lv *level) keyRefs() ([]string, bool) {
	var out []string
	for _, r := range lv.rels {
		if r.merged {
			continue
		}
		if r.key == "" {
			return nil, false
		}
		out = append(out, r.alias+"."+r.key)
	}
	return out, len(out) > 0
}
