package integration

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestFidelity_TooManyParameters: Postgres accepts the Parse of a statement
// with 65,536 parameters and describes it (its ParameterDescription's
// count wraps to 0; pgproto3 refuses to encode it); through the proxy the
// description reaches the client as the origin sent it and the session
// goes on (pgconn's TestConnExecPreparedTooManyParams).
func TestFidelity_TooManyParameters(t *testing.T) {
	mustExec(t, "CREATE TABLE IF NOT EXISTS fid_accel (id int PRIMARY KEY)")
	a := startApp(t, "  - from: postgres:public.fid_accel\n")
	p := startProxy(t, nil)
	n := math.MaxUint16 + 1
	params := make([]string, n)
	for i := range params {
		params[i] = "($" + strconv.Itoa(i+1) + "::text)"
	}
	sql := "values" + strings.Join(params, ", ")
	for name, dsn := range map[string]string{
		"direct":       origin.DSN(appUser, appPass),
		"pass-through": p.DSN(appUser, appPass),
		"accelerated":  appDSN(a, appUser, appPass),
	} {
		t.Run(name, func(t *testing.T) {
			ctx := ctxT(t)
			c := connect(t, dsn).PgConn()
			psd, err := c.Prepare(ctx, "ps1", sql, nil)
			if err != nil {
				t.Fatalf("prepare: %v", err)
			}
			if len(psd.ParamOIDs) != n || len(psd.Fields) != 1 {
				t.Fatalf("described %d parameters and %d fields, want %d and 1", len(psd.ParamOIDs), len(psd.Fields), n)
			}
			r := c.ExecParams(ctx, "SELECT $1::int + 1", [][]byte{[]byte("41")}, nil, nil, nil).Read()
			if r.Err != nil || len(r.Rows) != 1 || string(r.Rows[0][0]) != "42" {
				t.Fatalf("session after the prepare: %v %v", r.Err, r.Rows)
			}
		})
	}
}

// pgErrorText renders an error as its SQLSTATE and message.
func pgErrorText(err error) string {
	if pe, ok := err.(*pgconn.PgError); ok {
		return fmt.Sprintf("%s %s %s", pe.Severity, pe.Code, pe.Message)
	}
	return fmt.Sprint(err)
}
