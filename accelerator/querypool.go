package accelerator

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/duckdb/duckdb-go/v2"
)

// Queries run on connections the engine keeps itself (queryConn), each
// with what it has set up: its TimeZone and the statements it prepared.
// Preparing was a sixth of an accelerated point read's CPU (parse, bind,
// plan of the same text every time); a statement prepared once on a
// connection runs again with new parameters.
//
// A prepared statement stays right while the tables it reads stay: the
// engine's catalog epoch moves whenever a dataset's table is swapped or
// attached, and a connection drops its statements when it sees a new
// epoch (DuckDB also rebinds a prepared statement whose catalog changed;
// the epoch does not rely on it). Statements prepared under another
// TimeZone are dropped too: DuckDB may fold zone-dependent constants when
// it plans. A connection whose query failed is closed, not reused.

// Limits of the connection pool of queries.
const (
	// maxIdleConns bounds the connections kept between queries (an idle
	// one costs DuckDB little): as many as sessions commonly query at
	// once. More run at once when asked; the extra ones are closed after.
	maxIdleConns = 64
	// maxConnStmts bounds the statements one connection keeps prepared;
	// the oldest goes first.
	maxConnStmts = 128
)

// queryConn is a connection of the engine's query pool, used by one query
// at a time.
type queryConn struct {
	conn  *sql.Conn
	tz    string
	epoch uint64
	stmts map[string]*duckdb.Stmt
	order []string // stmts' keys, oldest first
	// seen holds the texts run here once and not kept: a statement is
	// kept when its text comes again, so that texts that never repeat
	// (literals inlined by the simple protocol) do not push out those
	// that do.
	seen map[string]struct{}
}

// catalogChanged moves the catalog epoch: prepared statements are
// dropped before their next use.
func (e *Engine) catalogChanged() { e.epoch.Add(1) }

// Statements over datasets whose rows change in place are never kept.
// DuckDB (v1.5.6 through duckdb-go v2.10506.0) returns garbage, or
// crashes, when a prepared statement that has run twice or more runs
// again after another connection committed a DELETE on the table it
// reads (a statement run once before is fine; reproduced alone: prepare
// on connection A, run it twice, DELETE some rows and INSERT on B,
// commit, run it on A). A change stream's applies, append merges and
// retention deletes change rows in place, so such a dataset is marked
// (at attach from its config, and by markInPlace when it happens) and a
// text that names it is prepared, run once and closed every time
// (TestQuery_NoStatementKeptOverRowsChangedInPlace,
// TestApplier_PreparedQueriesSeeApplies, TestCDC_RepeatedQueryAfterChanges).

// markInPlace marks the dataset as changing in place: its name joins the
// in-place names, and the catalog epoch moves so that the statements
// kept over it so far are dropped. The name is published before the
// epoch moves, and prepared reads the epoch before the names: a statement
// kept on the old names is always dropped at its next use.
func (e *Engine) markInPlace(h *dsHandle) {
	if h.inPlace.Load() {
		return
	}
	e.mu.Lock()
	h.inPlace.Store(true)
	e.publishInPlaceLocked()
	e.mu.Unlock()
	e.catalogChanged()
}

// publishInPlaceLocked rebuilds the lower-cased database names of the
// in-place datasets, read without a lock by readsInPlace. e.mu is held.
func (e *Engine) publishInPlaceLocked() {
	var names []string
	for name, h := range e.datasets {
		if h.inPlace.Load() {
			names = append(names, strings.ToLower(DatabaseName(name)))
		}
	}
	e.inPlaceDBs.Store(&names)
}

// readsInPlace reports whether query may read a dataset whose rows change
// in place. It errs on the side of yes: a database named quoted
// ("ds_orders") or bare (ds_orders, as the planner writes it), in any
// case, or a longer name containing it.
func (e *Engine) readsInPlace(query string) bool {
	names := e.inPlaceDBs.Load()
	if names == nil || len(*names) == 0 {
		return false
	}
	lower := strings.ToLower(query)
	for _, n := range *names {
		if strings.Contains(lower, n) {
			return true
		}
	}
	return false
}

// setTimeZone sets DuckDB's TimeZone on the connection when it differs
// from the zone last set there (dropping what was prepared under another).
func (qc *queryConn) setTimeZone(ctx context.Context, c *duckdb.Conn, timeZone string) error {
	if timeZone == "" || timeZone == qc.tz {
		return nil
	}
	qc.tz = ""
	qc.dropStmts()
	if _, err := c.ExecContext(ctx, "SET TimeZone = "+quoteLiteral(timeZone), nil); err != nil {
		return fmt.Errorf("set DuckDB TimeZone to %q: %w", timeZone, err)
	}
	qc.tz = timeZone
	return nil
}

// getConn takes an idle query connection, or opens one.
func (e *Engine) getConn(ctx context.Context) (*queryConn, error) {
	e.qmu.Lock()
	if n := len(e.idle); n > 0 {
		qc := e.idle[n-1]
		e.idle[n-1] = nil
		e.idle = e.idle[:n-1]
		e.qmu.Unlock()
		return qc, nil
	}
	e.qmu.Unlock()
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &queryConn{conn: conn}, nil
}

// putConn gives back a query connection: kept for the next query when it
// is sound and the pool has room, else closed.
func (e *Engine) putConn(qc *queryConn, sound bool) error {
	if sound {
		e.qmu.Lock()
		if !e.qclosed && len(e.idle) < maxIdleConns {
			e.idle = append(e.idle, qc)
			e.qmu.Unlock()
			return nil
		}
		e.qmu.Unlock()
	}
	return qc.close()
}

// closeIdle closes the pool's idle connections; later ones are closed as
// their queries end.
func (e *Engine) closeIdle() {
	e.qmu.Lock()
	idle := e.idle
	e.idle, e.qclosed = nil, true
	e.qmu.Unlock()
	for _, qc := range idle {
		_ = qc.close()
	}
}

// prepareSelect prepares query on c, which must be one SELECT: Prepare
// (unlike PrepareContext) refuses several statements instead of running
// all but the last.
func prepareSelect(c *duckdb.Conn, query string) (*duckdb.Stmt, error) {
	ds, err := c.Prepare(query)
	if err != nil {
		return nil, err
	}
	st := ds.(*duckdb.Stmt)
	typ, err := st.StatementType()
	if err == nil && typ != duckdb.STATEMENT_TYPE_SELECT {
		err = ErrNotReadOnly
	}
	if err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// prepared returns the statement for query prepared on c, preparing it
// when the connection has none (or an outdated one). kept says whether
// the connection keeps it; if not, the caller closes it after use.
func (e *Engine) prepared(qc *queryConn, c *duckdb.Conn, query string) (st *duckdb.Stmt, kept bool, err error) {
	epoch := e.epoch.Load()
	if qc.epoch != epoch {
		qc.dropStmts()
		qc.epoch = epoch
	}
	if st, ok := qc.stmts[query]; ok {
		return st, true, nil
	}
	e.prepares.Add(1)
	if st, err = prepareSelect(c, query); err != nil {
		return nil, false, err
	}
	if _, again := qc.seen[query]; !again {
		if qc.seen == nil || len(qc.seen) >= maxConnStmts {
			qc.seen = make(map[string]struct{})
		}
		qc.seen[query] = struct{}{}
		return st, false, nil
	}
	delete(qc.seen, query)
	if e.readsInPlace(query) {
		return st, false, nil // never run twice: see markInPlace
	}
	if qc.stmts == nil {
		qc.stmts = make(map[string]*duckdb.Stmt)
	}
	if len(qc.order) >= maxConnStmts {
		oldest := qc.order[0]
		qc.order = qc.order[1:]
		qc.stmts[oldest].Close()
		delete(qc.stmts, oldest)
	}
	qc.stmts[query] = st
	qc.order = append(qc.order, query)
	return st, true, nil
}

// dropStmts closes the connection's prepared statements.
func (qc *queryConn) dropStmts() {
	for _, st := range qc.stmts {
		st.Close()
	}
	clear(qc.stmts)
	clear(qc.seen)
	qc.order = qc.order[:0]
}

func (qc *queryConn) close() error {
	qc.dropStmts()
	return qc.conn.Close()
}

// idleConns is how many query connections the pool keeps (tests).
func (e *Engine) idleConns() int {
	e.qmu.Lock()
	defer e.qmu.Unlock()
	return len(e.idle)
}
