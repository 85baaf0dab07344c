package proxy

import (
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/proxy/resultcache"
	"github.com/pgaccel/pgaccel/stmtstats"
)

// NewResultCache returns the results cache (runtime.results_cache) of
// maxBytes, of answers up to maxEntry bytes and at most what a session
// buffers of a local answer (localBufferLimit); see resultcache.New.
func NewResultCache(maxBytes, maxEntry int64, dataGen func(string) uint64, reg prometheus.Registerer) *resultcache.Cache {
	return resultcache.New(maxBytes, min(maxEntry, localBufferLimit), dataGen, reg)
}

// routeCacheHit is SHOW pgaccel.last_route after an answer from the
// results cache.
const routeCacheHit = "accelerated (cache hit)"

// routeCachingFresh and the others are SHOW pgaccel.last_route after a
// read of a refresh_mode: caching dataset (caching.go).
const (
	routeCachingFresh   = "cached (caching: fresh)"
	routeCachingStale   = "cached (caching: stale, revalidating)"
	routeCachingOutage  = "cached (caching: stale, the origin cannot answer)"
	routeCachingMiss    = "origin (caching: miss, kept)"
	routeCachingNotKept = "origin (caching: miss, not kept)"
)

// cacheable: the accelerated answer of d may be kept. Not the proxy's
// answers about itself, EXPLAIN (ANALYZE times the run: explainLocal made
// d), nor a statement whose empty answer goes to the origin
// (on_zero_results: use_source).
func cacheable(d planner.Decision) bool {
	// A statement reading the clock (now(), CURRENT_DATE) answers for
	// its time only.
	return !internal(&d) && d.Kind != planner.KindExplain && d.FallbackSQL == "" && len(d.Datasets) > 0 && len(d.Clocks) == 0
}

// fromCache sends the answer rc keeps under key for d, if any, as the
// statement's: its messages, its completion and, with ready (a simple
// Query), ReadyForQuery, after hit (nil: none) has recorded what the
// answer changes; it counts the statement as accelerated from start. On a
// miss it returns the datasets' data generations, which the
// answer DuckDB gives is kept at (resultcache.Cache.keep).
func (ss *session) fromCache(rc *resultcache.Cache, key string, d planner.Decision, start time.Time, ready bool, hit func()) (bool, []uint64) {
	body, n, ok := rc.Get(key)
	if !ok {
		return false, rc.Generations(d.Datasets)
	}
	ss.serveKept(body, n, d, start, ready, hit, routeCacheHit)
	return true, nil
}

// serveKept sends an answer the results cache kept (body, of n rows) as
// d's, noting route as SHOW pgaccel.last_route (see fromCache).
func (ss *session) serveKept(body []byte, n int64, d planner.Decision, start time.Time, ready bool, hit func(), route string) {
	if hit != nil {
		hit()
	}
	ss.client.outBuf = append(ss.client.outBuf[:0], body...)
	ss.srv.metrics.count(ss.stripe, routeAccelerated, d.Datasets, "")
	ss.timeLocal(routeAccelerated, stmtstats.CacheHit, start, n, d.Datasets)
	ss.acc.lastRoute = routeNote{route: route}
	if d.Caching {
		ss.acc.lastRoute.detail = d.Detail // a caching read joined with accelerated datasets
	}
	tail := []pgproto3.BackendMessage{selectTag(n)}
	if ready {
		tail = append(tail, &pgproto3.ReadyForQuery{TxStatus: ss.state.TxStatus()})
	}
	if err := ss.finish(tail...); err != nil {
		ss.close()
	}
}

// cacheSettingOff reads pgaccel.cache: off (or false, 0, no) turns the
// results cache off for the session; anything else leaves it on.
func cacheSettingOff(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "off", "false", "0", "no":
		return true
	}
	return false
}

// resultCache is the session's results cache, nil when there is none or
// the session turned it off.
func (ss *session) resultCache() *resultcache.Cache {
	if ss.accel == nil || ss.accel.ResultsCache == nil || ss.acc.info.CacheOff || !ss.accel.ResultsCache.Accelerated() {
		return nil
	}
	return ss.accel.ResultsCache
}

// resultKey keys an accelerated answer: the protocol (its messages
// differ), the role, the search path, the client's text and the
// statement DuckDB runs, the settings the answer is computed and encoded
// under, and then (extended protocol) the parameters, their formats and
// types, and the result formats. Parts are length-prefixed.
func (ss *session) resultKey(proto byte, sql string, d planner.Decision, parts ...[]byte) string {
	var b strings.Builder
	add := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	b.WriteByte(proto)
	add(ss.acc.info.User)
	add(strings.Join(ss.acc.info.SearchPath, ","))
	add(sql)
	add(d.SQL)
	for _, p := range []string{"TimeZone", "DateStyle", "IntervalStyle", "client_encoding", "standard_conforming_strings", "integer_datetimes"} {
		add(ss.state.Param(p))
	}
	add(ss.acc.info.ExtraFloatDigits)
	add(ss.acc.info.ByteaOutput)
	for _, p := range parts {
		if p == nil {
			b.WriteString("N")
			continue
		}
		add(string(p))
	}
	return b.String()
}

// executeKeyParts are resultKey's parts of an Execute of portal p, whose
// parameters are of types oids and rows of description rows: the
// parameters' formats and types, the result formats and column types, then
// the parameters.
func executeKeyParts(p *portalInfo, oids []uint32, rows *pgproto3.RowDescription) [][]byte {
	cols := make([]uint32, len(rows.Fields))
	for i, f := range rows.Fields {
		cols[i] = f.DataTypeOID
	}
	return append([][]byte{formatsKey(p.paramFormats), oidsKey(oids[:len(p.params)]), formatsKey(p.resultFormats), oidsKey(cols)}, p.params...)
}

// formatsKey and oidsKey are a Bind's format codes and a statement's
// parameter types as key parts.
func formatsKey(f []int16) []byte {
	b := make([]byte, 0, 2*len(f)+1)
	b = append(b, 'f')
	for _, v := range f {
		b = append(b, byte(v>>8), byte(v))
	}
	return b
}

func oidsKey(o []uint32) []byte {
	b := make([]byte, 0, 4*len(o)+1)
	b = append(b, 'o')
	for _, v := range o {
		b = append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return b
}
