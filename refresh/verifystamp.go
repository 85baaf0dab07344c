package refresh

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/catalog"
)

// TableStampSQL reads the statistics counters of a table ($1, a quoted
// qualified name) that change with every committed row change: rows
// inserted, updated, deleted, and the live rows (which TRUNCATE resets).
// They are what shadow verification compares (runtime.verify): an answer
// of the acceleration is comparable to the origin's while they say what
// they said when the acceleration took the table's rows. Postgres flushes
// a backend's counters within about a second of its commit, so a change
// shows a moment late; the verifier looks again before it calls answers
// different.
const TableStampSQL = `SELECT concat_ws('/', n_tup_ins, n_tup_upd, n_tup_del, n_live_tup) FROM pg_catalog.pg_stat_user_tables WHERE relid = pg_catalog.to_regclass($1)`

// verifyStamp returns the counters of ds's table when shadow verification
// is on and a full load takes every row ("" otherwise, or when they
// cannot be read).
func (r *Runner) verifyStamp(ctx context.Context, ds *catalog.Dataset, mode string) string {
	if !r.cfg.Runtime.Verify.Enabled || mode != catalog.RefreshFull {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, r.cfg.Origin.DSN)
	if err != nil {
		return ""
	}
	defer conn.Close(context.Background())
	res := conn.ExecParams(ctx, TableStampSQL, [][]byte{[]byte(quoteIdent(ds.Schema) + "." + quoteIdent(ds.Table))}, nil, nil, nil).Read()
	if res.Err != nil || len(res.Rows) != 1 || res.Rows[0][0] == nil {
		return ""
	}
	return string(res.Rows[0][0])
}
