package proxy

import (
	"bytes"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/proxy/originlink"

	"github.com/pgaccel/pgaccel/pgdef"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/proxy/resultcache"
	"github.com/pgaccel/pgaccel/stmtstats"
)

// The session's side of refresh_mode: caching (caching.go): reads the
// planner marks Decision.Caching are answered from the results cache, or
// by the origin on the session's own connection under names of the
// proxy's own, and the answer is kept.

// requestCaching labels the origin requests of caching datasets in
// pgaccel_proxy_requests_total.
const requestCaching = "caching"

// cachingName names the statement and portal of a caching request in the
// extended protocol.
const cachingName = "_pgaccel_caching"

// cachingCache is the results cache for the session's reads of caching
// datasets, nil when there is none or the session turned it off
// (pgaccel.cache = off: its reads go to the origin as they are).
func (ss *session) cachingCache() *resultcache.Cache {
	if ss.accel == nil || ss.accel.ResultsCache == nil || !ss.accel.ResultsCache.Caching() || ss.acc.info.CacheOff {
		return nil
	}
	return ss.accel.ResultsCache
}

// cachingRequest is how the origin is asked for a caching answer: the
// client's text (proto 'Q'), or its statement with the portal's
// parameters and formats ('E').
type cachingRequest struct {
	proto                       byte
	sql                         string
	oids                        []uint32
	params                      [][]byte
	paramFormats, resultFormats []int16
}

// msgs are the request's messages; sync ends an extended-protocol request
// with a Sync of its own (a revalidation, outside any client stretch),
// else with a Flush (inside the client's).
func (q *cachingRequest) msgs(sync bool) []privateMsg {
	if q.proto == 'Q' {
		return []privateMsg{{msg: &pgproto3.Query{String: q.sql}, kind: originlink.ItemQuery, hasKind: true}}
	}
	msgs := portalMsgs(cachingName, q.sql, q.oids, q.params, q.paramFormats, q.resultFormats)
	if sync {
		return append(msgs, privateMsg{msg: &pgproto3.Sync{}, kind: originlink.ItemSync, hasKind: true})
	}
	return append(msgs, privateMsg{msg: &pgproto3.Flush{}})
}

// originAnswer is the origin's answer to a caching request.
type originAnswer struct {
	body []byte // the RowDescription (simple protocol) and DataRows, encoded
	tail pgproto3.BackendMessage
	rows int64 // from a SELECT n tag; -1 for any other
	err  *pgproto3.ErrorResponse
}

// keepable: an answer that may be kept, a SELECT's rows and nothing else.
func (a *originAnswer) keepable() bool { return a.err == nil && a.rows >= 0 }

// askOrigin runs q at the origin on the session's connection.
func (ss *session) askOrigin(q *cachingRequest, sync bool) (originAnswer, error) {
	msgs, err := ss.privateRequest(requestCaching, q.msgs(sync)...)
	if err != nil {
		return originAnswer{}, err
	}
	a := originAnswer{rows: -1}
	for _, msg := range msgs {
		switch m := msg.(type) {
		case *pgproto3.RowDescription:
			if q.proto != 'Q' {
				continue
			}
		case *pgproto3.DataRow:
		case *pgproto3.CommandComplete:
			a.tail = m
			if n, ok := bytes.CutPrefix(m.CommandTag, []byte("SELECT ")); ok {
				if v, err := strconv.ParseInt(string(n), 10, 64); err == nil {
					a.rows = v
				}
			}
			continue
		case *pgproto3.EmptyQueryResponse:
			a.tail = m
			continue
		case *pgproto3.ErrorResponse:
			if a.err == nil {
				a.err = m
			}
			continue
		default:
			continue
		}
		if a.body, err = msg.Encode(a.body); err != nil {
			return originAnswer{}, err
		}
	}
	return a, nil
}

// originUnavailable reports whether e says the origin cannot answer now
// (a connection that failed or was lost, a server shutting down or
// starting), so that an expired answer may serve instead.
func originUnavailable(e *pgproto3.ErrorResponse) bool {
	return pgdef.IsConnection(e.Code) || pgdef.IsShutdown(e.Code) || e.Code == pgdef.TooManyConnections
}

// revalidation is a stale caching answer to ask the origin for again once
// the session is idle there (maybeRevalidate).
type revalidation struct {
	key      string
	q        cachingRequest
	datasets []string
}

// answerCaching answers a read of caching datasets under key: from the
// cache while fresh or stale (then revalidated once idle), else from the
// origin, whose answer is relayed and kept; an answer past both serves
// while the origin cannot answer. ready: a simple Query, answered with
// ReadyForQuery; hit records what an answer from the cache changes. It
// reports false when the statement goes to the origin as it is.
func (ss *session) answerCaching(rc *resultcache.Cache, key string, q *cachingRequest, d planner.Decision, start time.Time, ready bool, hit func()) bool {
	h := rc.LookupCaching(key, time.Now())
	var f *resultcache.Flight
	if h.State == resultcache.CachingMiss || h.State == resultcache.CachingExpired {
		var leader bool
		if f, leader = rc.Join(key); !leader {
			// Another session asks the origin for it: its answer serves.
			timer := time.NewTimer(resultcache.CachingWaitFor)
			landed := false
			select {
			case <-f.Done:
				landed = true
			case <-timer.C:
			case <-ss.closedCh():
			}
			timer.Stop()
			if landed && f.OK {
				h = resultcache.CachingHit{State: resultcache.CachingFresh, Body: f.Body, Rows: f.Rows}
			}
			f = nil
		} else {
			defer rc.Land(key, f)
		}
	}
	switch h.State {
	case resultcache.CachingFresh, resultcache.CachingStale:
		rc.CountCaching(d.Datasets, true)
		route := routeCachingFresh
		if h.State == resultcache.CachingStale {
			rc.StaleServed("revalidate")
			route = routeCachingStale
		}
		if h.Revalidate {
			ss.acc.revalidation = &revalidation{key: key, q: *q, datasets: d.Datasets}
		}
		ss.serveKept(h.Body, h.Rows, d, start, ready, hit, route)
		return true
	}
	rc.CountCaching(d.Datasets, false)
	if h.ErrorOK && ss.origin.pending.Idle() && ss.originDown() {
		ss.serveOutage(rc, h, d, start, ready, hit)
		return true
	}
	if !ss.drain() {
		return false // the origin skips the client's statement
	}
	gens, fetched := rc.Generations(d.Datasets), time.Now()
	a, err := ss.askOrigin(q, false)
	rc.OriginRequest("miss")
	if err != nil {
		if h.ErrorOK && !ss.isClosed() {
			ss.serveOutage(rc, h, d, start, ready, hit)
			return true
		}
		ss.close()
		return true
	}
	if a.err != nil && originUnavailable(a.err) && h.ErrorOK {
		ss.serveOutage(rc, h, d, start, ready, hit)
		return true
	}
	route := routeCachingNotKept
	if a.keepable() && ss.state.TxStatus() == 'I' {
		rc.KeepCaching(key, d.Datasets, gens, a.body, a.rows, fetched)
		route = routeCachingMiss
		if f != nil {
			f.OK, f.Body, f.Rows = true, a.body, a.rows
		}
	}
	ss.client.outBuf = append(ss.client.outBuf[:0], a.body...)
	var tail []pgproto3.BackendMessage
	switch {
	case a.err != nil:
		tail = append(tail, a.err)
		if !ready {
			ss.ext.localSkip = true // the origin skips to the client's Sync
		}
	case a.tail != nil:
		tail = append(tail, a.tail)
		if hit != nil {
			hit()
		}
	}
	if ready {
		tail = append(tail, &pgproto3.ReadyForQuery{TxStatus: ss.state.TxStatus()})
	}
	ss.srv.metrics.count(ss.stripe, routeOrigin, d.Datasets, "caching_miss")
	ss.timeLocal(routeOrigin, stmtstats.Origin, start, a.rows, d.Datasets)
	ss.acc.lastRoute = routeNote{route: route, detail: d.Detail}
	ss.statWhy(routeOrigin, "caching_miss", d.Detail, d.Datasets)
	if err := ss.finish(tail...); err != nil {
		ss.close()
	}
	return true
}

// serveOutage serves an expired caching answer because the origin cannot
// answer (caching_stale_if_error).
func (ss *session) serveOutage(rc *resultcache.Cache, h resultcache.CachingHit, d planner.Decision, start time.Time, ready bool, hit func()) {
	rc.StaleServed("origin_unavailable")
	ss.serveKept(h.Body, h.Rows, d, start, ready, hit, routeCachingOutage)
}

// maybeRevalidate asks the origin again for the stale answer the session
// served, once the client's stretch has ended and nothing of the session
// is pending at the origin or inside a transaction there: the client has
// its answer, and the session's next statement is read after this one
// request.
func (ss *session) maybeRevalidate(msg pgproto3.FrontendMessage) {
	rv := ss.acc.revalidation
	switch msg.(type) {
	case *pgproto3.Sync, *pgproto3.Query:
	default:
		return
	}
	if rv == nil || ss.evl.onLoop || ss.isClosed() {
		return
	}
	ss.acc.revalidation = nil
	rc := ss.accel.ResultsCache
	if ss.ext.segmentOpen || !ss.drain() || ss.ext.stretchOrigin || ss.state.TxStatus() != 'I' {
		rc.Revalidated(rv.key)
		return
	}
	gens, fetched := rc.Generations(rv.datasets), time.Now()
	a, err := ss.askOrigin(&rv.q, true)
	rc.OriginRequest("revalidate")
	if err != nil || !a.keepable() || ss.state.TxStatus() != 'I' {
		rc.Revalidated(rv.key)
		return
	}
	rc.KeepCaching(rv.key, rv.datasets, gens, a.body, a.rows, fetched)
}

// cachingKey keys a caching answer: an accelerated answer's key
// (resultKey) and the locale settings the origin formats with.
func (ss *session) cachingKey(proto byte, sql string, d planner.Decision, parts ...[]byte) string {
	return ss.resultKey(proto, sql, d, append(parts, []byte("locale:"+ss.acc.info.Locale))...)
}

// queryCaching answers a simple Query of caching datasets.
func (ss *session) queryCaching(m *pgproto3.Query, d planner.Decision, start time.Time) bool {
	rc := ss.cachingCache()
	if rc == nil {
		return false
	}
	q := &cachingRequest{proto: 'Q', sql: m.String}
	return ss.answerCaching(rc, ss.cachingKey('Q', m.String, d), q, d, start, true, nil)
}

// executeCaching answers an Execute of portal p, whose statement reads
// caching datasets, with rows as its row description.
func (ss *session) executeCaching(p *portalInfo, m *pgproto3.Execute, oids []uint32, rows *pgproto3.RowDescription, d planner.Decision, start time.Time) bool {
	rc := ss.cachingCache()
	if rc == nil || m.MaxRows > 0 {
		return false // a part of the answer: the origin's portal runs
	}
	key := ss.cachingKey('E', p.stmt.sql, d, executeKeyParts(p, oids, rows)...)
	oids = oids[:len(p.params)]
	q := &cachingRequest{proto: 'E', sql: p.stmt.sql, oids: oids, params: p.params, paramFormats: p.paramFormats, resultFormats: p.resultFormats}
	return ss.answerCaching(rc, key, q, d, start, false, func() {
		ss.change(func() { p.exhausted = true }, func(bool) { p.exhausted = false })
	})
}

// noteCachingWrite records the caching datasets a statement sent to the
// origin may change; they are dropped when its transaction ends
// (commitCaching).
func (ss *session) noteCachingWrite(sql string, d planner.Decision) {
	rc := ss.accel.ResultsCache
	if rc == nil || !rc.Caching() {
		return // no caching dataset (most configurations)
	}
	anything := false
	switch d.Kind {
	case planner.KindMulti, planner.KindOther, planner.KindDo, planner.KindCall, planner.KindExecute:
		anything = true
	default:
		if !d.Writes() && d.Kind != planner.KindDDL {
			// A read (most statements): decided from d alone, without
			// loading the results cache.
			return
		}
	}
	var mentions func(string) bool
	if !anything {
		mentions = func(table string) bool { return planner.MentionsName(sql, table) }
	}
	ss.acc.cachingDirty.add(rc.WritesCaching(mentions))
}

// commitCaching drops the answers of the caching datasets the session's
// ended transaction may have written (the origin relay calls it at the
// ReadyForQuery that ends it, before the client sees it).
func (ss *session) commitCaching() {
	if ss.accel == nil || ss.accel.ResultsCache == nil {
		return
	}
	for _, name := range ss.acc.cachingDirty.take() {
		ss.accel.ResultsCache.Bump(name)
	}
}

// datasetSet collects the datasets the session's transaction may have
// written, under its own lock (the client loop adds, the origin relay
// takes when the transaction ends): the caching datasets whose answers
// are dropped then (commitCaching), and the datasets read-your-writes
// fences (commitWrites).
type datasetSet struct {
	mu  sync.Mutex
	set map[string]struct{}
}

func (d *datasetSet) add(names []string) {
	if len(names) == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.set == nil {
		d.set = map[string]struct{}{}
	}
	for _, n := range names {
		d.set[n] = struct{}{}
	}
}

func (d *datasetSet) take() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.set) == 0 {
		return nil
	}
	out := make([]string, 0, len(d.set))
	for n := range d.set {
		out = append(out, n)
	}
	d.set = nil
	return out
}
