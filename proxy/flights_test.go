package proxy

import (
	"testing"
	"time"
)

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
