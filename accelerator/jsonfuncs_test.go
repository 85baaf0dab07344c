package accelerator

import (
	"database/sql/driver"
	"testing"
)

func TestJSONFunctions_TextAsItStands(t *testing.T) {
	doc := `{"a": 1, "b": [1, 2, {"c": "x\u00e9"}], "n": null, "s": "q\"", "a": 2}`
	tests := []struct {
		name string
		got  func() (any, error)
		want any
	}{
		{"-> object keeps Postgres's text", func() (any, error) { return jsonGetRow([]driver.Value{doc, "b"}, false, false) }, `[1, 2, {"c": "x\u00e9"}]`},
		{"->> string unescaped", func() (any, error) { return jsonGetRow([]driver.Value{doc, "s"}, true, false) }, `q"`},
		{"->> null is NULL", func() (any, error) { return jsonGetRow([]driver.Value{doc, "n"}, true, false) }, nil},
		{"-> null is json null", func() (any, error) { return jsonGetRow([]driver.Value{doc, "n"}, false, false) }, "null"},
		{"the last of a repeated field", func() (any, error) { return jsonGetRow([]driver.Value{doc, "a"}, true, false) }, "2"},
		{"missing field", func() (any, error) { return jsonGetRow([]driver.Value{doc, "z"}, true, false) }, nil},
		{"array index from the end", func() (any, error) { return jsonGetRow([]driver.Value{`[1, "two", 3]`, int64(-2)}, true, false) }, "two"},
		{"index out of range", func() (any, error) { return jsonGetRow([]driver.Value{`[1]`, int64(3)}, true, false) }, nil},
		// A jsonb scalar is a one-element array; a json one has no elements.
		{"jsonb scalar -> 0", func() (any, error) { return jsonGetRow([]driver.Value{`"s"`, int64(0)}, false, true) }, `"s"`},
		{"jsonb scalar ->> -1", func() (any, error) { return jsonGetRow([]driver.Value{`"s"`, int64(-1)}, true, true) }, "s"},
		{"jsonb null -> -1", func() (any, error) { return jsonGetRow([]driver.Value{`null`, int64(-1)}, false, true) }, "null"},
		{"jsonb scalar -> 1", func() (any, error) { return jsonGetRow([]driver.Value{`1.50`, int64(1)}, false, true) }, nil},
		{"jsonb scalar -> -2", func() (any, error) { return jsonGetRow([]driver.Value{`1.50`, int64(-2)}, false, true) }, nil},
		{"jsonb scalar -> key", func() (any, error) { return jsonGetRow([]driver.Value{`"s"`, "s"}, false, true) }, nil},
		{"jsonb array -> -1", func() (any, error) { return jsonGetRow([]driver.Value{`[1, 2]`, int64(-1)}, false, true) }, "2"},
		{"json scalar -> 0", func() (any, error) { return jsonGetRow([]driver.Value{`"s"`, int64(0)}, false, false) }, nil},
		{"#>> path", func() (any, error) { return jsonPathRow([]driver.Value{doc, "{b,2,c}"}, true) }, "xé"},
		{"#>> path through a non-index", func() (any, error) { return jsonPathRow([]driver.Value{doc, "{b,x}"}, true) }, nil},
		{"? key", func() (any, error) { return jsonExistsRow([]driver.Value{doc, "b"}) }, true},
		{"? array string element", func() (any, error) { return jsonExistsRow([]driver.Value{`["a", 1]`, "a"}) }, true},
		{"? array number element", func() (any, error) { return jsonExistsRow([]driver.Value{`["a", 1]`, "1"}) }, false},
		{"? string scalar", func() (any, error) { return jsonExistsRow([]driver.Value{`"a"`, "a"}) }, true},
		{"? other string scalar", func() (any, error) { return jsonExistsRow([]driver.Value{`"b"`, "a"}) }, false},
		{"? number scalar", func() (any, error) { return jsonExistsRow([]driver.Value{`1`, "1"}) }, false},
		{"? null scalar", func() (any, error) { return jsonExistsRow([]driver.Value{`null`, "null"}) }, false},
		{"typeof", func() (any, error) { return jsonTypeofRow([]driver.Value{` [1]`}) }, "array"},
		{"array length", func() (any, error) { return jsonArrayLengthRow([]driver.Value{`[1, [2, 3], {}]`}) }, int64(3)},
	}
	for _, tt := range tests {
		got, err := tt.got()
		if err != nil || got != tt.want {
			t.Errorf("%s: got %#v, %v; want %#v", tt.name, got, err, tt.want)
		}
	}
	if _, err := jsonGetRow([]driver.Value{`{"a": "\u0000"}`, "a"}, true, false); err == nil {
		t.Error(`->> of "\u0000": no error (Postgres refuses it)`)
	}
	if _, err := parseTextArray(`{a,NULL}`); err == nil {
		t.Error("a NULL path element: no error")
	}
}

func TestJSONBContains_AsPostgresDocuments(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{`{"product": "PostgreSQL", "version": 9.4, "jsonb": true}`, `{"version": 9.40}`, true},
		{`["foo", "bar", "baz"]`, `["bar"]`, true},
		{`["foo", "bar"]`, `"foo"`, true},
		{`{"foo": {"bar": "baz"}}`, `{"bar": "baz"}`, false},
		{`{"foo": {"bar": "baz"}}`, `{"foo": {}}`, true},
		{`[1, 2, [1, 3]]`, `[1, 3]`, false},
		{`[1, 2, [1, 3]]`, `[[1, 3]]`, true},
		{`{"a": 1}`, `["a"]`, false},
		{`"foo"`, `"foo"`, true},
		{`{"a": null}`, `{"a": null}`, true},
		{`{"a": [1, 2]}`, `{"a": 1}`, false},
		{`null`, `[]`, false},
		{`"s"`, `["s"]`, false},
	}
	for _, tt := range tests {
		got, err := jsonContainsRow([]driver.Value{tt.a, tt.b})
		if err != nil || got != tt.want {
			t.Errorf("%s @> %s: got %v, %v; want %v", tt.a, tt.b, got, err, tt.want)
		}
	}
}
