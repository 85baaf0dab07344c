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
		{"-> object keeps Postgres's text", func() (any, error) { return jsonGetRow([]driver.Value{doc, "b"}, false) }, `[1, 2, {"c": "x\u00e9"}]`},
		{"->> string unescaped", func() (any, error) { return jsonGetRow([]driver.Value{doc, "s"}, true) }, `q"`},
		{"->> null is NULL", func() (any, error) { return jsonGetRow([]driver.Value{doc, "n"}, true) }, nil},
		{"-> null is json null", func() (any, error) { return jsonGetRow([]driver.Value{doc, "n"}, false) }, "null"},
		{"the last of a repeated field", func() (any, error) { return jsonGetRow([]driver.Value{doc, "a"}, true) }, "2"},
		{"missing field", func() (any, error) { return jsonGetRow([]driver.Value{doc, "z"}, true) }, nil},
		{"array index from the end", func() (any, error) { return jsonGetRow([]driver.Value{`[1, "two", 3]`, int64(-2)}, true) }, "two"},
		{"index out of range", func() (any, error) { return jsonGetRow([]driver.Value{`[1]`, int64(3)}, true) }, nil},
		{"#>> path", func() (any, error) { return jsonPathRow([]driver.Value{doc, "{b,2,c}"}, true) }, "xé"},
		{"#>> path through a non-index", func() (any, error) { return jsonPathRow([]driver.Value{doc, "{b,x}"}, true) }, nil},
		{"? key", func() (any, error) { return jsonExistsRow([]driver.Value{doc, "b"}) }, true},
		{"? array string element", func() (any, error) { return jsonExistsRow([]driver.Value{`["a", 1]`, "a"}) }, true},
		{"? array number element", func() (any, error) { return jsonExistsRow([]driver.Value{`["a", 1]`, "1"}) }, false},
		{"typeof", func() (any, error) { return jsonTypeofRow([]driver.Value{` [1]`}) }, "array"},
		{"array length", func() (any, error) { return jsonArrayLengthRow([]driver.Value{`[1, [2, 3], {}]`}) }, int64(3)},
	}
	for _, tt := range tests {
		got, err := tt.got()
		if err != nil || got != tt.want {
			t.Errorf("%s: got %#v, %v; want %#v", tt.name, got, err, tt.want)
		}
	}
	if _, err := jsonGetRow([]driver.Value{`{"a": "\u0000"}`, "a"}, true); err == nil {
		t.Error(`->> of "\u0000": no error (Postgres refuses it)`)
	}
	if _, err := parseTextArray(`{a,NULL}`); err == nil {
		t.Error("a NULL path element: no error")
	}
}
