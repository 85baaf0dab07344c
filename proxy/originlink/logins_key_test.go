package originlink

import (
	"testing"
)

// TestLoginKeyOf: startup parameters key a login, except an
// application_name Postgres reports as it came.
func TestLoginKeyOf(t *testing.T) {
	base := map[string]string{"user": "u", "database": "d"}
	with := func(k, v string) map[string]string {
		m := map[string]string{"user": "u", "database": "d"}
		m[k] = v
		return m
	}
	if LoginKeyOf(base) != LoginKeyOf(with("application_name", "psql")) {
		t.Error("a plain application_name changed the key")
	}
	if LoginKeyOf(base) == LoginKeyOf(with("application_name", "caf\u00e9")) {
		t.Error("a non-ASCII application_name (which Postgres escapes) did not change the key")
	}
	if LoginKeyOf(base) == LoginKeyOf(with("options", "-c search_path=x")) {
		t.Error("options did not change the key")
	}
	if LoginKeyOf(base) == LoginKeyOf(map[string]string{"user": "u", "database": "e"}) {
		t.Error("the database did not change the key")
	}
}
