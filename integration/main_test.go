package integration

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/internal/pgtest"
	"github.com/pgaccel/pgaccel/proxy"
	"github.com/rs/zerolog"
)

// origin is the real Postgres every test in this binary shares.
var origin *pgtest.Server

func TestMain(m *testing.M) {
	pgtest.RunMain(m, &origin)
}

// testProxy is a pgaccel proxy in front of the shared origin.
type testProxy struct {
	srv  *proxy.Server
	ln   net.Listener
	done chan error
}

// startProxy starts a proxy for the test; edit adjusts its config.
func startProxy(t testing.TB, edit func(*proxy.Config)) *testProxy {
	t.Helper()
	oc, err := pgconn.ParseConfig(origin.SuperDSN())
	if err != nil {
		t.Fatalf("parse origin dsn: %v", err)
	}
	cfg := proxy.Config{
		Origin:        oc,
		ShutdownGrace: 5 * time.Second,
		Logger:        zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel),
	}
	if edit != nil {
		edit(&cfg)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	p := &testProxy{srv: proxy.NewServer(cfg), ln: ln, done: make(chan error, 1)}
	go func() { p.done <- p.srv.Serve(ln) }()
	t.Cleanup(func() { p.stop(t) })
	return p
}

func (p *testProxy) stop(t testing.TB) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.srv.Shutdown(ctx); err != nil {
		t.Errorf("proxy shutdown: %v", err)
	}
	if err := <-p.done; err != nil {
		t.Errorf("proxy serve: %v", err)
	}
}

func (p *testProxy) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// DSN is a connection string to the proxy for user and password.
func (p *testProxy) DSN(user, password string) string {
	return "postgres://" + user + ":" + password + "@127.0.0.1:" + strconv.Itoa(p.port()) + "/" + origin.Database + "?sslmode=disable"
}

// appDSN and friends name the harness's roles.
const (
	appUser = "app"
	appPass = "app-pass"
)

func connect(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return connectConfig(t, cfg)
}

// connectConfig connects with cfg, closed when the test ends.
func connectConfig(t testing.TB, cfg *pgx.ConnConfig) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// connectSimple connects with pgx's simple protocol. (Setting
// DefaultQueryExecMode on c.Config() after connecting does nothing: Config
// returns a copy.)
func connectSimple(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	return connectConfig(t, cfg)
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// mustExec runs sql on the origin as the superuser.
func mustExec(t testing.TB, sql string) {
	t.Helper()
	if err := origin.Exec(ctxT(t), sql); err != nil {
		t.Fatalf("origin exec %q: %v", sql, err)
	}
}
