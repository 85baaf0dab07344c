package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	duckdb "github.com/duckdb/duckdb-go/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/admin"
	"github.com/pgaccel/pgaccel/auth"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/proxy"
	"github.com/pgaccel/pgaccel/proxy/encode"
	"github.com/pgaccel/pgaccel/proxy/resultcache"
	"github.com/pgaccel/pgaccel/refresh"
	"github.com/pgaccel/pgaccel/snapshot"
	"github.com/pgaccel/pgaccel/stmtstats"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"
)

// App is a running pgaccel.
type App struct {
	// storage: the last measurements of the datasets' storage (storage.go).
	storage storageMeasured

	Config   *catalog.Config
	Registry *catalog.Registry
	Engine   *accelerator.Engine
	Runner   *refresh.Runner
	Planner  *planner.Planner
	Metrics  *prometheus.Registry
	// Stats are the statement statistics (runtime.statement_stats); nil
	// when off.
	Stats *stmtstats.Store
	// shutdownOnce makes Shutdown run once; shutdownErr is its error.
	shutdownOnce sync.Once
	shutdownErr  error

	log  zerolog.Logger
	pool *pgxpool.Pool
	// verify and verifyPool: shadow verification (runtime.verify) and its
	// own origin connection.
	verify     *proxy.Verifier
	verifyPool *pgxpool.Pool
	proxy      *proxy.Server
	ln         net.Listener
	served     chan error
	admin      *admin.Server
	// memory reports the accounted memory (GET /v1/memory), nil without
	// an engine.
	memory  func(context.Context) admin.MemoryStatus
	adminLn net.Listener
	cancel  context.CancelFunc
	lookups *lookupsFile // auth.persist: the planner's answers from the origin
	// reload: what Reload needs (reload.go); points, the point indexes
	// (nil without).
	reload reloadState
	points *accelerator.PointIndexes
}

// Start builds every component of cfg and starts serving: the proxy on
// server.listen, the admin port on admin.listen, and the refresh runner.
// The listeners are open when Start returns; datasets load in the
// background.
func Start(cfg *catalog.Config, log zerolog.Logger) (*App, error) {
	return StartWith(cfg, log, Options{})
}

// Options are settings of StartWith that the config file does not hold.
type Options struct {
	// Clock drives the refresh scheduler; the system clock when nil.
	Clock refresh.Clock
	// RefreshBackoff bounds the waits between retries of failed refreshes
	// and connections to the source (refresh.DefaultBackoff's when zero).
	RefreshBackoff refresh.Backoff
	// TestRewrite, in tests only, changes the SQL of every accelerated
	// statement (a planted wrong answer; planner.Options.TestRewrite).
	TestRewrite func(sql string) string
	// VerifyConfirm shortens how long shadow verification waits before it
	// calls answers different (proxy.DefaultVerifyConfirm when zero).
	VerifyConfirm time.Duration
}

// StartWith is Start with options.
func StartWith(cfg *catalog.Config, log zerolog.Logger, opts Options) (_ *App, err error) {
	origin, err := pgconn.ParseConfig(cfg.Origin.DSN)
	if err != nil {
		// pgconn's message can contain the DSN; name the key instead.
		return nil, errors.New("origin.dsn: not a valid Postgres connection string (URL or key=value form)")
	}
	var serverTLS *tls.Config
	if t := cfg.Server.TLS; t != nil {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("server.tls: load cert_file %s and key_file %s: %w", t.CertFile, t.KeyFile, err)
		}
		serverTLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}

	for _, w := range cfg.Warnings() {
		// What the config gives and pgaccel ignores (pgaccel validate
		// prints the same).
		log.Warn().Int("line", w.Line).Str("dataset", w.Dataset).Str("key", w.Key).Str("fix", w.Fix).Msg(w.Message)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &App{Config: cfg, log: log, cancel: cancel, served: make(chan error, 1)}
	a.reload.cur, a.reload.path = cfg, cfg.File()
	defer func() {
		if err != nil {
			a.closeParts()
		}
	}()

	a.Metrics = prometheus.NewRegistry()
	a.Metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a.Registry = catalog.NewRegistry(cfg)

	textFuncs, err := encode.TextFunctions()
	if err != nil {
		return nil, fmt.Errorf("the text functions: %w", err)
	}
	toChar, err := encode.ToCharFunctions()
	if err != nil {
		return nil, fmt.Errorf("the text functions: %w", err)
	}
	memLimit := duckDBMemoryLimit(cfg.Runtime.DuckDB)
	if a.Engine, err = accelerator.Open(accelerator.Options{DataDir: cfg.Runtime.DataDir, Logger: log,
		MemoryLimit: memLimit, TempDirectory: cfg.Runtime.DuckDB.TempDirectory,
		Functions: map[string][]duckdb.ScalarFunc{pgdef.FuncText: textFuncs, pgdef.FuncToChar: toChar}}); err != nil {
		return nil, fmt.Errorf("open the DuckDB engine: %w", err)
	}
	eng := a.Engine
	a.Registry.SetStorageStatus(a.storageStatus)
	a.Metrics.MustRegister(storageCollector{a},
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "pgaccel_duckdb_memory_bytes",
			Help: "Memory DuckDB holds (its buffer pool: tables of mode memory, caches, running queries and loads)."},
			func() float64 { return float64(eng.MemoryBytes(context.Background())) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "pgaccel_duckdb_memory_limit_bytes",
			Help: "DuckDB's memory_limit (runtime.duckdb.memory_limit): beyond it DuckDB spills to its temp directory or fails the statement."},
			func() float64 { return float64(eng.MemoryLimit(context.Background())) }),
	)
	poolCfg, err := pgxpool.ParseConfig(cfg.Origin.DSN)
	if err != nil {
		return nil, errors.New("origin.dsn: not a valid Postgres connection string")
	}
	poolCfg.MaxConns = 4
	poolCfg.ConnConfig.RuntimeParams["application_name"] = "pgaccel-catalog"
	// The pool connects lazily, so an origin that is down does not stop
	// pgaccel from starting and serving what it has.
	if a.pool, err = pgxpool.NewWithConfig(ctx, poolCfg); err != nil {
		return nil, fmt.Errorf("origin catalog pool: %w", err)
	}
	// The origin's answers about relations and privileges keep serving
	// for auth.max_stale while it cannot be reached, as verifiers do.
	resolver := planner.NewOriginResolver(a.pool, a.Engine.TableRef, planner.ResolverOptions{MaxStale: cfg.Auth.MaxStale, Names: a.datasetTableNames})
	a.Planner = planner.New(a.Registry, resolver, planner.Options{PointReadsToOrigin: cfg.Runtime.PointReads != catalog.PointReadsAcceleration,
		TestRewrite: opts.TestRewrite})
	clock := a.originClock(ctx)
	privileges := planner.NewPrivileges(a.pool, planner.PrivilegesOptions{MaxStale: cfg.Auth.MaxStale, Tables: a.datasetTables})
	proxyAuth, err := a.proxyAuth(cfg)
	if err != nil {
		return nil, err
	}
	if proxyAuth != nil && cfg.Auth.Persist {
		a.lookups = &lookupsFile{path: filepath.Join(cfg.Runtime.DataDir, "auth-lookups.json"), resolver: resolver, privileges: privileges,
			done: make(chan struct{}), stopped: make(chan struct{}), log: log}
		if err := a.lookups.load(); err != nil {
			return nil, fmt.Errorf("auth.persist: %w", err)
		}
		go a.lookups.run()
	}

	var snaps snapshot.Store
	if s := cfg.Snapshots; s != nil && s.Enabled {
		if snaps, err = snapshot.Open(ctx, s.Location, s.Params); err != nil {
			return nil, fmt.Errorf("snapshots: %w", err)
		}
	}
	a.Runner = refresh.NewRunner(cfg, a.Registry, a.Engine, log, refresh.Options{
		Concurrency: cfg.Runtime.RefreshConcurrency,
		Metrics:     refresh.NewMetrics(a.Metrics),
		Clock:       opts.Clock,
		Snapshots:   snaps,
		Backoff:     opts.RefreshBackoff,
	})

	pm := proxy.NewMetrics(a.Metrics)
	if ss := cfg.Runtime.StatementStats; ss.Enabled {
		a.Stats = stmtstats.New(stmtstats.Options{Max: ss.MaxStatements, Describe: describeStatement})
		a.Metrics.MustRegister(stmtstats.NewCollector(a.Stats, func() stmtstats.AdviceInput { return stmtstats.InputFrom(a.Registry) }))
	}
	// Without an accelerated dataset every statement goes to the origin:
	// the proxy then relays without the routing hook, unless
	// runtime.statement_stats.without_datasets asks for the statements to
	// be counted (and the datasets a reload adds to be served).
	var accel *proxy.Accel
	routed := cfg.Runtime.StatementStats.Enabled && cfg.Runtime.StatementStats.WithoutDatasets
	for _, ds := range cfg.Datasets {
		routed = routed || ds.Acceleration.Enabled
	}
	if routed {
		accel = &proxy.Accel{
			Planner:     a.Planner,
			Engine:      a.Engine,
			Privileges:  privileges,
			Generation:  a.generation,
			Clock:       clock,
			Consistency: proxy.NewConsistency(a.Registry, cfg.Runtime.ReadYourWrites, a.walPosition, pm),
			Registry:    a.Registry,
			Stats:       a.Stats,
		}
		if pi := cfg.Runtime.PointIndex; pi.Enabled && pi.MaxBytes > 0 {
			accel.Points = a.pointIndexes(ctx, pi.MaxBytes, log)
			a.points = accel.Points
		}
		if v := cfg.Runtime.Verify; v.Enabled {
			if accel.Verify, err = a.verifier(ctx, cfg, opts, log); err != nil {
				return nil, err
			}
		}
		policies := map[string]resultcache.CachingPolicy{}
		for _, ds := range cfg.Datasets {
			if acc := ds.Acceleration; acc.Enabled && acc.RefreshMode == catalog.RefreshCaching {
				policies[ds.Name] = resultcache.CachingPolicy{TTL: acc.RefreshCheckInterval, StaleWhileRevalidate: acc.CachingStaleWhileRevalidate,
					StaleIfError: acc.CachingStaleIfError, Table: ds.Table}
			}
		}
		if rc := cfg.Runtime.ResultsCache; rc.Enabled || len(policies) > 0 {
			// refresh_mode: caching keeps its answers there even when
			// the cache of accelerated answers is off.
			accel.ResultsCache = proxy.NewResultCache(rc.MaxBytes, rc.MaxEntryBytes, a.Registry.DataGeneration, a.Metrics)
			accel.ResultsCache.EnableCaching(policies, a.Registry.BumpDataGeneration, rc.Enabled, a.Metrics)
			a.Registry.SetCachingStatus(accel.ResultsCache.CachingStatus)
		}
		a.memory = func(ctx context.Context) admin.MemoryStatus {
			m := admin.MemoryStatus{DuckDBBytes: a.Engine.MemoryBytes(ctx), DuckDBLimitBytes: a.Engine.MemoryLimit(ctx), ProcessRSSBytes: processRSS()}
			if accel.Points != nil {
				m.PointIndexBytes, m.PointIndexMax = accel.Points.Bytes(), cfg.Runtime.PointIndex.MaxBytes
			}
			if accel.ResultsCache != nil {
				m.ResultsCacheBytes, m.ResultsCacheMax = accel.ResultsCache.Bytes(), cfg.Runtime.ResultsCache.MaxBytes
			}
			m.TotalBytes = m.DuckDBBytes + m.PointIndexBytes + m.ResultsCacheBytes
			return m
		}
		a.Metrics.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "pgaccel_memory_bytes",
			Help: "pgaccel's accounted memory: DuckDB's (pgaccel_duckdb_memory_bytes) plus the point indexes' and the results cache's estimates."},
			func() float64 { return float64(a.memory(context.Background()).TotalBytes) }))
	}
	a.reload.accelerated = accel != nil
	attached := make(chan struct{}) // closed once the stored accelerations are attached
	a.proxy = proxy.NewServer(proxy.Config{
		Origin:          origin,
		TLS:             serverTLS,
		MaxMessageBytes: cfg.Server.MaxMessageBytes,
		EventLoops:      cfg.Server.EventLoops,
		ShutdownGrace:   cfg.Server.ShutdownGrace,
		Logger:          log,
		Metrics:         pm,
		Accel:           accel,
		Auth:            proxyAuth,
		Attached:        attached,
	})
	if a.ln, err = net.Listen("tcp", cfg.Server.Listen); err != nil {
		return nil, fmt.Errorf("listen on server.listen %s: %w", cfg.Server.Listen, err)
	}
	if a.adminLn, err = net.Listen("tcp", cfg.Admin.Listen); err != nil {
		return nil, fmt.Errorf("listen on admin.listen %s: %w", cfg.Admin.Listen, err)
	}
	a.admin = admin.New(a.Registry, a.Runner, a.Metrics, log, admin.Options{
		Token:              cfg.Admin.Token,
		RuntimeReadyState:  cfg.Runtime.ReadyState,
		ReadyRequiresFresh: cfg.Runtime.ReadyRequiresFresh,
		CanLogIn:           a.canLogIn(cfg),
		Stats:              a.Stats,
		Reload:             a.Reload,
		Memory:             a.memory,
	})
	a.Metrics.MustRegister(admin.NewStatusCollector(a.Registry))
	a.admin.Start(a.adminLn)
	a.Runner.Start(ctx)
	go func() {
		_ = a.Runner.WaitAttached(ctx)
		close(attached)
	}()
	go func() { a.served <- a.proxy.Serve(a.ln) }()
	return a, nil
}

// proxyAuth builds the proxy's own authentication (auth.mode proxy): the
// verifier cache, reading through the lookup function on the catalog
// pool (origin.dsn's user, never a client's settings).
func (a *App) proxyAuth(cfg *catalog.Config) (*proxy.ProxyAuth, error) {
	if cfg.Auth.Mode != catalog.AuthProxy {
		return nil, nil
	}
	cache := &auth.Cache{
		Fetch: func(ctx context.Context, database, role string) (auth.Entry, error) {
			c, err := a.pool.Acquire(ctx)
			if err != nil {
				return auth.Entry{}, err
			}
			defer c.Release()
			return auth.Lookup(ctx, c.Conn().PgConn(), role, database)
		},
		TTL:          cfg.Auth.CacheTTL,
		MaxStale:     cfg.Auth.MaxStale,
		NegativeTTL:  5 * time.Second,
		RefetchEvery: 5 * time.Second,
	}
	pa := &proxy.ProxyAuth{Verifiers: cache, FreshFor: cfg.Auth.CacheTTL, OriginIdleTimeout: cfg.Auth.OriginIdleTimeout}
	if cfg.Auth.Persist {
		if err := os.MkdirAll(cfg.Runtime.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("auth.persist: %w", err)
		}
		cache.Path = filepath.Join(cfg.Runtime.DataDir, "auth-verifiers.json")
		pa.LoginsPath = filepath.Join(cfg.Runtime.DataDir, "auth-logins.json")
		if err := cache.Load(); err != nil {
			return nil, fmt.Errorf("auth.persist: %w", err)
		}
	}
	go func() {
		// Say at once, not at the first login, when the lookup is missing.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := a.pool.Acquire(ctx)
		if err != nil {
			return // the origin is down: logins use what is cached
		}
		defer c.Release()
		if err := auth.CheckSetup(ctx, c.Conn().PgConn()); errors.Is(err, auth.ErrNoSetup) {
			a.log.Error().Err(err).Msg("auth.mode: proxy cannot verify logins: run the SQL `pgaccel setup-sql -c <config>` prints, once, as a superuser at the origin")
		}
	}()
	return pa, nil
}

// datasetTables lists the datasets' origin tables, which the planner's
// lookups at the origin ask about all at once (planner.PrivilegesOptions).
func (a *App) datasetTables() []planner.TableID {
	names := a.Registry.Names()
	out := make([]planner.TableID, 0, len(names))
	for _, n := range names {
		if d, ok := a.Registry.Dataset(n); ok {
			out = append(out, planner.TableID{Schema: d.Schema, Name: d.Table})
		}
	}
	return out
}

// datasetTableNames lists the datasets' table names (without schemas).
func (a *App) datasetTableNames() []string {
	tables := a.datasetTables()
	out := make([]string, len(tables))
	for i, t := range tables {
		out[i] = t.Name
	}
	return out
}

// generation sums the swap generations of the named datasets.
func (a *App) generation(datasets []string) uint64 {
	var g uint64
	for _, name := range datasets {
		g += a.Registry.Generation(name)
	}
	return g
}

// Addr is the proxy's listening address.
func (a *App) Addr() string { return a.ln.Addr().String() }

// AdminAddr is the admin port's listening address.
func (a *App) AdminAddr() string { return a.adminLn.Addr().String() }

// WaitReady waits until every dataset with acceleration enabled has loaded
// once (refresh.Runner.WaitReady), or one failed to, or ctx is done.
func (a *App) WaitReady(ctx context.Context) error {
	for _, name := range a.Registry.Names() {
		if st, _ := a.Registry.State(name); st.Status == catalog.StatusDisabled {
			continue
		}
		if err := a.Runner.WaitReady(ctx, name); err != nil {
			return fmt.Errorf("dataset %s did not load: %w", name, err)
		}
	}
	return nil
}

// Shutdown drains the proxy (statements finish within the grace period,
// then are cancelled), stops refreshes and the admin port, and closes the
// engine. Calls after the first wait for it and return its error.
func (a *App) Shutdown(ctx context.Context) error {
	a.shutdownOnce.Do(func() { a.shutdownErr = a.shutdown(ctx) })
	return a.shutdownErr
}

func (a *App) shutdown(ctx context.Context) error {
	a.Registry.ShutDown() // status ShuttingDown, /v1/ready 503 while draining
	err := a.proxy.Shutdown(ctx)
	if serr := <-a.served; serr != nil && err == nil {
		err = serr
	}
	if aerr := a.admin.Close(ctx); aerr != nil && err == nil {
		err = aerr
	}
	if rerr := a.Runner.Close(ctx); rerr != nil && err == nil {
		err = rerr
	}
	a.closeParts()
	return err
}

// closeParts releases what Start opened, in reverse order.
func (a *App) closeParts() {
	if a.cancel != nil {
		a.cancel()
	}
	if a.lookups != nil {
		a.lookups.stop()
	}
	if a.ln != nil && a.proxy == nil {
		a.ln.Close()
	}
	if a.verify != nil {
		a.verify.Close()
	}
	a.Stats.Close()
	if a.verifyPool != nil {
		a.verifyPool.Close()
	}
	if a.pool != nil {
		a.pool.Close()
	}
	if a.Engine != nil {
		if err := a.Engine.Close(); err != nil {
			a.log.Warn().Err(err).Msg("close the DuckDB engine")
		}
	}
}

// verifier starts shadow verification (runtime.verify) on a pool of one
// origin connection of its own, as origin.dsn's role.
func (a *App) verifier(ctx context.Context, cfg *catalog.Config, opts Options, log zerolog.Logger) (*proxy.Verifier, error) {
	poolCfg, err := pgxpool.ParseConfig(cfg.Origin.DSN)
	if err != nil {
		return nil, errors.New("origin.dsn: not a valid Postgres connection string")
	}
	poolCfg.MaxConns = 1
	poolCfg.ConnConfig.RuntimeParams["application_name"] = "pgaccel-verify"
	if a.verifyPool, err = pgxpool.NewWithConfig(ctx, poolCfg); err != nil {
		return nil, fmt.Errorf("origin verification pool: %w", err)
	}
	v := cfg.Runtime.Verify
	a.verify = proxy.NewVerifier(proxy.VerifyConfig{
		Rate: v.SampleRate, Budget: v.OriginTimePerMinute, Pool: a.verifyPool, Registry: a.Registry,
		Demote: a.Planner.Demote, Logger: log, Metrics: a.Metrics, Confirm: opts.VerifyConfirm,
	})
	a.Registry.SetVerifyStatus(a.verify.Status)
	a.verify.Start()
	return a.verify, nil
}

// pointIndexes makes the point indexes of the engine's datasets
// (runtime.point_index), reporting them in the datasets' status and the
// metrics.
func (a *App) pointIndexes(ctx context.Context, maxBytes int64, log zerolog.Logger) *accelerator.PointIndexes {
	reg := a.Registry
	pix := a.Engine.NewPointIndexes(ctx, accelerator.PointIndexOptions{
		MaxBytes: maxBytes,
		State: func(name string) ([]catalog.ColumnInfo, uint64, bool) {
			st, ok := reg.State(name)
			return st.Columns, st.DataGeneration, ok && st.Servable()
		},
		Generation: reg.DataGeneration,
		OnBuilt: func(name string, rows int, bytes int64, took time.Duration, err error) {
			if err != nil {
				log.Info().Str("dataset", name).Err(err).Dur("took", took).Msg("point index not built; DuckDB answers point reads")
				return
			}
			log.Debug().Str("dataset", name).Int("rows", rows).Int64("bytes", bytes).Dur("took", took).Msg("point index built")
		},
	})
	reg.SetPointIndexStatus(pix.Status)
	a.Metrics.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "pgaccel_point_index_bytes",
		Help: "Estimated memory of the point indexes held (runtime.point_index).",
	}, func() float64 { return float64(pix.Bytes()) }))
	return pix
}

// originClock measures the origin's clock against this process's
// (planner.OriginClock) every minute, for the relative-time values of
// accelerated statements, and exports the offset and its bound as
// metrics. An offset over a second is logged: the hosts' clocks are not
// kept in step, which pgaccel corrects for but the operator should know.
func (a *App) originClock(ctx context.Context) *planner.OriginClock {
	clock := planner.NewOriginClock(a.pool)
	a.Metrics.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "pgaccel_origin_clock_offset_seconds",
			Help: "The origin's clock minus pgaccel's, as last measured; now() and CURRENT_DATE of accelerated statements follow the origin's."},
			func() float64 { return clock.Offset().Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "pgaccel_origin_clock_offset_bound_seconds",
			Help: "Half the round trip of the best probe of the last measurement of the origin's clock: the offset's error bound (-1 before the first)."},
			func() float64 {
				if _, bound, _, ok := clock.Reading(); ok {
					return bound.Seconds()
				}
				return -1
			}),
	)
	warned := false
	go clock.Run(ctx, planner.DefaultClockEvery, func(err error) {
		if err != nil {
			a.log.Debug().Err(err).Msg("origin clock: not measured (the last offset stays)")
			return
		}
		off, bound, _, _ := clock.Reading()
		if far := off > time.Second || off < -time.Second; far && !warned {
			a.log.Warn().Dur("offset", off).Dur("bound", bound).
				Msg("the origin's clock differs from pgaccel's by over a second; now() of accelerated statements follows the origin's")
			warned = true
		} else if !far {
			warned = false
		}
	})
	return clock
}

// duckDBMemoryLimit is DuckDB's memory_limit for runtime.duckdb: as
// configured, or catalog.DefaultDuckDBMemoryShare of the memory this
// process may use ("" keeps DuckDB's own default when that cannot be
// read).
func duckDBMemoryLimit(c catalog.DuckDB) string {
	n := c.MemoryLimit
	if n <= 0 {
		n = int64(float64(accelerator.MachineMemory()) * catalog.DefaultDuckDBMemoryShare)
	}
	if n <= 0 {
		return ""
	}
	return strconv.FormatInt(max(n>>20, catalog.MinDuckDBMemory>>20), 10) + "MiB"
}

// walPosition reads the origin's WAL insert position, at or past every
// commit completed before it is read (read-your-writes: proxy.Consistency).
// When the origin has not flushed its WAL that far (synchronous_commit off:
// a commit returns before its WAL is flushed, and the WAL writer flushes
// it within wal_writer_delay, 200 ms by default), it is flushed now by a
// transaction that writes a logical message (which the change stream does
// not receive) committed synchronously, which flushes all the WAL before
// its own commit: the change stream is sent only flushed WAL.
func (a *App) walPosition(ctx context.Context) (uint64, error) {
	var insertText, flushText string
	if err := a.pool.QueryRow(ctx, "SELECT pg_catalog.pg_current_wal_insert_lsn()::text, pg_catalog.pg_current_wal_flush_lsn()::text").Scan(&insertText, &flushText); err != nil {
		return 0, err
	}
	insert, err := pglogrepl.ParseLSN(insertText)
	if err != nil {
		return 0, err
	}
	flush, err := pglogrepl.ParseLSN(flushText)
	if err != nil {
		return 0, err
	}
	if flush < insert {
		tx, err := a.pool.Begin(ctx)
		if err != nil {
			return 0, err
		}
		defer tx.Rollback(context.Background()) //nolint:errcheck // after Commit, a no-op
		if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit TO on"); err != nil {
			return 0, err
		}
		// A record of its own (an xid alone writes none, and a commit
		// that wrote no WAL does not flush).
		if _, err := tx.Exec(ctx, "SELECT pg_catalog.pg_logical_emit_message(true, 'pgaccel', '')"); err != nil {
			return 0, err
		}
		if err := tx.Commit(ctx); err != nil {
			return 0, err
		}
	}
	return uint64(insert), nil
}

// canLogIn is GET /v1/ready?login=true's check: with auth.mode origin, the
// origin checks every login, so a new session can log in only while it
// answers (a ping on the refresh account's pool, within 2 s); with
// auth.mode proxy, pgaccel logs in the roles whose verifier it holds
// itself.
func (a *App) canLogIn(cfg *catalog.Config) func(context.Context) bool {
	if cfg.Auth.Mode == catalog.AuthProxy {
		return nil
	}
	return func(ctx context.Context) bool {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		return a.pool.Ping(ctx) == nil
	}
}
