package catalog

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// Defaults of the settings outside datasets. Dataset defaults are the
// constants of each enumeration marked "default" below; all of them are
// applied by one function (see applyDefaults in raw.go).
const (
	DefaultServerListen    = "127.0.0.1:15432"
	DefaultAdminListen     = "127.0.0.1:8090"
	DefaultDataDir         = "./.pgaccel"
	DefaultMaxMessageBytes = 64 << 20
	DefaultShutdownGrace   = 10 * time.Second

	// DefaultRefreshConcurrency is how many refreshes run at once.
	DefaultRefreshConcurrency = 2

	// DefaultSnapshotPollInterval is the refresh_check_interval of a
	// refresh_mode: snapshot dataset that sets none.
	DefaultSnapshotPollInterval = time.Minute

	// DefaultCachingTTL is how long an answer of a refresh_mode: caching
	// dataset is fresh when refresh_check_interval is unset;
	// DefaultCachingStaleIfError how long past that it is served while
	// the origin cannot answer (caching_stale_if_error). A stale answer
	// is served while it is revalidated for as long as it was fresh
	// (caching_stale_while_revalidate, default refresh_check_interval).
	DefaultCachingTTL          = 30 * time.Second
	DefaultCachingStaleIfError = 10 * time.Minute

	// MinMaxMessageBytes is the smallest accepted server.max_message_bytes:
	// below it ordinary queries would be rejected.
	MinMaxMessageBytes = 4096
)

// Values of auth.mode.
const (
	AuthOrigin = "origin" // default: logins are relayed to the origin
	AuthProxy  = "proxy"  // pgaccel verifies logins against the origin's verifiers
)

// Defaults of the auth block.
const (
	DefaultAuthCacheTTL = time.Minute
	DefaultAuthMaxStale = time.Hour
	// DefaultAuthOriginIdleTimeout: how long a session's idle origin
	// connection is kept (auth.mode proxy).
	DefaultAuthOriginIdleTimeout = 30 * time.Second
)

// Values of acceleration.engine.
const (
	EngineDuckDB = "duckdb" // default
)

// Values of acceleration.mode.
const (
	ModeMemory = "memory" // default
	ModeFile   = "file"
)

// Values of acceleration.refresh_mode.
const (
	RefreshFull     = "full" // default
	RefreshAppend   = "append"
	RefreshChanges  = "changes"
	RefreshCaching  = "caching"
	RefreshSnapshot = "snapshot"
	RefreshDisabled = "disabled"
)

// Values of ready_state (dataset, acceleration and runtime; the runtime
// accepts only the first two).
const (
	ReadyOnLoad           = "on_load" // default
	ReadyOnRegistration   = "on_registration"
	ReadyOnSchemaResolved = "on_schema_resolved"
)

// Values of acceleration.refresh_on_startup.
const (
	RefreshOnStartupAuto   = "auto" // default
	RefreshOnStartupAlways = "always"
)

// Values of acceleration.on_zero_results.
const (
	ZeroResultsReturnEmpty = "return_empty" // default
	ZeroResultsUseSource   = "use_source"
)

// Values of acceleration.snapshots.
const (
	SnapshotsEnabled       = "enabled"
	SnapshotsDisabled      = "disabled" // default
	SnapshotsBootstrapOnly = "bootstrap_only"
	SnapshotsCreateOnly    = "create_only"
)

// Values of acceleration.snapshots_trigger: when a dataset that creates
// snapshots makes one.
const (
	SnapshotsTriggerRefresh  = "refresh_complete" // after each completed refresh (default)
	SnapshotsTriggerInterval = "time_interval"    // every snapshots_trigger_threshold (default for changes)
)

// SnapshotTrigger is when the dataset creates snapshots and, for
// time_interval, how often: the defaults for what the config leaves out
// (refresh_complete; time_interval every DefaultSnapshotsInterval for
// refresh_mode: changes).
func (a *Acceleration) SnapshotTrigger() (string, time.Duration) {
	trig, every := a.SnapshotsTrigger, a.SnapshotsTriggerThreshold
	if trig == "" {
		trig = SnapshotsTriggerRefresh
		if a.RefreshMode == RefreshChanges {
			trig = SnapshotsTriggerInterval
		}
	}
	if trig == SnapshotsTriggerInterval && every == 0 {
		every = DefaultSnapshotsInterval
	}
	return trig, every
}

// DefaultSnapshotsInterval is snapshots_trigger_threshold's default with
// snapshots_trigger: time_interval.
const DefaultSnapshotsInterval = 10 * time.Minute

// Values of snapshots.bootstrap_on_failure_behavior.
const (
	SnapshotFailureWarn     = "warn" // default
	SnapshotFailureRetry    = "retry"
	SnapshotFailureFallback = "fallback"
)

// Values of time_format and time_partition_format. Unset means the format
// follows the column's type.
const (
	TimeFormatTimestamp   = "timestamp"
	TimeFormatTimestamptz = "timestamptz"
	TimeFormatUnixSeconds = "unix_seconds"
	TimeFormatUnixMillis  = "unix_millis"
	TimeFormatISO8601     = "iso8601"
	TimeFormatDate        = "date"
)

// Config is a parsed, defaulted pgaccel.yaml.
type Config struct {
	Origin    Origin
	Server    Server
	Admin     Admin
	Runtime   Runtime
	Auth      Auth
	Snapshots *Snapshots // nil when the file has no top-level snapshots block
	Datasets  []*Dataset

	file string         // name used in problems
	keys map[string]int // line of every key given outside datasets, e.g. "server.tls.cert_file"
}

// Origin is the Postgres that pgaccel fronts.
type Origin struct {
	// DSN is a libpq connection string (URL or keyword/value), required.
	// It may hold a password: never log it.
	DSN string
}

// Server configures the pgwire listener.
type Server struct {
	Listen          string        // host:port, default DefaultServerListen
	TLS             *TLS          // nil when server.tls is unset
	MaxMessageBytes int           // largest client message accepted (pgproto3 SetMaxBodyLen)
	ShutdownGrace   time.Duration // how long in-flight statements may run after shutdown starts
	// EventLoops is server.event_loops: how many event loops relay
	// sessions on plain sockets; nil when unset (one per two CPUs), 0 when
	// every session runs on goroutines.
	EventLoops *int
}

// TLS names the certificate and key the pgwire listener serves.
type TLS struct {
	CertFile string
	KeyFile  string
}

// Admin configures the HTTP admin port.
type Admin struct {
	Listen string // host:port, default DefaultAdminListen
	// Token, when set, is the bearer token every endpoint but /health and
	// /v1/ready requires. Never log it.
	Token string
}

// Runtime holds process-wide settings.
// Auth configures who verifies client logins.
type Auth struct {
	Mode string // AuthOrigin or AuthProxy
	// CacheTTL is how long a fetched verifier is used before it is
	// fetched again; MaxStale how long the last one keeps serving while
	// the origin cannot be reached (0: never).
	CacheTTL time.Duration
	MaxStale time.Duration
	// Persist keeps verifiers in runtime.data_dir (mode 0600) so logins
	// work after a restart during an outage.
	Persist bool
	// OriginIdleTimeout is how long a session's origin connection is kept
	// after its last statement there (mode proxy; 0: for the session's
	// life).
	OriginIdleTimeout time.Duration
}

type Runtime struct {
	DataDir    string // where file-mode accelerations live, default DefaultDataDir
	ReadyState string // ReadyOnLoad or ReadyOnRegistration: when /v1/ready turns 200
	// RefreshConcurrency bounds the dataset refreshes running at once,
	// default DefaultRefreshConcurrency.
	RefreshConcurrency int
	// PointReads is PointReadsOrigin (the default) or
	// PointReadsAcceleration: where a read of one dataset by its primary
	// key (WHERE id = 42) is answered.
	PointReads string
	// ResultsCache keeps accelerated answers for repeated statements
	// (runtime.results_cache).
	ResultsCache ResultsCache
	// PointIndex keeps the rows of datasets that point reads are answered
	// from in memory by primary key (runtime.point_index).
	PointIndex PointIndex
	// Verify runs a sample of accelerated statements again at the origin
	// and compares the answers (runtime.verify).
	Verify Verify
	// DuckDB bounds the embedded engine's memory (runtime.duckdb).
	DuckDB DuckDB
	// ReadyRequiresFresh: /v1/ready answers 503 while every dataset with
	// a max_staleness holds data older than it (runtime.ready_requires_fresh),
	// so that a load balancer takes an instance whose refreshes stopped
	// out of rotation.
	ReadyRequiresFresh bool
	// ReadYourWrites keeps the reads of a session that wrote at least as
	// new as its writes (runtime.read_your_writes).
	ReadYourWrites ReadYourWrites
	// StatementStats is runtime.statement_stats: the statement statistics
	// (SHOW pgaccel.statements, GET /v1/statements, the advisor).
	StatementStats StatementStats
}

// StatementStats is runtime.statement_stats: per statement fingerprint,
// role and database, calls, rows and times by route (stmtstats). On by
// default; max_statements bounds the statements kept (default 5000; when
// full, the tenth with the fewest calls is dropped).
type StatementStats struct {
	Enabled       bool
	MaxStatements int
	// WithoutDatasets: with no accelerated dataset, sessions still pass
	// the routing hook, so that their statements are counted (and the
	// advisor sees them), and a reload may add the first dataset.
	WithoutDatasets bool
	Line            int
}

// DefaultMaxStatements is runtime.statement_stats.max_statements' default.
const DefaultMaxStatements = 5000

// ReadYourWrites is runtime.read_your_writes: after a transaction that
// may have written a dataset's table commits through pgaccel, the reads of
// that dataset by the sessions of Scope never see an older state. A
// changes dataset answers them once its applied WAL position has passed
// the commit's, waiting up to MaxWait for that (the origin answers when it
// has not); a full, append or snapshot dataset once it serves data loaded
// after the commit; the results cache and caching datasets only with
// answers made after it. Until then the origin answers.
type ReadYourWrites struct {
	// Scope is RYWSession (the default), RYWRole, RYWGlobal or RYWOff:
	// whose later reads a commit holds back.
	Scope string
	// MaxWait bounds how long a read waits for a changes dataset to apply
	// a commit before the origin answers it (DefaultRYWMaxWait; 0: never
	// waits).
	MaxWait time.Duration
	Line    int
}

// Values of runtime.read_your_writes.scope.
const (
	RYWSession = "session"
	RYWRole    = "role"
	RYWGlobal  = "global"
	RYWOff     = "off"
)

// DefaultRYWMaxWait is runtime.read_your_writes.max_wait's default: above
// the apply lag of a changes dataset at a few thousand changes a second
// (bench/cdc), well under what a dashboard query costs the origin.
const DefaultRYWMaxWait = 250 * time.Millisecond

// DuckDB is runtime.duckdb: the embedded engine's memory budget and where
// it spills beyond it.
type DuckDB struct {
	// MemoryLimit is DuckDB's memory_limit in bytes; 0 is the default,
	// DefaultDuckDBMemoryShare of the machine's memory (or of the
	// process's cgroup limit, when lower).
	MemoryLimit int64
	// TempDirectory is where DuckDB writes what does not fit
	// MemoryLimit (large sorts, joins, loads); "" is <data_dir>/duckdb_tmp.
	TempDirectory string
	Line          int
}

// DefaultDuckDBMemoryShare is the share of the machine's memory DuckDB may
// use by default. DuckDB's own default is 80 %; pgaccel's point indexes,
// results cache and the Go heap live beside it.
const DefaultDuckDBMemoryShare = 0.5

// MinDuckDBMemory is the smallest runtime.duckdb.memory_limit accepted.
const MinDuckDBMemory = 64 << 20

// Verify is runtime.verify: shadow verification. A share of the
// accelerated statements (SampleRate) is run again at the origin, within
// OriginTimePerMinute of origin time each minute, and the answers are
// compared byte for byte when they are comparable (the tables read have
// not changed since the acceleration's data); a statement shape whose
// answers differ goes to the origin from then on.
type Verify struct {
	Enabled             bool    // default false
	SampleRate          float64 // in (0, 1]; -1 when SampleRateText does not parse
	SampleRateText      string  // as written, default "1%"
	OriginTimePerMinute time.Duration
	Line                int
}

// Defaults of runtime.verify.
const (
	DefaultVerifySampleRate = 0.01
	DefaultVerifyOriginTime = time.Second
)

// PointIndex is runtime.point_index: with point_reads: acceleration (or
// while the origin is down), a dataset whose reads pin its primary key is
// held in memory, row by row, keyed by it, and such reads are answered
// without DuckDB. An index is built on a dataset's first point read and
// again after each change of its rows; until it is built, DuckDB answers.
type PointIndex struct {
	Enabled  bool  // default true
	MaxBytes int64 // the budget of all indexes, default DefaultPointIndexBytes
	Line     int
}

// DefaultPointIndexBytes is the default budget of runtime.point_index.
const DefaultPointIndexBytes = 256 << 20

// ResultsCache is runtime.results_cache: accelerated answers kept, as the
// bytes the client received, until a dataset they read changes.
type ResultsCache struct {
	Enabled       bool  // default true
	MaxBytes      int64 // the budget, default DefaultResultsCacheBytes
	MaxEntryBytes int64 // the largest answer kept, default DefaultResultsCacheEntryBytes
	Line          int
}

// Defaults of runtime.results_cache: a modest budget; an answer larger
// than 1 MiB is streamed to the client as it is encoded, and not kept.
const (
	DefaultResultsCacheBytes      = 64 << 20
	DefaultResultsCacheEntryBytes = 1 << 20
)

// Values of runtime.point_reads. The origin answers a read by its primary
// key from its index in well under a millisecond; DuckDB spends longer just
// preparing any statement, so such reads go to the origin unless the
// config says otherwise.
const (
	PointReadsOrigin       = "origin"
	PointReadsAcceleration = "acceleration"
)

// Snapshots is the top-level snapshots block: where acceleration snapshots
// are stored for the datasets that opt in with acceleration.snapshots.
type Snapshots struct {
	Enabled                    bool // default true once the block is present
	Location                   string
	BootstrapOnFailureBehavior string // SnapshotFailure*, default warn
	Params                     map[string]string
	Line                       int // line of the block in the file
}

// Dataset is one origin table and how it is accelerated.
type Dataset struct {
	From          string // as written, e.g. "postgres:public.orders"
	Schema, Table string // from From; unquoted identifiers folded to lower case as Postgres does

	Name string // defaults to Table; unique (case-insensitively) and a valid SQL identifier

	TimeColumn          string
	TimeFormat          string // TimeFormat* or "" (follow the column type)
	TimePartitionColumn string
	TimePartitionFormat string
	ReadyState          string // Ready*, default on_load (or acceleration.ready_state when only that is set)
	Params              map[string]string

	Acceleration Acceleration

	Line int // line of the dataset in the file, for later error messages

	index int            // position in the datasets list, from 0
	keys  map[string]int // line of every key given for this dataset, e.g. "acceleration.refresh_cron"
}

// Acceleration is a dataset's acceleration block. Zero durations mean unset.
type Acceleration struct {
	Enabled     bool   // default true
	Engine      string // EngineDuckDB
	Mode        string // Mode*, default memory
	RefreshMode string // Refresh*, default full

	RefreshCheckInterval time.Duration // 0: no interval schedule (snapshot mode defaults to 1m)
	RefreshCron          string        // 5-field cron expression, or ""
	RefreshSQL           string
	RefreshDataWindow    time.Duration
	RefreshAppendOverlap time.Duration
	RefreshOnStartup     string // RefreshOnStartup*, default auto
	// MaxStaleness bounds how old the data may be for reads to be
	// answered from it (DatasetState.DataAge); past it they go to the
	// origin and the dataset is stale. 0: no bound.
	MaxStaleness time.Duration

	RefreshRetryEnabled     bool // default true
	RefreshRetryMaxAttempts int  // 0: unlimited
	RefreshJitterEnabled    bool // default false
	RefreshJitterMax        time.Duration

	RetentionCheckEnabled  bool
	RetentionPeriod        time.Duration
	RetentionSQL           string
	RetentionCheckInterval time.Duration

	OnZeroResults string   // ZeroResults*, default return_empty
	PrimaryKey    []string // column names; the file accepts a string or a list
	ReadyState    string   // same as the dataset's ReadyState after defaults
	Snapshots     string   // Snapshots*, default disabled
	// SnapshotsTrigger is when snapshots are created (SnapshotsTrigger*),
	// SnapshotsTriggerThreshold the interval of time_interval; both as
	// written ("" and 0 for the defaults: SnapshotTrigger).
	SnapshotsTrigger          string
	SnapshotsTriggerThreshold time.Duration
	// CachingStaleWhileRevalidate and CachingStaleIfError are, for
	// refresh_mode: caching, how long past refresh_check_interval an
	// answer is served while one request revalidates it, and while the
	// origin cannot answer (0: not at all); defaulted.
	CachingStaleWhileRevalidate time.Duration
	CachingStaleIfError         time.Duration
	Params                      map[string]string
}

// Load reads the config file at path, expands ${env:NAME} references, parses
// it, applies defaults and validates it. A config with problems returns a
// *ValidationError listing all of them.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(data, path)
}

// Parse is Load for a file already in memory; filename is used only in
// problems. Environment variables come from the process environment.
func Parse(data []byte, filename string) (*Config, error) {
	return parse(data, filename, os.LookupEnv)
}

// parse decodes, defaults and validates data, looking variables up with env.
func parse(data []byte, filename string, env func(string) (string, bool)) (*Config, error) {
	raw, problems := decode(data, env)
	if raw == nil {
		return nil, newValidationError(filename, problems)
	}
	raw.applyDefaults()
	cfg := raw.config(filename)
	// A key whose value could not be decoded is left unset; what Validate
	// then says about that key would only repeat the first problem.
	bad := map[[2]string]bool{}
	for _, p := range problems {
		bad[[2]string{p.Dataset, p.Key}] = true
	}
	for _, p := range cfg.problems() {
		if !bad[[2]string{p.Dataset, p.Key}] {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		return nil, newValidationError(filename, problems)
	}
	return cfg, nil
}

// Dataset returns the dataset with the given name (compared
// case-insensitively), or nil.
func (c *Config) Dataset(name string) *Dataset {
	for _, d := range c.Datasets {
		if strings.EqualFold(d.Name, name) {
			return d
		}
	}
	return nil
}

// QualifiedTable returns the origin table as a quoted SQL name,
// "schema"."table".
func (d *Dataset) QualifiedTable() string {
	return quoteIdent(d.Schema) + "." + quoteIdent(d.Table)
}

// RetentionPredicate returns the WHERE predicate of acceleration.retention_sql
// ("" when unset or not of the form DELETE FROM <table> WHERE <predicate>).
// The planner negates it to build the fallback filter.
func (d *Dataset) RetentionPredicate() string {
	del, err := parseRetentionSQL(d.Acceleration.RetentionSQL)
	if err != nil {
		return ""
	}
	return del.where
}

// RefreshSelect splits acceleration.refresh_sql into its column list (nil
// for *) and its WHERE predicate ("" when none). ok is false when
// refresh_sql is unset or not of the form SELECT <columns> FROM <table>
// [WHERE <predicate>].
func (d *Dataset) RefreshSelect() (columns []string, where string, ok bool) {
	sel, err := parseRefreshSQL(d.Acceleration.RefreshSQL)
	if err != nil {
		return nil, "", false
	}
	return sel.columns, sel.where, true
}

// quoteIdent quotes a Postgres identifier.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
