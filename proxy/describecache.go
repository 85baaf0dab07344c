package proxy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pgaccel/pgaccel/planner"
)

// describeCache remembers the origin's descriptions of statements keyed by
// text, user, search path and dataset generation (describeKey): the
// RowDescription of simple-protocol statements, and the parameter types
// Postgres infers for extended-protocol ones prepared without them, so
// that a repeated accelerated query does not pay an origin round trip.
//
// While the origin is down, a text it never described may take the
// descriptions of one of the same description shape (planner's
// DescriptionShape: the same statement but for the constants of its
// filters). The index by shape is built then, from the keys in the order
// they were put, and costs nothing while the origin answers.
type describeCache struct {
	mu  sync.Mutex
	gen uint64 // counts the times m was emptied
	m   map[string]pgproto3.BackendMessage

	order    []string                           // m's keys in the order they were put
	byShape  map[string]pgproto3.BackendMessage // shapeKey of order[:shapedTo] -> description
	shapedTo int

	indexing sync.Mutex // one session at a time adds to byShape
}

const describeCacheMax = 8192

func (c *describeCache) get(key string) *pgproto3.RowDescription {
	rd, _ := c.lookup(key).(*pgproto3.RowDescription)
	return rd
}

// params returns the parameter description kept for key (stmtKey 'P').
func (c *describeCache) params(key string) *pgproto3.ParameterDescription {
	pd, _ := c.lookup(key).(*pgproto3.ParameterDescription)
	return pd
}

func (c *describeCache) lookup(key string) pgproto3.BackendMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[key]
}

// put keeps a RowDescription or ParameterDescription, and reports whether
// key is new to the cache.
func (c *describeCache) put(key string, msg pgproto3.BackendMessage) (added bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= describeCacheMax {
		c.reset()
		c.m = make(map[string]pgproto3.BackendMessage)
	}
	_, had := c.m[key]
	c.m[key] = msg
	if !had {
		c.order = append(c.order, key)
	}
	return !had
}

// reset empties the cache; c.mu is held.
func (c *describeCache) reset() {
	c.m, c.order, c.byShape, c.shapedTo = nil, nil, nil, 0
	c.gen++
}

// derived is the description the planner works out for sql
// (planner.Describe), for a read the origin cannot describe now and no
// text of whose description shape it described before; nils when the
// planner does not know the read's form, or got it wrong before
// (checkDerived). It is not kept: once the origin answers, its own
// description is asked for and kept as before.
func (ss *session) derived(sql string) (*pgproto3.ParameterDescription, *pgproto3.RowDescription) {
	if _, wrong := ss.srv.underived.Load(derivedKey(sql)); wrong {
		return nil, nil
	}
	desc, ok := ss.accel.Planner.Describe(ss.srv.baseCtx, sql, ss.planSession())
	if !ok {
		return nil, nil
	}
	ss.log.Debug().Int("columns", len(desc.Fields)).Int("parameters", len(desc.Params)).Msg("described a read without the origin")
	return &pgproto3.ParameterDescription{ParameterOIDs: desc.Params}, derivedRows(desc)
}

func derivedRows(desc planner.Description) *pgproto3.RowDescription {
	rd := &pgproto3.RowDescription{Fields: make([]pgproto3.FieldDescription, len(desc.Fields))}
	for i, f := range desc.Fields {
		rd.Fields[i] = pgproto3.FieldDescription{
			Name: []byte(f.Name), TableOID: f.TableOID, TableAttributeNumber: uint16(f.AttNum),
			DataTypeOID: f.TypeOID, DataTypeSize: f.TypLen, TypeModifier: f.TypMod,
		}
	}
	return rd
}

// derivedKey is what a wrong derivation is remembered by: sql's
// description shape, or its text.
func derivedKey(sql string) string {
	if shape, ok := planner.DescriptionShape(sql); ok {
		return shape
	}
	return sql
}

// maxUnderived bounds Server.underived.
const maxUnderived = 4096

// checkDerived compares what the planner works out for sql with the
// origin's own description of it (rd; pd when the client declared no
// parameter types, else nil): the result is counted
// (pgaccel_derived_descriptions_total: declined when it works none out,
// which such a text would get during an outage), and a difference logged
// and remembered, so that the planner's description of that shape is not
// used during an outage.
//
// It runs once per description the cache did not hold (describeCache.put
// reports it), never per execution.
func (ss *session) checkDerived(sql string, pd *pgproto3.ParameterDescription, rd *pgproto3.RowDescription) {
	desc, ok := ss.accel.Planner.Describe(ss.srv.baseCtx, sql, ss.planSession())
	if !ok {
		ss.srv.metrics.derivedDescription("declined")
		return
	}
	same := len(rd.Fields) == len(desc.Fields)
	for i := 0; same && i < len(rd.Fields); i++ {
		o, d := rd.Fields[i], desc.Fields[i]
		same = string(o.Name) == d.Name && o.TableOID == d.TableOID && o.TableAttributeNumber == uint16(d.AttNum) &&
			o.DataTypeOID == d.TypeOID && o.DataTypeSize == d.TypLen && o.TypeModifier == d.TypMod
	}
	if same && pd != nil {
		same = slices.Equal(pd.ParameterOIDs, desc.Params)
	}
	if same {
		ss.srv.metrics.derivedDescription("matched")
		return
	}
	ss.srv.metrics.derivedDescription("differed")
	ss.log.Warn().Str("origin", describeFields(rd.Fields)).Str("derived", describeFields(derivedRows(desc).Fields)).
		Msg("pgaccel's own description of a read differs from the origin's: it will not be used for reads of this shape during an outage (please report this)")
	if ss.srv.underivedCount.Add(1) <= maxUnderived {
		ss.srv.underived.Store(derivedKey(sql), struct{}{})
	}
}

// describeFields prints a row description's fields for the log (names,
// types, typmods: no values).
func describeFields(fs []pgproto3.FieldDescription) string {
	var b strings.Builder
	for i, f := range fs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d/%d/%d/%d/%d", f.Name, f.TableOID, f.TableAttributeNumber, f.DataTypeOID, f.DataTypeSize, f.TypeModifier)
	}
	return b.String()
}

// shapeKey is key (a describeKey, or a stmtKey of one) with its text
// replaced by the text's description shape; false when the text has none.
func shapeKey(key string) (string, bool) {
	sql, rest, ok := strings.Cut(key, "\x00")
	if !ok || strings.HasPrefix(sql, "\x01") { // a point lookup's shape key
		return "", false
	}
	shape, ok := planner.DescriptionShape(sql)
	if !ok {
		return "", false
	}
	return shape + "\x00" + rest, true
}

// shapedRows is shaped's RowDescription for a simple Query's key: one kept
// for a Query, or else for a statement without parameters (an
// extended-protocol twin: its Describe's RowDescription is the Query's,
// every column in text).
func (c *describeCache) shapedRows(key string) *pgproto3.RowDescription {
	if rd, ok := c.shaped(key).(*pgproto3.RowDescription); ok {
		return rd
	}
	rd, _ := c.shaped(stmtKey('R', key, nil)).(*pgproto3.RowDescription)
	if rd == nil {
		return nil
	}
	for _, f := range rd.Fields {
		if f.Format != 0 {
			return nil // not a statement's description
		}
	}
	return rd
}

// shaped returns the description kept for a text of key's description
// shape (see describeCache), or nil. It parses every text put since the
// last call, once: call it only when the origin cannot describe.
func (c *describeCache) shaped(key string) pgproto3.BackendMessage {
	want, ok := shapeKey(key)
	if !ok {
		return nil
	}
	c.indexing.Lock()
	defer c.indexing.Unlock()
	c.mu.Lock()
	gen, from, todo := c.gen, c.shapedTo, c.order[c.shapedTo:len(c.order):len(c.order)]
	c.mu.Unlock()
	shapes := make([]string, len(todo)) // parsed without the lock
	for i, k := range todo {
		shapes[i], _ = shapeKey(k)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen && c.shapedTo == from {
		if c.byShape == nil {
			c.byShape = make(map[string]pgproto3.BackendMessage)
		}
		for i, k := range todo {
			if msg, ok := c.m[k]; ok && shapes[i] != "" {
				c.byShape[shapes[i]] = msg
			}
		}
		c.shapedTo = from + len(todo)
	}
	return c.byShape[want]
}

// stmtKey keys the descriptions of an extended-protocol statement: its
// describeKey and the parameter types it was prepared with (0: left to
// Postgres); the kind byte tells ParameterDescription ('P') from the
// statement's RowDescription ('R').
func stmtKey(kind byte, key string, given []uint32) string {
	b := []byte(key)
	b = append(b, 0, kind)
	for _, o := range given {
		b = append(b, ',')
		b = strconv.AppendUint(b, uint64(o), 10)
	}
	return string(b)
}

// invalidate drops every entry: some session ran DDL.
func (c *describeCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reset()
}

// describeKey keys the describe cache by statement text and everything
// that changes how the origin resolves it.
func (ss *session) describeKey(sql string, d planner.Decision) string {
	var gen uint64
	if ss.accel.Generation != nil {
		gen = ss.accel.Generation(d.Datasets)
	}
	return sql + "\x00" + ss.acc.info.User + "\x00" + strings.Join(ss.acc.info.SearchPath, ",") + "\x00" + strconv.FormatUint(gen, 10)
}

// describeFlight is, for a session with no origin connection that needs
// the origin's description kept under key, the description another
// session is asking the origin for at the same time (waited for, at most
// flightMax); leader is true when no other session is asking, and
// this one finishes the flight once it has asked (keyFlights.finish). A
// burst of new sessions reading the same new text so opens one origin
// connection, not one each.
func (ss *session) describeFlight(key string) (rd *pgproto3.RowDescription, leader bool) {
	if ss.origin.state != linkNone {
		return nil, false
	}
	wait, first := ss.srv.describing.join(key)
	if first {
		return nil, true
	}
	await(wait, ss.closedCh())
	return ss.srv.describes.get(key), false
}

// publish keeps st's descriptions in the describe cache by text, once per
// statement (not per execution), for the next statement of that text: its
// rows, and its parameters, so that a session can prepare the same text
// without the origin (deferParse).
func (ss *session) publish(st *stmtInfo, d planner.Decision) {
	if st.published || st.derived {
		return
	}
	pd, rd := ss.stmtDesc(st)
	if rd == nil {
		return
	}
	key := ss.describeKey(st.sql, d)
	rkey := stmtKey('R', key, st.paramOIDs)
	defer ss.srv.describing.finish(rkey)
	if ss.srv.describes.put(rkey, rd) {
		inferred := pd
		if len(st.paramOIDs) > 0 {
			inferred = nil // the client's parameter types, not Postgres's inference
		}
		ss.checkDerived(st.sql, inferred, rd)
	}
	if pd != nil {
		ss.srv.describes.put(stmtKey('P', key, st.paramOIDs), pd)
	}
	st.published = true
}

// describeCapturer keeps the first RowDescription of a Query's answer in
// the describe cache under key (it runs on the origin relay).
func describeCapturer(c *describeCache, key string) func(pgproto3.BackendMessage) {
	done := false
	return func(msg pgproto3.BackendMessage) {
		if done {
			return
		}
		switch m := msg.(type) {
		case *pgproto3.RowDescription:
			done = true
			c.put(key, copyBackendMessage(m))
		case *pgproto3.ErrorResponse, *pgproto3.CommandComplete, *pgproto3.EmptyQueryResponse:
			done = true
		}
	}
}

// describeCapture returns a function that keeps the descriptions the origin
// sends for a client's Describe, for later local execution.
func (ss *session) describeCapture(m *pgproto3.Describe) func(pgproto3.BackendMessage) {
	ss.ext.segmentOpen = true
	if m.ObjectType == 'S' {
		st := ss.ext.stmts[m.Name]
		if st == nil || st.originOnly() {
			return nil
		}
		return func(msg pgproto3.BackendMessage) {
			switch r := msg.(type) {
			case *pgproto3.ParameterDescription:
				ss.setStmtDesc(st, copyBackendMessage(r).(*pgproto3.ParameterDescription), nil)
			case *pgproto3.RowDescription:
				ss.setStmtDesc(st, nil, copyBackendMessage(r).(*pgproto3.RowDescription))
			case *pgproto3.NoData:
				ss.ext.descMu.Lock()
				st.noData = true
				ss.ext.descMu.Unlock()
			}
		}
	}
	p := ss.ext.portals[m.Name]
	if p == nil || p.stmt.originOnly() {
		return nil
	}
	p.describeSent = true
	return func(msg pgproto3.BackendMessage) {
		if r, ok := msg.(*pgproto3.RowDescription); ok {
			rd := copyBackendMessage(r).(*pgproto3.RowDescription)
			ss.ext.descMu.Lock()
			p.rows = rd
			if p.stmt.rows == nil {
				// The statement's is the portal's in text format.
				p.stmt.rows = inFormats(rd, nil)
			}
			ss.ext.descMu.Unlock()
		}
	}
}
