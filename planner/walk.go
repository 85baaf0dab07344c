package planner

import (
	"sync"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// visitor sees every message of a parse tree once, parents before
// children. It must not change the tree while the walk runs: the analysis
// and the rewrite number nodes by the order of the walk, so both must see
// the same nodes in the same order.
type visitor interface {
	enter(m proto.Message, w *walker)
}

// walker walks a parse tree generically, through protobuf reflection, so
// that no node type that can hold a relation or a function call is
// forgotten. It tracks the names of the CTEs in scope.
type walker struct {
	v       visitor
	scope   []string       // CTE names visible at the current node, innermost last
	wrapper *pg_query.Node // the Node holding the message being entered, if any
}

// walk visits every message under root.
func walk(root proto.Message, v visitor) {
	w := &walker{v: v}
	w.msg(root.ProtoReflect())
}

// node returns the Node wrapper of the message being entered, through
// which a rewrite may replace it; nil when its parent holds it directly
// (SelectStmt.Larg, JoinExpr.Alias, ...). Valid only during enter.
func (w *walker) node() *pg_query.Node { return w.wrapper }

// inCTEScope reports whether an unqualified relation name refers to a CTE
// visible at the current node.
func (w *walker) inCTEScope(name string) bool {
	for i := len(w.scope) - 1; i >= 0; i-- {
		if w.scope[i] == name {
			return true
		}
	}
	return false
}

var (
	nodeOneof      = (&pg_query.Node{}).ProtoReflect().Descriptor().Oneofs().Get(0)
	withClauseDesc = (&pg_query.SelectStmt{}).ProtoReflect().Descriptor().Fields().ByName("with_clause")
)

func (w *walker) msg(m protoreflect.Message) {
	if !m.IsValid() {
		return
	}
	if m.Descriptor() == nodeOneof.Parent() {
		// A Node is only the wrapper of one concrete node.
		if fd := m.WhichOneof(nodeOneof); fd != nil {
			w.wrapper = m.Interface().(*pg_query.Node)
			w.msg(m.Get(fd).Message())
		}
		return
	}
	pm := m.Interface()
	w.v.enter(pm, w)
	w.wrapper = nil
	if sel, ok := pm.(*pg_query.SelectStmt); ok && sel.WithClause != nil {
		w.selectWith(m, sel.WithClause)
		return
	}
	w.fields(m, nil)
}

// selectWith walks a SelectStmt that has a WITH clause: each CTE body sees
// the CTEs before it (all of them when RECURSIVE), the rest of the
// statement sees all of them.
func (w *walker) selectWith(m protoreflect.Message, with *pg_query.WithClause) {
	mark := len(w.scope)
	if with.Recursive {
		for _, n := range with.Ctes {
			if cte := n.GetCommonTableExpr(); cte != nil {
				w.scope = append(w.scope, cte.Ctename)
			}
		}
	}
	for _, n := range with.Ctes {
		w.msg(n.ProtoReflect())
		if cte := n.GetCommonTableExpr(); cte != nil && !with.Recursive {
			w.scope = append(w.scope, cte.Ctename)
		}
	}
	w.fields(m, withClauseDesc)
	w.scope = w.scope[:mark]
}

// fields walks the message-typed fields of m in declaration order, except
// skip.
func (w *walker) fields(m protoreflect.Message, skip protoreflect.FieldDescriptor) {
	for _, fd := range messageFields(m.Descriptor()) {
		if fd == skip || !m.Has(fd) {
			continue
		}
		if fd.IsList() {
			l := m.Get(fd).List()
			for i := 0; i < l.Len(); i++ {
				w.msg(l.Get(i).Message())
			}
			continue
		}
		w.msg(m.Get(fd).Message())
	}
}

// fieldCache maps a message descriptor to its message-typed fields.
var fieldCache sync.Map // protoreflect.MessageDescriptor -> []protoreflect.FieldDescriptor

func messageFields(md protoreflect.MessageDescriptor) []protoreflect.FieldDescriptor {
	if v, ok := fieldCache.Load(md); ok {
		return v.([]protoreflect.FieldDescriptor)
	}
	var out []protoreflect.FieldDescriptor
	fds := md.Fields()
	for i := 0; i < fds.Len(); i++ {
		fd := fds.Get(i)
		if fd.Kind() == protoreflect.MessageKind && !fd.IsMap() {
			out = append(out, fd)
		}
	}
	fieldCache.Store(md, out)
	return out
}

// stringsOf returns the String values of a list of nodes (a qualified
// name) and whether every element was a String.
func stringsOf(nodes []*pg_query.Node) ([]string, bool) {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		s, ok := n.GetNode().(*pg_query.Node_String_)
		if !ok {
			return out, false
		}
		out = append(out, s.String_.Sval)
	}
	return out, true
}
