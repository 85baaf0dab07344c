package catalog

import (
	"errors"
	"fmt"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// This file holds the helpers over goccy/go-yaml's AST that decode.go
// needs: parsing, line numbers, anchors and aliases, mapping entries with
// merge keys, and scalars.

// parseYAML parses data into documents. Duplicate keys are left to the
// decoder, which reports all of them rather than the first. A panic in the
// parser on malformed input is reported as a syntax problem.
func parseYAML(data []byte) (file *ast.File, problem *Problem) {
	defer func() {
		if r := recover(); r != nil {
			file, problem = nil, &Problem{Message: fmt.Sprintf("invalid YAML: %v", r), Fix: "check the file's indentation and quoting"}
		}
	}()
	f, err := parser.ParseBytes(data, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		p := &Problem{Message: "invalid YAML: " + err.Error(), Fix: "check the indentation and quoting on this line"}
		var yerr yaml.Error
		if errors.As(err, &yerr) {
			p.Message = "invalid YAML: " + yerr.GetMessage()
			p.Line = tokenLine(yerr.GetToken())
		}
		return nil, p
	}
	return f, nil
}

// lineOf returns the line of n, or 0 when n carries no position.
func lineOf(n ast.Node) int {
	switch v := n.(type) {
	case nil:
		return 0
	case *ast.DocumentNode:
		if v.Start != nil {
			return tokenLine(v.Start)
		}
		return lineOf(v.Body)
	case *ast.MappingValueNode:
		return lineOf(v.Key)
	case *ast.MappingNode:
		if len(v.Values) > 0 && !v.IsFlowStyle {
			return lineOf(v.Values[0])
		}
	}
	return tokenLine(n.GetToken())
}

// tokenLine returns the line of tk, or 0.
func tokenLine(tk *token.Token) int {
	if tk == nil || tk.Position == nil {
		return 0
	}
	return tk.Position.Line
}

// anchorDef is one &name in the file.
type anchorDef struct {
	pos   *token.Position
	value ast.Node
}

// anchorTable collects the anchors of a file, in file order.
type anchorTable map[string][]anchorDef

// Visit implements ast.Visitor.
func (t anchorTable) Visit(n ast.Node) ast.Visitor {
	if a, ok := n.(*ast.AnchorNode); ok && a.Name != nil && a.Start != nil {
		name := a.Name.GetToken().Value
		t[name] = append(t[name], anchorDef{pos: a.Start.Position, value: a.Value})
	}
	return t
}

// lookup returns the value of the last anchor named name defined before at,
// as YAML resolves an alias.
func (t anchorTable) lookup(name string, at *token.Position) ast.Node {
	var found ast.Node
	for _, def := range t[name] {
		if at == nil || def.pos == nil || before(def.pos, at) {
			found = def.value
		}
	}
	return found
}

// before reports whether position a comes before b.
func before(a, b *token.Position) bool {
	return a.Line < b.Line || a.Line == b.Line && a.Column < b.Column
}

// maxAliasHops bounds alias chains so a self-referencing alias ends.
const maxAliasHops = 32

// resolve strips anchors and tags from n and follows aliases. It returns nil
// (and reports why) when an alias cannot be followed.
func (d *decoder) resolve(n ast.Node, path string) ast.Node {
	for range maxAliasHops {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		case *ast.AliasNode:
			var name string
			if v.Value != nil && v.Value.GetToken() != nil {
				name = v.Value.GetToken().Value
			}
			var at *token.Position
			if v.Start != nil {
				at = v.Start.Position
			}
			target := d.anchors.lookup(name, at)
			if target == nil {
				d.add(lineOf(v), path, fmt.Sprintf("alias *%s does not refer to an anchor defined before it", name), "define &"+name+" earlier in the file")
				return nil
			}
			n = target
		default:
			return n
		}
	}
	d.add(lineOf(n), path, "alias refers to itself", "point the alias at another anchor")
	return nil
}

// entry is one key of a mapping.
type entry struct {
	key   string
	line  int
	value ast.Node
}

// entries lists the keys of the mapping n in file order, expanding merge
// keys (<<: *anchor); a key given explicitly wins over a merged one. A key
// given twice is reported and its first value kept. ok is false when n is
// not a mapping.
func (d *decoder) entries(n ast.Node, path string, depth int) (list []entry, ok bool) {
	var values []*ast.MappingValueNode
	switch v := n.(type) {
	case *ast.MappingNode:
		values = v.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{v}
	default:
		return nil, false
	}
	seen := map[string]int{}
	var merged []entry
	for _, mv := range values {
		if mv == nil || mv.Key == nil {
			continue
		}
		if d.work++; d.work > maxWork {
			if !d.limitHit {
				d.add(lineOf(mv), path, "aliases and merge keys expand to too many keys", "merge fewer copies of each anchor")
			}
			d.limitHit = true
			return nil, true
		}
		line := lineOf(mv.Key)
		if mv.Key.IsMergeKey() {
			merged = append(merged, d.mergeSources(mv.Value, path, depth)...)
			continue
		}
		key, ok := d.keyText(mv.Key)
		if !ok {
			d.add(line, path, "a key must be a plain word", "write keys as name: value")
			continue
		}
		if first, dup := seen[key]; dup {
			d.add(line, joinPath(path, key), fmt.Sprintf("given twice (first on line %d)", first), "remove one of them")
			continue
		}
		seen[key] = line
		list = append(list, entry{key: key, line: line, value: mv.Value})
	}
	for _, e := range merged {
		if _, dup := seen[e.key]; !dup {
			seen[e.key] = e.line
			list = append(list, e)
		}
	}
	return list, true
}

// mergeSources returns the entries a merge key's value brings in: one
// mapping or a list of mappings, the earlier ones winning.
func (d *decoder) mergeSources(n ast.Node, path string, depth int) []entry {
	if depth > maxDepth {
		if !d.limitHit {
			d.add(lineOf(n), path, "merge keys nest too deeply", "merge fewer levels of anchors")
		}
		d.limitHit = true
		return nil
	}
	n = d.resolve(n, path)
	if seq, ok := n.(*ast.SequenceNode); ok {
		var all []entry
		for _, item := range seq.Values {
			if _, nested := d.resolve(item, path).(*ast.SequenceNode); nested {
				d.add(lineOf(item), path, "<< must refer to a mapping or a list of mappings", "use <<: [*a, *b] where &a and &b name mappings")
				continue
			}
			all = append(all, d.mergeSources(item, path, depth)...)
		}
		return all
	}
	list, ok := d.entries(n, path, depth+1)
	if !ok {
		d.add(lineOf(n), path, "<< must refer to a mapping", "use <<: *anchor where &anchor names a mapping")
	}
	return list
}

// keyText returns a mapping key as text.
func (d *decoder) keyText(k ast.MapKeyNode) (string, bool) {
	var n ast.Node = k
	if mk, ok := k.(*ast.MappingKeyNode); ok {
		n = mk.Value
	}
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.NullNode:
		return tokenValue(v), true
	}
	return "", false
}

// tokenValue returns the text of n's token as written.
func tokenValue(n ast.Node) string {
	if tk := n.GetToken(); tk != nil {
		return tk.Value
	}
	return ""
}

// scalarKind is the YAML type of a scalar.
type scalarKind int

const (
	kindNone   scalarKind = iota // not a scalar: a mapping or a list
	kindNull                     // null, ~ or nothing
	kindString                   // a string, after ${env:NAME} expansion
	kindInt
	kindFloat
	kindBool
)

// scalar is a scalar value and its text as written (strings expanded).
type scalar struct {
	text     string
	kind     scalarKind
	expanded bool // the text came from an ${env:NAME} reference
	line     int
}

// scalar reads n as a scalar, expanding ${env:NAME} in strings. ok is false
// when an expansion failed (already reported).
func (d *decoder) scalar(n ast.Node, path string) (s scalar, ok bool) {
	s.line = lineOf(n)
	switch v := n.(type) {
	case nil, *ast.NullNode:
		s.kind = kindNull
		return s, true
	case *ast.StringNode:
		s.kind, s.text = kindString, v.Value
	case *ast.LiteralNode:
		s.kind = kindString
		if v.Value != nil {
			s.text = v.Value.Value
		}
	case *ast.IntegerNode:
		s.kind, s.text = kindInt, tokenValue(v)
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		s.kind, s.text = kindFloat, tokenValue(v)
	case *ast.BoolNode:
		s.kind, s.text = kindBool, tokenValue(v)
	default:
		return s, true
	}
	if s.kind != kindString {
		return s, true
	}
	expanded, problems := expandEnv(s.text, d.env)
	for _, p := range problems {
		d.add(s.line, path, p.message, p.fix)
	}
	s.expanded = expanded != s.text
	s.text = expanded
	return s, len(problems) == 0
}
