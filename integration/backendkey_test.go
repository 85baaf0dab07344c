package integration

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestBackendKey_PIDIsTheOriginBackends: the process id a client gets in
// BackendKeyData is its origin backend's, so pg_backend_pid(),
// pg_stat_activity and pg_terminate_backend(conn.PID()) agree with the
// driver, with and without an acceleration; cancels still work with the
// proxy's own secret.
func TestBackendKey_PIDIsTheOriginBackends(t *testing.T) {
	mustExec(t, "CREATE TABLE IF NOT EXISTS bkey_accel (id int PRIMARY KEY)")
	a := startApp(t, "  - from: postgres:public.bkey_accel\n")
	p := startProxy(t, nil)
	for name, dsn := range map[string]string{
		"pass-through": p.DSN(appUser, appPass),
		"accelerated":  appDSN(a, appUser, appPass),
	} {
		t.Run(name, func(t *testing.T) {
			ctx := ctxT(t)
			c := connect(t, dsn)
			pid := c.PgConn().PID()
			var backend uint32
			if err := c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
				t.Fatal(err)
			}
			if backend != pid {
				t.Fatalf("BackendKeyData pid %d, pg_backend_pid() %d", pid, backend)
			}
			var user string
			if err := c.QueryRow(ctx, "SELECT usename FROM pg_stat_activity WHERE pid = $1", pid).Scan(&user); err != nil || user != appUser {
				t.Fatalf("pg_stat_activity for pid %d: %q %v", pid, user, err)
			}

			// A cancel names the session by the pid and the proxy's key.
			errc := make(chan error, 1)
			go func() {
				_, err := c.Exec(ctx, "SELECT pg_sleep(30)")
				errc <- err
			}()
			time.Sleep(300 * time.Millisecond)
			if err := c.PgConn().CancelRequest(ctx); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-errc:
				var pe *pgconn.PgError
				if !errors.As(err, &pe) || pe.Code != "57014" {
					t.Fatalf("want 57014 after cancel, got %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("cancel did not reach the origin backend")
			}

			// Another session terminates this one by the pid it was given.
			other := connect(t, origin.SuperDSN())
			var ok bool
			if err := other.QueryRow(ctx, "SELECT pg_terminate_backend($1)", int(pid)).Scan(&ok); err != nil || !ok {
				t.Fatalf("pg_terminate_backend(%d): %v %v", pid, ok, err)
			}
			ctx2, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			_, err := c.Exec(ctx2, "SELECT 1")
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "57P01" {
				t.Fatalf("after pg_terminate_backend: want FATAL 57P01, got %v", err)
			}
		})
	}
}
