package catalog

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// decoder turns the YAML AST into raw structs, reporting every problem with
// its line: unknown keys, keys given twice, values of the wrong type,
// malformed durations and ${env:NAME} references that cannot be expanded.
// It checks the shape of the file only; the meaning of values is checked by
// Validate.
type decoder struct {
	env      func(string) (string, bool)
	anchors  anchorTable
	problems []Problem
	work     int  // mapping entries read so far, aliases and merges included
	limitHit bool // a limit on depth or work was reported; report it once
}

// maxDepth bounds nesting through aliases and merge keys; the file itself
// nests at most four levels (datasets, a dataset, acceleration, params).
const maxDepth = 12

// maxWork bounds the mapping entries read, so that aliases merged into
// aliases ("billion laughs") cannot make decoding take forever.
const maxWork = 1 << 20

// decode parses data into a rawConfig. The rawConfig is usable (possibly
// partial) even when problems are returned, except after a YAML syntax
// error or when aliases nest or expand beyond the limits: then it is nil.
func decode(data []byte, env func(string) (string, bool)) (*rawConfig, []Problem) {
	file, syntax := parseYAML(data)
	if syntax != nil {
		return nil, []Problem{*syntax}
	}
	raw := &rawConfig{}
	d := &decoder{env: env, anchors: anchorTable{}}
	var docs []*ast.DocumentNode
	for _, doc := range file.Docs {
		if doc != nil && doc.Body != nil {
			docs = append(docs, doc)
		}
	}
	if len(docs) == 0 {
		return raw, nil
	}
	if len(docs) > 1 {
		d.add(lineOf(docs[1]), "", "the file holds more than one YAML document", "keep one document: remove the --- separators")
	}
	ast.Walk(d.anchors, docs[0])
	d.decodeStruct(docs[0].Body, "", reflect.ValueOf(raw).Elem(), 0)
	if d.limitHit {
		return nil, d.problems // the rest of the file was not read
	}
	return raw, d.problems
}

// add records a problem; path is the full key path, e.g.
// "datasets[0].acceleration.engine".
func (d *decoder) add(line int, path, message, fix string) {
	d.problems = append(d.problems, Problem{Line: line, Key: path, Message: message, Fix: fix})
}

// field is one YAML key of a raw struct.
type field struct {
	index     int
	allowZero bool
	// shorthand: a single value given for the block holding this field
	// is this field's (runtime.read_your_writes: off is its scope: off).
	shorthand bool
}

// structFields returns the YAML keys of a raw struct type, in declaration
// order, and their fields.
func structFields(t reflect.Type) (keys []string, fields map[string]field) {
	fields = map[string]field{}
	for i := range t.NumField() {
		tag := t.Field(i).Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" || name == "-" {
			continue
		}
		keys = append(keys, name)
		fields[name] = field{index: i, allowZero: opts == "allowzero", shorthand: opts == "shorthand"}
	}
	return keys, fields
}

var (
	typString   = reflect.TypeFor[*string]()
	typBool     = reflect.TypeFor[*bool]()
	typInt      = reflect.TypeFor[*int]()
	typDuration = reflect.TypeFor[*time.Duration]()
	typBytes    = reflect.TypeFor[*ByteSize]()
	typStrings  = reflect.TypeFor[*[]string]()
	typParams   = reflect.TypeFor[map[string]string]()
	typDatasets = reflect.TypeFor[[]*rawDataset]()
	typPos      = reflect.TypeFor[positions]()
)

// decodeStruct fills the raw struct v from the mapping n.
func (d *decoder) decodeStruct(n ast.Node, path string, v reflect.Value, depth int) {
	if depth > maxDepth {
		if !d.limitHit {
			d.add(lineOf(n), path, "nested too deeply", "check that no alias refers to a block that contains it")
		}
		d.limitHit = true
		return
	}
	n = d.resolve(n, path)
	if n == nil {
		return
	}
	if _, isNull := n.(*ast.NullNode); isNull {
		return
	}
	if !isMapping(n) {
		if keys, fields := structFields(v.Type()); len(keys) > 0 {
			for _, k := range keys {
				if f := fields[k]; f.shorthand {
					d.decodeField(n, joinPath(path, k), v.Field(f.index), f, positions{}, depth)
					for i := range v.NumField() {
						if v.Type().Field(i).Type == typPos {
							v.Field(i).Set(reflect.ValueOf(positions{"": lineOf(n), k: lineOf(n)}))
						}
					}
					return
				}
			}
		}
	}
	list, ok := d.entries(n, path, depth)
	if !ok {
		fix := "indent its keys under " + lastKey(path) + ":"
		if path == "" {
			fix = "start the file with top-level keys such as origin:, server: and datasets:"
		}
		d.add(lineOf(n), path, "must be a block of key: value lines", fix)
		return
	}
	keys, fields := structFields(v.Type())
	pos := positions{"": lineOf(n)}
	for _, e := range list {
		keyPath := joinPath(path, e.key)
		f, known := fields[e.key]
		if !known {
			d.unknownKey(e, keyPath, v.Type(), keys)
			continue
		}
		value := d.resolve(e.value, keyPath)
		if value == nil {
			continue
		}
		if _, isNull := value.(*ast.NullNode); isNull {
			continue // an empty value leaves the key unset
		}
		pos[e.key] = e.line
		d.decodeField(value, keyPath, v.Field(f.index), f, pos, depth)
	}
	for i := range v.NumField() {
		if v.Type().Field(i).Type == typPos {
			v.Field(i).Set(reflect.ValueOf(pos))
		}
	}
}

// decodeField decodes the value n of one key into the struct field fv.
func (d *decoder) decodeField(n ast.Node, path string, fv reflect.Value, f field, pos positions, depth int) {
	switch fv.Type() {
	case typString:
		if s, ok := d.stringValue(n, path); ok {
			fv.Set(reflect.ValueOf(&s))
		}
	case typBool:
		if b, ok := d.boolValue(n, path); ok {
			fv.Set(reflect.ValueOf(&b))
		}
	case typInt:
		if i, ok := d.intValue(n, path, f.allowZero); ok {
			fv.Set(reflect.ValueOf(&i))
		}
	case typDuration:
		if dur, ok := d.durationValue(n, path, f.allowZero); ok {
			fv.Set(reflect.ValueOf(&dur))
		}
	case typBytes:
		if b, ok := d.bytesValue(n, path, f.allowZero); ok {
			fv.Set(reflect.ValueOf(&b))
		}
	case typStrings:
		if list, ok := d.columnList(n, path); ok {
			fv.Set(reflect.ValueOf(&list))
		}
	case typParams:
		fv.Set(reflect.ValueOf(d.params(n, path, pos)))
	case typDatasets:
		fv.Set(reflect.ValueOf(d.datasets(n, path, depth)))
	default:
		if fv.Kind() == reflect.Pointer && fv.Type().Elem().Kind() == reflect.Struct {
			fv.Set(reflect.New(fv.Type().Elem()))
			d.decodeStruct(n, path, fv.Elem(), depth+1)
			return
		}
		panic(fmt.Sprintf("catalog: no decoder for %s (%s)", fv.Type(), path))
	}
}

// datasets decodes the datasets list. Problems found inside a dataset are
// labelled with its name (or table) and keyed relative to it.
func (d *decoder) datasets(n ast.Node, path string, depth int) []*rawDataset {
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		d.add(lineOf(n), path, "must be a list of datasets", "start each dataset with a dash, as in \"- from: postgres:public.orders\"")
		return nil
	}
	var list []*rawDataset
	for i, item := range seq.Values {
		itemPath := fmt.Sprintf("%s[%d]", path, i)
		first := len(d.problems)
		ds := &rawDataset{index: i}
		item = d.resolve(item, itemPath)
		if item == nil {
			continue
		}
		if !isMapping(item) {
			d.add(lineOf(item), itemPath, "a dataset must be a block of key: value lines", "write it as \"- from: postgres:schema.table\" followed by its other keys")
			continue
		}
		d.decodeStruct(item, itemPath, reflect.ValueOf(ds).Elem(), depth+1)
		if label := ds.label(); label != "" {
			for j := first; j < len(d.problems); j++ {
				p := &d.problems[j]
				p.Dataset = label
				p.Key = strings.TrimPrefix(strings.TrimPrefix(p.Key, itemPath), ".")
			}
		}
		list = append(list, ds)
	}
	return list
}

// stringValue reads a scalar as text. Numbers and booleans are taken as
// written, so `name: 2024` is the string "2024".
func (d *decoder) stringValue(n ast.Node, path string) (string, bool) {
	s, ok := d.scalar(n, path)
	if !ok {
		return "", false
	}
	if s.kind == kindNone {
		d.add(lineOf(n), path, "must be a single value, not a block or a list", "write one value after "+lastKey(path)+":, quoted if it holds [ ] { } or :")
		return "", false
	}
	return s.text, true
}

// boolValue reads true or false.
func (d *decoder) boolValue(n ast.Node, path string) (bool, bool) {
	s, ok := d.scalar(n, path)
	if !ok {
		return false, false
	}
	if s.kind == kindBool || s.expanded {
		switch strings.ToLower(s.text) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	d.add(s.line, path, "must be true or false"+got(s), "write true or false, without quotes")
	return false, false
}

// intValue reads a whole number of at least 1 (0 too with allowZero).
func (d *decoder) intValue(n ast.Node, path string, allowZero bool) (int, bool) {
	s, ok := d.scalar(n, path)
	if !ok {
		return 0, false
	}
	if s.kind == kindInt || s.expanded {
		i, err := strconv.ParseInt(strings.ReplaceAll(s.text, "_", ""), 0, 0)
		least := int64(1)
		if allowZero {
			least = 0
		}
		if err == nil && i >= least {
			return int(i), true
		}
		if err == nil {
			d.add(s.line, path, fmt.Sprintf("must be at least %d", least)+got(s), "remove the key to leave it unset")
			return 0, false
		}
	}
	d.add(s.line, path, "must be a whole number"+got(s), "write a number without quotes, such as 10")
	return 0, false
}

// durationValue reads a duration; it must be positive unless allowZero.
func (d *decoder) durationValue(n ast.Node, path string, allowZero bool) (time.Duration, bool) {
	s, ok := d.scalar(n, path)
	if !ok {
		return 0, false
	}
	if s.kind == kindString || s.kind == kindInt {
		dur, err := ParseDuration(s.text)
		switch {
		case err != nil && s.kind == kindInt:
			d.add(s.line, path, "a duration needs a unit"+got(s), durationExample)
			return 0, false
		case err != nil:
			d.add(s.line, path, "not a duration"+got(s), durationExample)
			return 0, false
		case dur == 0 && !allowZero:
			d.add(s.line, path, "must be longer than zero", "remove the key to leave it unset, or "+durationExample)
			return 0, false
		}
		return dur, true
	}
	d.add(s.line, path, "must be a duration"+got(s), durationExample)
	return 0, false
}

// bytesValue reads a size with a unit; it must be positive unless
// allowZero.
func (d *decoder) bytesValue(n ast.Node, path string, allowZero bool) (ByteSize, bool) {
	s, ok := d.scalar(n, path)
	if !ok {
		return 0, false
	}
	if s.kind != kindString && s.kind != kindInt {
		d.add(s.line, path, "must be a size"+got(s), byteSizeExample)
		return 0, false
	}
	b, err := ParseByteSize(s.text)
	switch {
	case err != nil:
		d.add(s.line, path, "not a size"+got(s), byteSizeExample)
		return 0, false
	case b == 0 && !allowZero:
		d.add(s.line, path, "must be larger than zero", "remove the key to leave the default, or "+byteSizeExample)
		return 0, false
	}
	return b, true
}

// columnList reads primary_key: one column, a comma-separated list of
// columns (optionally in parentheses), or a YAML list of columns.
func (d *decoder) columnList(n ast.Node, path string) ([]string, bool) {
	var parts []string
	var line int
	if seq, isSeq := n.(*ast.SequenceNode); isSeq {
		line = lineOf(seq)
		for i, item := range seq.Values {
			s, ok := d.stringValue(d.resolve(item, path), fmt.Sprintf("%s[%d]", path, i))
			if !ok {
				return nil, false
			}
			parts = append(parts, s)
		}
	} else {
		s, ok := d.stringValue(n, path)
		if !ok {
			return nil, false
		}
		line = lineOf(n)
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
			s = s[1 : len(s)-1]
		}
		parts = strings.Split(s, ",")
	}
	columns := make([]string, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			d.add(line, path, "names an empty column", "list column names, as in \"primary_key: id\" or \"primary_key: [tenant_id, id]\"")
			return nil, false
		}
		columns = append(columns, p)
	}
	if len(columns) == 0 {
		d.add(line, path, "lists no column", "list column names, as in \"primary_key: id\" or \"primary_key: [tenant_id, id]\"")
		return nil, false
	}
	return columns, true
}

// params reads a params block: keys to plain values. The line of each key
// is recorded in pos as "params.<key>".
func (d *decoder) params(n ast.Node, path string, pos positions) map[string]string {
	list, ok := d.entries(n, path, 0)
	if !ok {
		d.add(lineOf(n), path, "must be a block of key: value lines", "indent its keys under "+lastKey(path)+":")
		return nil
	}
	out := make(map[string]string, len(list))
	for _, e := range list {
		keyPath := joinPath(path, e.key)
		s, ok := d.stringValue(d.resolve(e.value, keyPath), keyPath)
		if !ok {
			continue
		}
		out[e.key] = s
		pos["params."+e.key] = e.line
	}
	return out
}

// unknownKey reports a key that t does not have, with the closest known key
// or the block the key belongs to.
func (d *decoder) unknownKey(e entry, path string, t reflect.Type, known []string) {
	msg := fmt.Sprintf("unknown key %q", e.key)
	if where := misplaced(t, e.key); where != "" {
		d.add(e.line, path, msg, where)
		return
	}
	if s := suggest(e.key, known); s != "" {
		d.add(e.line, path, msg, fmt.Sprintf("did you mean %q?", s))
		return
	}
	d.add(e.line, path, msg, "remove it; the keys here are "+strings.Join(known, ", "))
}

// misplaced says where a key belongs when it is a key of a neighbouring
// block, e.g. time_column written under acceleration.
func misplaced(t reflect.Type, key string) string {
	has := func(t reflect.Type) bool {
		_, fields := structFields(t)
		_, ok := fields[key]
		return ok
	}
	datasetType := reflect.TypeFor[rawDataset]()
	accelType := reflect.TypeFor[rawAcceleration]()
	switch {
	case t == accelType && has(datasetType):
		return key + " belongs to the dataset: move it out of acceleration, one level up"
	case t == datasetType && has(accelType):
		return key + " belongs under acceleration: move it there"
	case t == reflect.TypeFor[rawConfig]() && (has(datasetType) || has(accelType)):
		return key + " belongs to a dataset: put it in an entry of the datasets list"
	}
	return ""
}

// isMapping reports whether n is a block of key: value lines.
func isMapping(n ast.Node) bool {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return true
	}
	return false
}

// got describes the value received, for type errors. A value that came
// from the environment is not shown: it may be a secret.
func got(s scalar) string {
	switch {
	case s.expanded:
		return " (the value of its ${env:...} reference is not)"
	case s.kind == kindNone:
		return ", not a block or a list"
	case s.kind == kindString:
		return fmt.Sprintf(", got %q", s.text)
	default:
		return ", got " + s.text
	}
}

// joinPath appends key to a dotted key path.
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// lastKey returns the last key of a dotted path.
func lastKey(path string) string {
	return path[strings.LastIndexByte(path, '.')+1:]
}
