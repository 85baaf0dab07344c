package catalog

import (
	"reflect"
	"strings"
	"unicode"
)

// ReloadDiff is what a reload of the config file would change: the
// datasets added, removed and changed (by name, case-insensitively), and
// the settings outside datasets that differ, which take a restart.
type ReloadDiff struct {
	Added   []*Dataset
	Removed []*Dataset
	// Changed pairs each changed dataset's running configuration with the
	// new one.
	Changed [][2]*Dataset
	// Restart names the settings outside datasets that changed
	// (server.listen, runtime.results_cache, ...).
	Restart []string
}

// Empty reports whether the reload changes nothing.
func (d ReloadDiff) Empty() bool {
	return len(d.Added)+len(d.Removed)+len(d.Changed)+len(d.Restart) == 0
}

// Diff compares the running configuration c with n, a new load of its
// file. Line numbers and the file's name do not count.
func (c *Config) Diff(n *Config) ReloadDiff {
	var d ReloadDiff
	ov, nv := reflect.ValueOf(c).Elem(), reflect.ValueOf(n).Elem()
	t := ov.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Name == "Datasets" {
			continue
		}
		section := snake(f.Name)
		a, b := ov.Field(i), nv.Field(i)
		if a.Kind() == reflect.Struct {
			for j := range a.NumField() {
				sf := a.Type().Field(j)
				if sf.IsExported() && sf.Name != "Line" && !same(a.Field(j), b.Field(j)) {
					d.Restart = append(d.Restart, section+"."+snake(sf.Name))
				}
			}
			continue
		}
		if !same(a, b) {
			d.Restart = append(d.Restart, section)
		}
	}
	old := map[string]*Dataset{}
	for _, ds := range c.Datasets {
		old[strings.ToLower(ds.Name)] = ds
	}
	seen := map[string]bool{}
	for _, ds := range n.Datasets {
		k := strings.ToLower(ds.Name)
		seen[k] = true
		o, ok := old[k]
		switch {
		case !ok:
			d.Added = append(d.Added, ds)
		case !same(reflect.ValueOf(o).Elem(), reflect.ValueOf(ds).Elem()):
			d.Changed = append(d.Changed, [2]*Dataset{o, ds})
		}
	}
	for _, ds := range c.Datasets {
		if !seen[strings.ToLower(ds.Name)] {
			d.Removed = append(d.Removed, ds)
		}
	}
	return d
}

// snake is a Go field name as a config key: ResultsCache, results_cache.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 && !unicode.IsUpper(rune(s[i-1])) {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// same compares two values of one type deeply, ignoring the fields that
// only say where a setting was written (Line, Pos, line maps) and
// unexported bookkeeping.
func same(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return same(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			f := a.Type().Field(i)
			if !f.IsExported() || f.Name == "Line" || f.Name == "Pos" {
				continue
			}
			if !same(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !same(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			bv := b.MapIndex(k)
			if !bv.IsValid() || !same(a.MapIndex(k), bv) {
				return false
			}
		}
		return true
	case reflect.Func, reflect.Chan:
		return a.IsNil() && b.IsNil()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	case reflect.String:
		return a.String() == b.String()
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// File is the name of the file the configuration was read from (Load's
// path; Parse's filename).
func (c *Config) File() string { return c.file }
