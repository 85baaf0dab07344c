package proxy

import (
	"testing"
	"time"
)

// A login whose startup parameters were not seen takes the state of one
// that starts sessions alike: the same user and database, other parameters
// equal or set only to what the origin reported.
func TestLoginCache_Similar(t *testing.T) {
	var c loginCache
	pgx := map[string]string{"user": "u", "database": "d"}
	reported := map[string]string{"client_encoding": "UTF8", "DateStyle": "ISO, MDY", "application_name": ""}
	c.putParams(loginKeyOf(pgx), reported)
	c.putInfo(loginKeyOf(pgx), sessionInfo{valid: true, user: "u"})
	time.Sleep(time.Millisecond)
	other := map[string]string{"user": "u", "database": "d", "options": "-c search_path=x"}
	c.putParams(loginKeyOf(other), reported)
	c.putInfo(loginKeyOf(other), sessionInfo{valid: true, user: "u", searchPath: []string{"x"}})

	for _, p := range []map[string]string{
		{"user": "u", "database": "d", "application_name": "psql", "client_encoding": "UTF8"},
		{"user": "u", "database": "d", "application_name": "app"},
		{"user": "u", "database": "d", "DateStyle": "ISO, MDY"},
	} {
		ls, ok := c.similar(p)
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
		if ls, ok := c.similar(p); ok {
			t.Errorf("%v: %v, want none", p, ls.Info)
		}
	}
	if ls, ok := c.similar(map[string]string{"user": "u", "database": "d", "options": "-c search_path=x", "application_name": "z"}); !ok || len(ls.Info.SearchPath) != 1 {
		t.Errorf("the options' own state: %v %v", ls.Info, ok)
	}
}

// TestKeyFlights_FirstLeadsOthersWait: the first session of a key leads,
// the others wait until it finishes; a flight nobody finished is replaced
// after flightMax.
func TestKeyFlights_FirstLeadsOthersWait(t *testing.T) {
	var f keyFlights
	if _, leader := f.join("k"); !leader {
		t.Fatal("the first join does not lead")
	}
	wait, leader := f.join("k")
	if leader || wait == nil {
		t.Fatal("the second join leads")
	}
	if _, other := f.join("other"); !other {
		t.Fatal("another key's first join does not lead")
	}
	select {
	case <-wait:
		t.Fatal("the flight ended before finish")
	default:
	}
	f.finish("k")
	<-wait
	if _, leader := f.join("k"); !leader {
		t.Fatal("the first join after finish does not lead")
	}
	f.flights["k"].started = time.Now().Add(-flightMax)
	wait = f.flights["k"].done
	if _, leader := f.join("k"); !leader {
		t.Fatal("a flight older than flightMax is not replaced")
	}
	<-wait // the replaced flight's waiters are let go
}
