package accelerator

import (
	"bytes"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/pgaccel/pgaccel/pgdef"
)

// Postgres's json and jsonb operators, over the acceleration's json and
// jsonb columns (VARCHAR holding the origin's text: jsonb's is its
// canonical output). DuckDB's own operators of the same spelling parse the
// text and print containers their own way ({"a":1} for Postgres's
// {"a": 1}). These functions return the value's text as it stands in the
// document, which is what Postgres prints for a jsonb (canonical already)
// and for a json (its original text):
//
//	pgaccel_json_get(doc, key text | index bigint)       -> VARCHAR  (doc -> key)
//	pgaccel_json_get_text(doc, key text | index bigint)  -> VARCHAR  (doc ->> key)
//	pgaccel_jsonb_get(doc, key text | index bigint)      -> VARCHAR  (jsonb -> key)
//	pgaccel_jsonb_get_text(doc, key text | index bigint) -> VARCHAR  (jsonb ->> key)
//	pgaccel_json_path(doc, path text)                    -> VARCHAR  (doc #> path)
//	pgaccel_json_path_text(doc, path text)               -> VARCHAR  (doc #>> path)
//	pgaccel_jsonb_exists(doc, key text)                  -> BOOLEAN  (doc ? key)
//
// The jsonb forms take a scalar document as a one-element array, as
// Postgres keeps a jsonb scalar (doc -> 0 and doc -> -1 are the scalar);
// json's has no elements. path is the text of a Postgres text[] ('{a,0,b}'). A field named twice
// in a json object: Postgres returns the last one, as here. A string
// holding \u0000 or a lone surrogate, which Postgres refuses to turn into
// text, is an error here too (the statement falls back to the origin).
const (
// json_typeof/jsonb_typeof and json_array_length/jsonb_array_length.
)

// registerJSONFunctions registers the json functions.
func registerJSONFunctions(conn *sql.Conn) error {
	varchar, bigint, boolean := mustTypeInfo(duckdb.TYPE_VARCHAR), mustTypeInfo(duckdb.TYPE_BIGINT), mustTypeInfo(duckdb.TYPE_BOOLEAN)
	varcharList, err := duckdb.NewListInfo(varchar)
	if err != nil {
		return err
	}
	get := func(text, jsonb bool) []duckdb.ScalarFunc {
		row := func(v []driver.Value) (any, error) { return jsonGetRow(v, text, jsonb) }
		return []duckdb.ScalarFunc{
			scalarUDF{[]duckdb.TypeInfo{varchar, varchar}, varchar, row},
			scalarUDF{[]duckdb.TypeInfo{varchar, bigint}, varchar, row},
		}
	}
	sets := map[string][]duckdb.ScalarFunc{
		pgdef.FuncJSONGet:      get(false, false),
		pgdef.FuncJSONGetText:  get(true, false),
		pgdef.FuncJSONBGet:     get(false, true),
		pgdef.FuncJSONBGetText: get(true, true),
		pgdef.FuncJSONPath: {scalarUDF{[]duckdb.TypeInfo{varchar, varchar}, varchar, func(v []driver.Value) (any, error) {
			return jsonPathRow(v, false)
		}}},
		pgdef.FuncJSONPathText: {scalarUDF{[]duckdb.TypeInfo{varchar, varchar}, varchar, func(v []driver.Value) (any, error) {
			return jsonPathRow(v, true)
		}}},
		pgdef.FuncJSONBExists:     {scalarUDF{[]duckdb.TypeInfo{varchar, varchar}, boolean, jsonExistsRow}},
		pgdef.FuncJSONTypeof:      {scalarUDF{[]duckdb.TypeInfo{varchar}, varchar, jsonTypeofRow}},
		pgdef.FuncJSONBContains:   {scalarUDF{[]duckdb.TypeInfo{varchar, varchar}, boolean, jsonContainsRow}},
		pgdef.FuncJSONArrayLength: {scalarUDF{[]duckdb.TypeInfo{varchar}, bigint, jsonArrayLengthRow}},
	}
	// A path written '{a,b}'::text[] arrives as a list.
	for name, text := range map[string]bool{pgdef.FuncJSONPath: false, pgdef.FuncJSONPathText: true} {
		sets[name] = append(sets[name], scalarUDF{[]duckdb.TypeInfo{varchar, varcharList}, varchar, func(v []driver.Value) (any, error) {
			return jsonPathListRow(v, text)
		}})
	}
	for name, fs := range sets {
		if err := duckdb.RegisterScalarUDFSet(conn, name, fs...); err != nil {
			return fmt.Errorf("register %s: %w", name, err)
		}
	}
	return nil
}

// jsonGetRow is doc -> key (doc ->> key when text) of a json document, or
// of a jsonb one, whose scalar is a one-element array.
func jsonGetRow(v []driver.Value, text, jsonb bool) (any, error) {
	doc, ok := v[0].(string)
	if !ok {
		return nil, nil
	}
	if i, ok := v[1].(int64); ok && jsonb {
		if raw := bytes.TrimSpace([]byte(doc)); len(raw) > 0 && raw[0] != '{' && raw[0] != '[' {
			if i == 0 || i == -1 {
				return jsonResult(raw, text)
			}
			return nil, nil
		}
	}
	raw, found, err := jsonStep([]byte(doc), v[1])
	if err != nil || !found {
		return nil, err
	}
	return jsonResult(raw, text)
}

func jsonPathRow(v []driver.Value, text bool) (any, error) {
	doc, ok1 := v[0].(string)
	path, ok2 := v[1].(string)
	if !ok1 || !ok2 {
		return nil, nil
	}
	steps, err := parseTextArray(path)
	if err != nil {
		return nil, err
	}
	return jsonPath(doc, steps, text)
}

func jsonPathListRow(v []driver.Value, text bool) (any, error) {
	doc, ok1 := v[0].(string)
	list, ok2 := v[1].([]any)
	if !ok1 || !ok2 {
		return nil, nil
	}
	steps := make([]string, len(list))
	for i, el := range list {
		s, ok := el.(string)
		if !ok {
			return nil, errors.New("json path: a NULL element")
		}
		steps[i] = s
	}
	return jsonPath(doc, steps, text)
}

// jsonPath follows steps (field names, or indexes into arrays) from doc.
func jsonPath(doc string, steps []string, text bool) (any, error) {
	var err error
	raw := bytes.TrimSpace([]byte(doc))
	for _, s := range steps {
		var key any = s
		if len(raw) > 0 && raw[0] == '[' {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, nil // not an index: no such element
			}
			key = n
		}
		var found bool
		if raw, found, err = jsonStep(raw, key); err != nil || !found {
			return nil, err
		}
	}
	return jsonResult(raw, text)
}

func jsonExistsRow(v []driver.Value) (any, error) {
	doc, ok1 := v[0].(string)
	key, ok2 := v[1].(string)
	if !ok1 || !ok2 {
		return nil, nil
	}
	raw := bytes.TrimSpace([]byte(doc))
	if len(raw) == 0 {
		return nil, errors.New("pgaccel_jsonb_exists: empty document")
	}
	switch raw[0] {
	case '{':
		_, found, err := jsonStep(raw, key)
		return found, err
	case '[':
		els, err := arrayElements(raw)
		if err != nil {
			return nil, err
		}
		for _, el := range els {
			if len(el) > 0 && el[0] == '"' {
				s, err := jsonString(el)
				if err != nil {
					return nil, err
				}
				if s == key {
					return true, nil
				}
			}
		}
		return false, nil
	}
	// A scalar is kept as a one-element array (a raw scalar): a string
	// equal to the key matches, as an array's element does; nothing else.
	if raw[0] == '"' {
		s, err := jsonString(raw)
		if err != nil {
			return nil, err
		}
		return s == key, nil
	}
	return false, nil
}

// jsonStep returns the raw value of field key (a string) of an object, or
// of element key (an int64, negative from the end) of an array.
func jsonStep(doc []byte, key any) (json.RawMessage, bool, error) {
	doc = bytes.TrimSpace(doc)
	if len(doc) == 0 {
		return nil, false, errors.New("json: empty document")
	}
	switch k := key.(type) {
	case string:
		if doc[0] != '{' {
			return nil, false, nil
		}
		dec := json.NewDecoder(bytes.NewReader(doc))
		if _, err := dec.Token(); err != nil {
			return nil, false, err
		}
		var last json.RawMessage
		found := false
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				return nil, false, err
			}
			name, _ := t.(string)
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return nil, false, err
			}
			if name == k {
				last, found = v, true
			}
		}
		return last, found, nil
	case int64:
		if doc[0] != '[' {
			return nil, false, nil
		}
		els, err := arrayElements(doc)
		if err != nil {
			return nil, false, err
		}
		i := k
		if i < 0 {
			i += int64(len(els))
		}
		if i < 0 || i >= int64(len(els)) {
			return nil, false, nil
		}
		return els[i], true, nil
	}
	return nil, false, fmt.Errorf("json: a key of type %T", key)
}

// jsonResult is the value's text: for ->> and #>>, a string unescaped and
// null as SQL NULL; for -> and #>, the value as it stands.
func jsonResult(raw json.RawMessage, text bool) (any, error) {
	if !text {
		return string(raw), nil
	}
	switch {
	case string(raw) == "null":
		return nil, nil
	case len(raw) > 0 && raw[0] == '"':
		return jsonString(raw)
	}
	return string(raw), nil
}

// jsonString unescapes a JSON string as Postgres does, refusing what
// Postgres refuses to turn into text (\u0000, lone surrogates).
func jsonString(raw json.RawMessage) (string, error) {
	if bytes.Contains(raw, []byte(`\u0000`)) {
		return "", errors.New("json: \\u0000 cannot be converted to text")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	if strings.ContainsRune(s, utf8.RuneError) && !bytes.ContainsRune(raw, utf8.RuneError) {
		return "", errors.New("json: a lone surrogate")
	}
	return s, nil
}

// parseTextArray parses the text of a one-dimensional Postgres text[]:
// {a,b,"c d"} (elements quoted with backslash escapes, or bare).
func parseTextArray(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, errors.New("json path: not an array literal")
	}
	body := s[1 : len(s)-1]
	var out []string
	for i := 0; i < len(body); {
		for i < len(body) && body[i] == ' ' {
			i++
		}
		var b strings.Builder
		if i < len(body) && body[i] == '"' {
			i++
			for i < len(body) && body[i] != '"' {
				if body[i] == '\\' && i+1 < len(body) {
					i++
				}
				b.WriteByte(body[i])
				i++
			}
			i++ // closing quote
		} else {
			start := i
			for i < len(body) && body[i] != ',' {
				i++
			}
			el := strings.TrimSpace(body[start:i])
			if strings.EqualFold(el, "NULL") || strings.ContainsAny(el, `{}"\`) {
				return nil, errors.New("json path: an element the acceleration does not read")
			}
			b.WriteString(el)
		}
		out = append(out, b.String())
		for i < len(body) && body[i] == ' ' {
			i++
		}
		if i < len(body) {
			if body[i] != ',' {
				return nil, errors.New("json path: not an array literal")
			}
			i++
		}
	}
	return out, nil
}

func jsonTypeofRow(v []driver.Value) (any, error) {
	doc, ok := v[0].(string)
	if !ok {
		return nil, nil
	}
	raw := bytes.TrimSpace([]byte(doc))
	if len(raw) == 0 {
		return nil, errors.New("json: empty document")
	}
	switch raw[0] {
	case '{':
		return "object", nil
	case '[':
		return "array", nil
	case '"':
		return "string", nil
	case 't', 'f':
		return "boolean", nil
	case 'n':
		return "null", nil
	}
	return "number", nil
}

func jsonArrayLengthRow(v []driver.Value) (any, error) {
	doc, ok := v[0].(string)
	if !ok {
		return nil, nil
	}
	raw := bytes.TrimSpace([]byte(doc))
	if len(raw) == 0 || raw[0] != '[' {
		return nil, errors.New("json: cannot get the array length of a non-array")
	}
	els, err := arrayElements(raw)
	if err != nil {
		return nil, err
	}
	return int64(len(els)), nil
}

// arrayElements returns the raw elements of the JSON array doc.
func arrayElements(doc []byte) ([]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var els []json.RawMessage
	for dec.More() {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		els = append(els, v)
	}
	return els, nil
}

// pgdef.FuncJSONBContains is Postgres's jsonb @> jsonb (JsonbDeepContains):
//
//	pgaccel_jsonb_contains(doc, template) -> BOOLEAN
//
// An object contains an object whose every key it has with a contained
// value; an array contains an array whose every element one of its
// elements contains (a scalar equal to a scalar, a container of the same
// kind containing a container), and a scalar as a one-element array;
// scalars contain equal scalars (numbers by value).

func jsonContainsRow(v []driver.Value) (any, error) {
	doc, ok1 := v[0].(string)
	tmpl, ok2 := v[1].(string)
	if !ok1 || !ok2 {
		return nil, nil
	}
	a, err := decodeJSON(doc)
	if err != nil {
		return nil, err
	}
	b, err := decodeJSON(tmpl)
	if err != nil {
		return nil, err
	}
	// A raw scalar is a one-element array at the root.
	_, aObj := a.(map[string]any)
	_, bObj := b.(map[string]any)
	if aObj != bObj {
		return false, nil
	}
	if !aObj {
		// A raw scalar may contain a raw scalar; an array may contain
		// either; a raw scalar never contains an array.
		_, aArr := a.([]any)
		_, bArr := b.([]any)
		if !aArr && bArr {
			return false, nil
		}
		a, b = rootArray(a), rootArray(b)
	}
	return jsonContains(a, b), nil
}

func rootArray(v any) any {
	if _, ok := v.([]any); ok {
		return v
	}
	return []any{v}
}

func decodeJSON(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func jsonContains(a, b any) bool {
	switch bv := b.(type) {
	case map[string]any:
		av, ok := a.(map[string]any)
		if !ok {
			return false
		}
		for k, x := range bv {
			y, ok := av[k]
			if !ok || !jsonContains(y, x) {
				return false
			}
		}
		return true
	case []any:
		av, ok := a.([]any)
		if !ok {
			return false
		}
		for _, x := range bv {
			found := false
			for _, y := range av {
				if jsonContains(y, x) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	return jsonScalarEqual(a, b)
}

func jsonScalarEqual(a, b any) bool {
	switch bv := b.(type) {
	case json.Number:
		an, ok := a.(json.Number)
		if !ok {
			return false
		}
		x, okx := new(big.Rat).SetString(an.String())
		y, oky := new(big.Rat).SetString(bv.String())
		return okx && oky && x.Cmp(y) == 0
	case string, bool, nil:
		return a == b
	}
	return false
}
