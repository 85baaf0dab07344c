package proxy

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/proxy/originlink"
)

// SETs of an extended-protocol stretch. Postgres runs the messages of a
// stretch (up to its Sync) in one implicit transaction: a SET in it takes
// effect at once for the statements after it, and is rolled back with the
// stretch when any later statement fails. Since version 14 it reports a
// reported setting's new value (ParameterStatus) just before the Sync's
// ReadyForQuery, and only when the stretch succeeded.
//
// A SET the session answers itself in a stretch (localcmd.go) is
// therefore tentative until the Sync: it applies for the stretch (the
// encoder follows it), its ParameterStatus waits, and it is kept for
// replay only if the stretch succeeds; if a statement after it fails,
// here or at the origin, the settings are put back and the client hears
// nothing. When a later statement of the stretch opens an origin
// connection, the connection gets the settings the session had before the
// stretch (replay), then the stretch's tentative SETs as extended-protocol
// messages of the stretch itself, their answers kept from the client; the
// origin then rolls them back or reports them as Postgres would. A SET
// that runs at the origin in a stretch is kept for replay on the same
// terms (commitSet).
//
// The stretch's outcome is read at its Sync (settleSets): a local error
// skipped to it, or the origin failed a message of it, which the Sync
// waits for. Not followed: an error at the Sync itself (a deferred
// constraint failing the implicit commit), and a simple Query sent inside
// a stretch, which Postgres runs in (and commits with) the stretch's
// transaction; it settles the stretch as a Sync would, by what failed
// before it.

// stretchSets are the tentative SETs of the current stretch and what the
// session had before the first.
type stretchSets struct {
	// sqls are the SETs, in order, for replay if the stretch succeeds;
	// local those of them answered here, for an origin connection the
	// stretch opens.
	sqls, local []string
	// prior holds the reported settings a SET answered here changed,
	// with the value the client has.
	prior map[string]string
	// extraFloatDigits and statementTimeout are the session's at the
	// stretch's first SET (what a failed stretch puts back).
	extraFloatDigits string
	statementTimeout time.Duration
	// fails is the pending queue's failure count at the first SET.
	fails uint64
	// failed: a local error skipped the stretch to its Sync.
	failed bool
	// atOrigin: the local SETs were sent to an origin connection the
	// stretch opened, which reports them itself.
	atOrigin bool
}

// tentative returns the stretch's tentative SETs, starting them.
func (ss *session) tentative() *stretchSets {
	if ss.origin.tent == nil {
		ss.origin.tent = &stretchSets{
			prior:            map[string]string{},
			extraFloatDigits: ss.acc.info.ExtraFloatDigits,
			statementTimeout: ss.acc.info.StatementTimeout,
			fails:            ss.origin.pending.Failures(),
		}
	}
	return ss.origin.tent
}

// settleSets decides the stretch's tentative SETs at its Sync (or at a
// Query inside it), once the origin has answered everything before it:
// kept if nothing of the stretch failed, undone otherwise. The
// ParameterStatus of the settings a kept SET answered here changed reach
// the client now, before the Sync's ReadyForQuery.
func (ss *session) settleSets() {
	t := ss.origin.tent
	if t == nil {
		return
	}
	if !ss.origin.pending.Idle() {
		ss.drain()
	}
	ss.origin.tent = nil
	if t.failed || ss.origin.pending.Skipping() || ss.origin.pending.Failures() != t.fails {
		if ss.acc.info.ExtraFloatDigits != t.extraFloatDigits || ss.acc.info.StatementTimeout != t.statementTimeout {
			ss.acc.info.ExtraFloatDigits, ss.acc.info.StatementTimeout = t.extraFloatDigits, t.statementTimeout
			ss.acc.infoGen++
		}
		for name, v := range t.prior {
			ss.state.setParam(name, v)
		}
		return
	}
	for _, sql := range t.sqls {
		ss.keepSet(sql)
	}
	if t.atOrigin {
		return // the origin reports them at its ReadyForQuery
	}
	// In the order Postgres 14 and 15 report them: by name, in any case.
	names := slices.SortedFunc(maps.Keys(t.prior), func(a, b string) int {
		return strings.Compare(strings.ToLower(a), strings.ToLower(b))
	})
	var msgs []pgproto3.BackendMessage
	for _, name := range names {
		if v := ss.state.Param(name); v != t.prior[name] {
			msgs = append(msgs, &pgproto3.ParameterStatus{Name: name, Value: v})
		}
	}
	if len(msgs) > 0 {
		ss.answerLocal(msgs...)
	}
}

// sendStretchSets sends the stretch's tentative SETs answered here to the
// origin connection just opened for a later message of the stretch, as
// messages of the stretch (unnamed, their answers kept from the client:
// it has the proxy's), so that the origin rolls them back with it.
func (ss *session) sendStretchSets() {
	t := ss.origin.tent
	if t == nil || t.atOrigin || len(t.local) == 0 {
		return
	}
	t.atOrigin = true
	ss.ext.stretchOrigin = true
	for _, sql := range t.local {
		if !ss.origin.pending.Push(originlink.Item{Kind: originlink.ItemParse, Swallow: true}) {
			return
		}
		ss.origin.fe.Send(&pgproto3.Parse{Query: sql})
		ss.origin.pending.Push(originlink.Item{Kind: originlink.ItemBind, Swallow: true})
		ss.origin.fe.Send(&pgproto3.Bind{})
		ss.origin.pending.Push(originlink.Item{Kind: originlink.ItemExecute, Swallow: true})
		ss.origin.fe.Send(&pgproto3.Execute{})
	}
	// The origin now holds an unnamed statement and portal the client
	// does not have.
	ss.setStale(true, true)
}

// clientParams are the session's parameters as the client has them: a
// tentative SET's ParameterStatus waits for the stretch's end.
func (ss *session) clientParams() map[string]string {
	params := ss.state.Params()
	if t := ss.origin.tent; t != nil {
		maps.Copy(params, t.prior)
	}
	return params
}
