package proxy

import (
	"math/rand/v2"

	"github.com/pgaccel/pgaccel/proxy/encode"
	"github.com/pgaccel/pgaccel/proxy/originlink"
)

// accelState is what routing keeps for a session with an acceleration:
// the session info the planner reads (private.go), the encoding settings
// built from it, the memos of decisions, and the route notes.
//
// Goroutines: the client loop's only.
type accelState struct {
	info         originlink.SessionInfo
	infoDirty    bool
	infoPrepared bool
	infoGen      uint64 // counts session info reads
	// changedInTx: the transaction changed something the session info
	// holds.
	changedInTx bool
	// virtualBegin is the BEGIN of a transaction the session is in that
	// is not at the origin (localtx.go); "" when there is none.
	virtualBegin string

	settingsValid  bool
	settingsGen    uint64 // SessionState generation the settings were built for
	settingsInfo   uint64 // infoGen the settings were built for
	cachedSettings *encode.Settings

	quickMemo quickMemo
	lastCount lastCounters
	// stats is the session's last few statement statistics entries
	// (stats.go).
	stats statCache
	// lastRoute is how the last statement was routed, for SHOW
	// pgaccel.last_route (route.go).
	lastRoute routeNote
	pointKey  []byte // a point read's key (pointindex.go), reused
	// revalidation is a stale answer of a caching dataset served, to ask
	// the origin for again once the session is idle (caching_session.go);
	// cachingDirty the caching datasets its transaction may have written.
	revalidation *revalidation
	cachingDirty datasetSet
	// fences are the read-your-writes fences the session reads by
	// (consistency.go), nil until its first write or read of a dataset;
	// written the datasets its transaction may have written, fenced when
	// it ends (commitWrites). Both are shared with the origin relay, each
	// under its own lock.
	fences  fenceRef
	written datasetSet
	// verifyRand draws the statements shadow verification samples
	// (verify.go), made at the first draw.
	verifyRand *rand.Rand
}
