package accelerator

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
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
	stmts map[string]*keptStmt
	order []string // stmts' keys, oldest first
	// seen holds the texts run here once and not kept: a statement is
	// kept when its text comes again, so that texts that never repeat
	// (literals inlined by the simple protocol) do not push out those
	// that do.
	seen map[string]struct{}
}

// keptStmt is a statement a connection keeps prepared, with the data
// epochs of the datasets it reads when it was prepared.
type keptStmt struct {
	st   *duckdb.Stmt
	deps []stmtDep
}

// stmtDep is a dataset a kept statement reads, and its data epoch then.
type stmtDep struct {
	h     *dsHandle
	epoch uint64
}

// current reports whether no dataset the statement reads has moved its
// data epoch since it was prepared.
func (k *keptStmt) current() bool {
	for _, d := range k.deps {
		if d.h.dataEpoch.Load() != d.epoch {
			return false
		}
	}
	return true
}

// catalogChanged moves the catalog epoch: prepared statements are
// dropped before their next use.
func (e *Engine) catalogChanged() { e.epoch.Add(1) }

// dataChanged moves a dataset's data epoch: the statements prepared over
// it are prepared again before their next use.
//
// DuckDB (v1.5.6 through duckdb-go v2.10506.0) returns garbage, or
// crashes, when a prepared statement that has run twice or more runs
// again after another connection committed a DELETE on the table it
// reads (a statement run once before is fine; reproduced alone: prepare
// on connection A, run it twice, DELETE some rows and INSERT on B,
// commit, run it on A). So a dataset whose rows change in place is marked
// inPlace and no statement over it is kept: each query prepares its
// statement, runs it once and closes it. The epoch also drops statements
// kept before a dataset was marked (TestApplier_PreparedQueriesSeeApplies).
func (h *dsHandle) dataChanged() { h.dataEpoch.Add(1) }

// markInPlace marks the dataset as changing in place (see dataChanged),
// dropping the statements kept over it so far.
func (h *dsHandle) markInPlace() {
	if !h.inPlace.Swap(true) {
		h.dataChanged()
	}
}

// depsOf returns the attached datasets whose database query may name,
// with their data epochs now. It errs on the side of more: a database
// named quoted ("ds_orders") or bare (ds_orders, as the planner writes
// it), in any case, or a longer name containing it (a statement prepared
// again for nothing); a dataset missed would keep a statement DuckDB
// crashes on after the apply (TestCDC_RepeatedQueryAfterChanges).
func (e *Engine) depsOf(query string) []stmtDep {
	lower := strings.ToLower(query)
	e.mu.Lock()
	defer e.mu.Unlock()
	var deps []stmtDep
	for name, h := range e.datasets {
		if strings.Contains(lower, strings.ToLower(DatabaseName(name))) {
			deps = append(deps, stmtDep{h: h, epoch: h.dataEpoch.Load()})
		}
	}
	return deps
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

// prepared returns the statement for query prepared on c, preparing it
// when the connection has none (or an outdated one). kept says whether
// the connection keeps it; if not, the caller closes it after use.
func (e *Engine) prepared(qc *queryConn, c *duckdb.Conn, query string) (st *duckdb.Stmt, kept bool, err error) {
	epoch := e.epoch.Load()
	if qc.epoch != epoch {
		qc.dropStmts()
		qc.epoch = epoch
	}
	if k, ok := qc.stmts[query]; ok {
		if k.current() {
			return k.st, true, nil
		}
		k.st.Close()
		delete(qc.stmts, query)
		qc.order = slices.DeleteFunc(qc.order, func(q string) bool { return q == query })
	}
	deps := e.depsOf(query)
	oneShot := false
	for _, d := range deps {
		oneShot = oneShot || d.h.inPlace.Load()
	}
	// Prepare (unlike PrepareContext) refuses several statements instead
	// of running all but the last.
	e.prepares.Add(1)
	ds, err := c.Prepare(query)
	if err != nil {
		return nil, false, err
	}
	st = ds.(*duckdb.Stmt)
	typ, err := st.StatementType()
	if err == nil && typ != duckdb.STATEMENT_TYPE_SELECT {
		err = ErrNotReadOnly
	}
	if err != nil {
		st.Close()
		return nil, false, err
	}
	if oneShot {
		return st, false, nil // never run twice: see dataChanged
	}
	if _, again := qc.seen[query]; !again {
		if qc.seen == nil || len(qc.seen) >= maxConnStmts {
			qc.seen = make(map[string]struct{})
		}
		qc.seen[query] = struct{}{}
		return st, false, nil
	}
	delete(qc.seen, query)
	if qc.stmts == nil {
		qc.stmts = make(map[string]*keptStmt)
	}
	if len(qc.order) >= maxConnStmts {
		oldest := qc.order[0]
		qc.order = qc.order[1:]
		qc.stmts[oldest].st.Close()
		delete(qc.stmts, oldest)
	}
	qc.stmts[query] = &keptStmt{st: st, deps: deps}
	qc.order = append(qc.order, query)
	return st, true, nil
}

// dropStmts closes the connection's prepared statements.
func (qc *queryConn) dropStmts() {
	for _, k := range qc.stmts {
		k.st.Close()
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
