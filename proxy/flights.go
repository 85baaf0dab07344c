package proxy

import (
	"sync"
	"time"
)

// keyFlights makes the sessions that need the origin for the same thing
// wait for the first of them. Logins of one key that need the origin (no
// state kept, or none fresh) wait for the first, which logs in there,
// reads the session info at once and keeps both (proxyLogin); sessions
// without an origin connection that need the origin's description of the
// same text wait for the first to ask (describeFlight). Without them, a
// burst of new sessions of one role (a pool filling up, 50 psycopg2
// workers starting) each opened an origin connection and held a backend
// for origin_idle_timeout, though they only read accelerated datasets.
type keyFlights struct {
	mu      sync.Mutex
	flights map[string]*keyFlight
}

// keyFlight is one key's flight.
type keyFlight struct {
	done    chan struct{}
	started time.Time
}

// flightMax is how long a flight lasts at most: one whose first session
// never finished it (its client left, its statement failed) is replaced
// by the next session that joins; those waiting for it wait at most as
// long. Without the flight each of them would have asked the origin
// itself, waiting as long for a slow one (DialTimeout's default).
const flightMax = 10 * time.Second

// maxFlights is how many flights are kept before the ones over are swept.
const maxFlights = 1024

// await waits for the flight whose channel is wait, at most flightMax, or
// until done is closed; it reports whether the flight ended.
func await(wait <-chan struct{}, done <-chan struct{}) bool {
	timer := time.NewTimer(flightMax)
	defer timer.Stop()
	select {
	case <-wait:
		return true
	case <-timer.C:
	case <-done:
	}
	return false
}

// join returns, for the first session of key in flight, leader true (it
// calls finish once what the others wait for is kept, or cannot be had);
// for the others, the channel finish closes.
func (f *keyFlights) join(key string) (wait <-chan struct{}, leader bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fl, ok := f.flights[key]; ok && time.Since(fl.started) < flightMax {
		return fl.done, false
	} else if ok {
		close(fl.done)
	}
	if f.flights == nil {
		f.flights = map[string]*keyFlight{}
	}
	if len(f.flights) >= maxFlights {
		// Flights whose first session never finished them (an extended-
		// protocol leader whose statement went elsewhere): gone once over.
		for k, fl := range f.flights {
			if time.Since(fl.started) >= flightMax {
				delete(f.flights, k)
				close(fl.done)
			}
		}
	}
	f.flights[key] = &keyFlight{done: make(chan struct{}), started: time.Now()}
	return nil, true
}

// finish ends key's flight, if one is in the air.
func (f *keyFlights) finish(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fl, ok := f.flights[key]; ok {
		delete(f.flights, key)
		close(fl.done)
	}
}
