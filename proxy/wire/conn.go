package wire

// Conn is a session as an event loop relays it: its two sockets, and the
// relay step its goroutines run too. A Loop calls it from its own thread
// only, but Closed, Close and WantsGoroutines, which other goroutines
// call as well.
type Conn interface {
	// Sockets are the client's and the origin's, both plain sockets.
	Sockets() (client, origin *RawIO)
	// RelayOne relays one step of what one side sent: ended when the
	// session ended, idle when there was nothing to read.
	RelayOne(fromOrigin bool) (ended, idle bool)
	// ReadBudget is how many steps the session may take per event before
	// the loop hands it to goroutines, so that one busy session cannot
	// hold up the others.
	ReadBudget() int
	// SetOnLoop marks the steps the loop's thread runs; SetLoop records
	// the loop that holds the session (nil: none), which Kick needs.
	SetOnLoop(on bool)
	SetLoop(l *Loop)
	// HandOff reports that a step took a message that must be handled on
	// goroutines; ClearHandOff once the loop hands the session back.
	HandOff() bool
	ClearHandOff()
	// EndsToPool reports that the session ended with its origin
	// connection going to a pool (its goroutine does that).
	EndsToPool() bool
	// WantsGoroutines reports (once) that the session asked to be handed
	// back (through Kick).
	WantsGoroutines() bool
	Closed() bool
	Close()
	// LoopEvent reports what happened to the session (Event*), with the
	// errors of handing its sockets back when that failed (the loop then
	// closes it).
	LoopEvent(what string, clientErr, originErr error)
	// Panicked reports a panic of a step; the session is closed.
	Panicked(r any)
}

// What happens to sessions in a loop (LoopEvent), the label values of
// pgaccel_event_loop_sessions_total.
const (
	EventTaken        = "taken"
	EventWriteBlocked = "write_blocked"
	EventBusy         = "busy"
	EventHandedOff    = "handed_off"
	EventReleased     = "released"
	EventPooled       = "pooled"
	EventPromoted     = "promoted"
)

// ReadBudget is the read budget (Conn.ReadBudget) of a pass-through
// session: reads of up to FrameBufSize bytes.
const ReadBudget = 32
