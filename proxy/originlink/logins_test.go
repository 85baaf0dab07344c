package originlink

import (
	"testing"
	"time"
)

// A login whose startup parameters were not seen takes the state of one
// that starts sessions alike: the same user and database, other parameters
// equal or set only to what the origin reported.
func TestLoginCache_Similar(t *testing.T) {
	var c Logins
	pgx := map[string]string{"user": "u", "database": "d"}
	reported := map[string]string{"client_encoding": "UTF8", "DateStyle": "ISO, MDY", "application_name": ""}
	c.PutParams(LoginKeyOf(pgx), reported)
	c.PutInfo(LoginKeyOf(pgx), SessionInfo{Valid: true, User: "u"})
	time.Sleep(time.Millisecond)
	other := map[string]string{"user": "u", "database": "d", "options": "-c search_path=x"}
	c.PutParams(LoginKeyOf(other), reported)
	c.PutInfo(LoginKeyOf(other), SessionInfo{Valid: true, User: "u", SearchPath: []string{"x"}})

	for _, p := range []map[string]string{
		{"user": "u", "database": "d", "application_name": "psql", "client_encoding": "UTF8"},
		{"user": "u", "database": "d", "application_name": "app"},
		{"user": "u", "database": "d", "DateStyle": "ISO, MDY"},
	} {
		ls, ok := c.Similar(p)
		if !ok || len(ls.Info.SearchPath) != 0 {
			t.Errorf("%v: %v %v, want pgx's state", p, ls.Info, ok)
		}
	}
	for _, p := range []map[string]string{
		{"user": "u", "database": "d", "client_encoding": "LATIN1"},
		{"user": "u", "database": "d", "DateStyle": "ISO"}, // reported as "ISO, MDY"
		{"user": "v", "database": "d"},
		{"user": "u", "database": "e"},
		{"user": "u", "database": "d", "options": "-c search_path=y"},
		{"user": "u", "database": "d", "extra_float_digits": "3"},
	} {
		if ls, ok := c.Similar(p); ok {
			t.Errorf("%v: %v, want none", p, ls.Info)
		}
	}
	if ls, ok := c.Similar(map[string]string{"user": "u", "database": "d", "options": "-c search_path=x", "application_name": "z"}); !ok || len(ls.Info.SearchPath) != 1 {
		t.Errorf("the options' own state: %v %v", ls.Info, ok)
	}
}
