package catalog

import (
	"maps"
	"math"
	"strconv"
	"strings"
	"time"
)

// The raw* structs mirror the file. Pointer fields are nil when the key is
// absent (or null), so defaults can tell "unset" from a zero value. Tags name
// the YAML keys; decode.go fills the structs by reflection from the tags and
// records the line of every key it sets in Pos. The tag option "allowzero"
// lets a duration be 0; numbers and other durations must be positive.

type rawConfig struct {
	Origin    *rawOrigin    `yaml:"origin"`
	Server    *rawServer    `yaml:"server"`
	Admin     *rawAdmin     `yaml:"admin"`
	Runtime   *rawRuntime   `yaml:"runtime"`
	Auth      *rawAuth      `yaml:"auth"`
	Snapshots *rawSnapshots `yaml:"snapshots"`
	Datasets  []*rawDataset `yaml:"datasets"`
	Pos       positions     `yaml:"-"`
}

type rawOrigin struct {
	DSN *string   `yaml:"dsn"`
	Pos positions `yaml:"-"`
}

type rawServer struct {
	Listen          *string        `yaml:"listen"`
	TLS             *rawTLS        `yaml:"tls"`
	MaxMessageBytes *int           `yaml:"max_message_bytes"`
	ShutdownGrace   *time.Duration `yaml:"shutdown_grace,allowzero"`
	EventLoops      *int           `yaml:"event_loops,allowzero"`
	Pos             positions      `yaml:"-"`
}

type rawTLS struct {
	CertFile *string   `yaml:"cert_file"`
	KeyFile  *string   `yaml:"key_file"`
	Pos      positions `yaml:"-"`
}

type rawAdmin struct {
	Listen *string   `yaml:"listen"`
	Token  *string   `yaml:"token"`
	Pos    positions `yaml:"-"`
}

type rawAuth struct {
	Mode     *string        `yaml:"mode"`
	CacheTTL *time.Duration `yaml:"cache_ttl"`
	MaxStale *time.Duration `yaml:"max_stale,allowzero"`
	Persist  *bool          `yaml:"persist"`
	// OriginIdleTimeout: origin_idle_timeout.
	OriginIdleTimeout *time.Duration `yaml:"origin_idle_timeout,allowzero"`
	Pos               positions      `yaml:"-"`
}

type rawRuntime struct {
	DataDir    *string `yaml:"data_dir"`
	ReadyState *string `yaml:"ready_state"`
	// RefreshConcurrency bounds the refreshes running at once.
	RefreshConcurrency *int `yaml:"refresh_concurrency"`
	// PointReads routes reads by a dataset's primary key.
	PointReads *string `yaml:"point_reads"`
	// ResultsCache keeps accelerated answers.
	ResultsCache *rawResultsCache `yaml:"results_cache"`
	// PointIndex keeps datasets' rows in memory by primary key.
	PointIndex *rawPointIndex `yaml:"point_index"`
	// Verify checks a sample of accelerated answers at the origin.
	Verify *rawVerify `yaml:"verify"`
	// DuckDB bounds the embedded engine's memory.
	DuckDB *rawDuckDB `yaml:"duckdb"`
	// ReadYourWrites keeps a writer's reads at least as new as its writes.
	ReadYourWrites *rawReadYourWrites `yaml:"read_your_writes"`
	// ReadyRequiresFresh takes /v1/ready down while all data is stale.
	ReadyRequiresFresh *bool `yaml:"ready_requires_fresh"`
	// StatementStats keeps per-statement statistics.
	StatementStats *rawStatementStats `yaml:"statement_stats"`
	Pos            positions          `yaml:"-"`
}

type rawStatementStats struct {
	Enabled         *bool     `yaml:"enabled"`
	MaxStatements   *int      `yaml:"max_statements"`
	WithoutDatasets *bool     `yaml:"without_datasets"`
	Pos             positions `yaml:"-"`
}

type rawReadYourWrites struct {
	Scope   *string        `yaml:"scope,shorthand"`
	MaxWait *time.Duration `yaml:"max_wait,allowzero"`
	Pos     positions      `yaml:"-"`
}

type rawDuckDB struct {
	MemoryLimit   *ByteSize `yaml:"memory_limit"`
	TempDirectory *string   `yaml:"temp_directory"`
	Pos           positions `yaml:"-"`
}

type rawVerify struct {
	Enabled             *bool          `yaml:"enabled"`
	SampleRate          *string        `yaml:"sample_rate"`
	OriginTimePerMinute *time.Duration `yaml:"origin_time_per_minute"`
	Pos                 positions      `yaml:"-"`
}

type rawPointIndex struct {
	Enabled  *bool     `yaml:"enabled"`
	MaxBytes *ByteSize `yaml:"max_bytes"`
	Pos      positions `yaml:"-"`
}

type rawResultsCache struct {
	Enabled       *bool     `yaml:"enabled"`
	MaxBytes      *ByteSize `yaml:"max_bytes"`
	MaxEntryBytes *ByteSize `yaml:"max_entry_bytes"`
	Pos           positions `yaml:"-"`
}

type rawSnapshots struct {
	Enabled                    *bool             `yaml:"enabled"`
	Location                   *string           `yaml:"location"`
	BootstrapOnFailureBehavior *string           `yaml:"bootstrap_on_failure_behavior"`
	Params                     map[string]string `yaml:"params"`
	Pos                        positions         `yaml:"-"`
}

type rawDataset struct {
	From                *string           `yaml:"from"`
	Name                *string           `yaml:"name"`
	TimeColumn          *string           `yaml:"time_column"`
	TimeFormat          *string           `yaml:"time_format"`
	TimePartitionColumn *string           `yaml:"time_partition_column"`
	TimePartitionFormat *string           `yaml:"time_partition_format"`
	ReadyState          *string           `yaml:"ready_state"`
	Params              map[string]string `yaml:"params"`
	Acceleration        *rawAcceleration  `yaml:"acceleration"`
	Pos                 positions         `yaml:"-"`

	index int // position in the datasets list, from 0
}

type rawAcceleration struct {
	Enabled                 *bool             `yaml:"enabled"`
	Engine                  *string           `yaml:"engine"`
	Mode                    *string           `yaml:"mode"`
	RefreshMode             *string           `yaml:"refresh_mode"`
	RefreshCheckInterval    *time.Duration    `yaml:"refresh_check_interval"`
	RefreshCron             *string           `yaml:"refresh_cron"`
	RefreshSQL              *string           `yaml:"refresh_sql"`
	RefreshDataWindow       *time.Duration    `yaml:"refresh_data_window"`
	RefreshAppendOverlap    *time.Duration    `yaml:"refresh_append_overlap,allowzero"`
	MaxStaleness            *time.Duration    `yaml:"max_staleness"`
	RefreshOnStartup        *string           `yaml:"refresh_on_startup"`
	RefreshRetryEnabled     *bool             `yaml:"refresh_retry_enabled"`
	RefreshRetryMaxAttempts *int              `yaml:"refresh_retry_max_attempts"`
	RefreshJitterEnabled    *bool             `yaml:"refresh_jitter_enabled"`
	RefreshJitterMax        *time.Duration    `yaml:"refresh_jitter_max"`
	RetentionCheckEnabled   *bool             `yaml:"retention_check_enabled"`
	RetentionPeriod         *time.Duration    `yaml:"retention_period"`
	RetentionSQL            *string           `yaml:"retention_sql"`
	RetentionCheckInterval  *time.Duration    `yaml:"retention_check_interval"`
	OnZeroResults           *string           `yaml:"on_zero_results"`
	PrimaryKey              *[]string         `yaml:"primary_key"`
	ReadyState              *string           `yaml:"ready_state"`
	Snapshots               *string           `yaml:"snapshots"`
	SnapshotsTrigger        *string           `yaml:"snapshots_trigger"`
	SnapshotsTriggerThresh  *time.Duration    `yaml:"snapshots_trigger_threshold"`
	CachingSWR              *time.Duration    `yaml:"caching_stale_while_revalidate,allowzero"`
	CachingStaleIfError     *time.Duration    `yaml:"caching_stale_if_error,allowzero"`
	Params                  map[string]string `yaml:"params"`
	Pos                     positions         `yaml:"-"`
}

// positions maps each key given in a block to its line; the key "" is the
// line of the block itself. Keys of params blocks are stored as
// "params.<key>".
type positions map[string]int

// applyDefaults fills every unset setting with its default. It is the only
// place defaults live.
func (r *rawConfig) applyDefaults() {
	orDefault(&r.Origin)
	orDefault(&r.Server)
	orValue(&r.Server.Listen, DefaultServerListen)
	orValue(&r.Server.MaxMessageBytes, DefaultMaxMessageBytes)
	orValue(&r.Server.ShutdownGrace, DefaultShutdownGrace)
	orDefault(&r.Admin)
	orValue(&r.Admin.Listen, DefaultAdminListen)
	orDefault(&r.Runtime)
	orValue(&r.Runtime.DataDir, DefaultDataDir)
	orValue(&r.Runtime.ReadyState, ReadyOnLoad)
	orValue(&r.Runtime.RefreshConcurrency, DefaultRefreshConcurrency)
	orValue(&r.Runtime.PointReads, PointReadsOrigin)
	orDefault(&r.Auth)
	orValue(&r.Auth.Mode, AuthOrigin)
	orValue(&r.Auth.CacheTTL, DefaultAuthCacheTTL)
	orValue(&r.Auth.MaxStale, DefaultAuthMaxStale)
	orValue(&r.Auth.Persist, false)
	orValue(&r.Auth.OriginIdleTimeout, DefaultAuthOriginIdleTimeout)
	if s := r.Snapshots; s != nil {
		orValue(&s.Enabled, true)
		orValue(&s.BootstrapOnFailureBehavior, SnapshotFailureWarn)
	}
	for _, d := range r.Datasets {
		if d.Name == nil {
			if _, table, err := parseFrom(deref(d.From)); err == nil {
				d.Name = &table
			}
		}
		orDefault(&d.Acceleration)
		a := d.Acceleration
		// ready_state belongs to the dataset; acceleration.ready_state is
		// the older spelling. Whichever is given sets both.
		if a.ReadyState != nil {
			orValue(&d.ReadyState, *a.ReadyState)
		}
		orValue(&d.ReadyState, ReadyOnLoad)
		orValue(&a.ReadyState, *d.ReadyState)

		orValue(&a.Enabled, true)
		orValue(&a.Engine, EngineDuckDB)
		orValue(&a.Mode, ModeMemory)
		orValue(&a.RefreshMode, RefreshFull)
		orValue(&a.RefreshOnStartup, RefreshOnStartupAuto)
		orValue(&a.RefreshRetryEnabled, true)
		orValue(&a.RefreshJitterEnabled, false)
		orValue(&a.RetentionCheckEnabled, false)
		orValue(&a.OnZeroResults, ZeroResultsReturnEmpty)
		orValue(&a.Snapshots, SnapshotsDisabled)
		if *a.RefreshMode == RefreshSnapshot {
			orValue(&a.RefreshCheckInterval, DefaultSnapshotPollInterval)
		}
		if *a.RefreshMode == RefreshCaching {
			orValue(&a.RefreshCheckInterval, DefaultCachingTTL)
			orValue(&a.CachingSWR, *a.RefreshCheckInterval)
			orValue(&a.CachingStaleIfError, DefaultCachingStaleIfError)
		}
		if *a.RefreshJitterEnabled && a.RefreshCheckInterval != nil {
			orValue(&a.RefreshJitterMax, *a.RefreshCheckInterval/10)
		}
	}
}

// config converts a defaulted rawConfig to a Config.
func (r *rawConfig) config(file string) *Config {
	c := &Config{
		Origin: Origin{DSN: deref(r.Origin.DSN)},
		Server: Server{
			Listen:          deref(r.Server.Listen),
			MaxMessageBytes: deref(r.Server.MaxMessageBytes),
			ShutdownGrace:   deref(r.Server.ShutdownGrace),
			EventLoops:      r.Server.EventLoops,
		},
		Admin: Admin{Listen: deref(r.Admin.Listen), Token: deref(r.Admin.Token)},
		Runtime: Runtime{
			DataDir:    deref(r.Runtime.DataDir),
			ReadyState: deref(r.Runtime.ReadyState),

			RefreshConcurrency: deref(r.Runtime.RefreshConcurrency),
			PointReads:         deref(r.Runtime.PointReads),
			ResultsCache:       resultsCache(r.Runtime.ResultsCache),
			PointIndex:         pointIndex(r.Runtime.PointIndex),
			Verify:             verify(r.Runtime.Verify),
			ReadYourWrites:     readYourWrites(r.Runtime.ReadYourWrites),
			ReadyRequiresFresh: deref(r.Runtime.ReadyRequiresFresh),
			StatementStats:     statementStats(r.Runtime.StatementStats),
			DuckDB:             duckDB(r.Runtime.DuckDB),
		},
		Auth: Auth{
			Mode:              deref(r.Auth.Mode),
			CacheTTL:          deref(r.Auth.CacheTTL),
			MaxStale:          deref(r.Auth.MaxStale),
			Persist:           deref(r.Auth.Persist),
			OriginIdleTimeout: deref(r.Auth.OriginIdleTimeout),
		},
		file: file,
		keys: map[string]int{},
	}
	if t := r.Server.TLS; t != nil {
		c.Server.TLS = &TLS{CertFile: deref(t.CertFile), KeyFile: deref(t.KeyFile)}
	}
	if s := r.Snapshots; s != nil {
		c.Snapshots = &Snapshots{
			Enabled:                    deref(s.Enabled),
			Location:                   deref(s.Location),
			BootstrapOnFailureBehavior: deref(s.BootstrapOnFailureBehavior),
			Params:                     maps.Clone(s.Params),
			Line:                       s.Pos[""],
		}
	}
	addKeys(c.keys, "", r.Pos)
	addKeys(c.keys, "origin.", r.Origin.Pos)
	addKeys(c.keys, "server.", r.Server.Pos)
	if r.Server.TLS != nil {
		addKeys(c.keys, "server.tls.", r.Server.TLS.Pos)
	}
	addKeys(c.keys, "admin.", r.Admin.Pos)
	addKeys(c.keys, "runtime.", r.Runtime.Pos)
	addKeys(c.keys, "auth.", r.Auth.Pos)
	if r.Snapshots != nil {
		addKeys(c.keys, "snapshots.", r.Snapshots.Pos)
	}
	for _, d := range r.Datasets {
		c.Datasets = append(c.Datasets, d.dataset())
	}
	return c
}

// dataset converts a defaulted rawDataset to a Dataset.
func (d *rawDataset) dataset() *Dataset {
	a := d.Acceleration
	ds := &Dataset{
		From:                deref(d.From),
		Name:                deref(d.Name),
		TimeColumn:          deref(d.TimeColumn),
		TimeFormat:          deref(d.TimeFormat),
		TimePartitionColumn: deref(d.TimePartitionColumn),
		TimePartitionFormat: deref(d.TimePartitionFormat),
		ReadyState:          deref(d.ReadyState),
		Params:              maps.Clone(d.Params),
		Acceleration: Acceleration{
			Enabled:                     deref(a.Enabled),
			Engine:                      deref(a.Engine),
			Mode:                        deref(a.Mode),
			RefreshMode:                 deref(a.RefreshMode),
			RefreshCheckInterval:        deref(a.RefreshCheckInterval),
			RefreshCron:                 deref(a.RefreshCron),
			RefreshSQL:                  deref(a.RefreshSQL),
			RefreshDataWindow:           deref(a.RefreshDataWindow),
			RefreshAppendOverlap:        deref(a.RefreshAppendOverlap),
			MaxStaleness:                deref(a.MaxStaleness),
			RefreshOnStartup:            deref(a.RefreshOnStartup),
			RefreshRetryEnabled:         deref(a.RefreshRetryEnabled),
			RefreshRetryMaxAttempts:     deref(a.RefreshRetryMaxAttempts),
			RefreshJitterEnabled:        deref(a.RefreshJitterEnabled),
			RefreshJitterMax:            deref(a.RefreshJitterMax),
			RetentionCheckEnabled:       deref(a.RetentionCheckEnabled),
			RetentionPeriod:             deref(a.RetentionPeriod),
			RetentionSQL:                deref(a.RetentionSQL),
			RetentionCheckInterval:      deref(a.RetentionCheckInterval),
			OnZeroResults:               deref(a.OnZeroResults),
			PrimaryKey:                  deref(a.PrimaryKey),
			ReadyState:                  deref(a.ReadyState),
			Snapshots:                   deref(a.Snapshots),
			SnapshotsTrigger:            deref(a.SnapshotsTrigger),
			SnapshotsTriggerThreshold:   deref(a.SnapshotsTriggerThresh),
			CachingStaleWhileRevalidate: deref(a.CachingSWR),
			CachingStaleIfError:         deref(a.CachingStaleIfError),
			Params:                      maps.Clone(a.Params),
		},
		Line:  d.Pos[""],
		index: d.index,
		keys:  map[string]int{},
	}
	if schema, table, err := parseFrom(ds.From); err == nil {
		ds.Schema, ds.Table = schema, table
	}
	addKeys(ds.keys, "", d.Pos)
	addKeys(ds.keys, "acceleration.", a.Pos)
	return ds
}

// label names the dataset in problems found while decoding it: its name, or
// its table when the name is not given.
func (d *rawDataset) label() string {
	if d.Name != nil {
		return *d.Name
	}
	if _, table, err := parseFrom(deref(d.From)); err == nil {
		return table
	}
	return ""
}

// addKeys copies the positions of one block into dst under prefix.
func addKeys(dst map[string]int, prefix string, pos positions) {
	for k, line := range pos {
		if k == "" {
			// The line of the block's key, recorded by the parent, is
			// more useful than the line of its first entry.
			if block := strings.TrimSuffix(prefix, "."); block != "" {
				if _, ok := dst[block]; !ok {
					dst[block] = line
				}
			}
			continue
		}
		dst[prefix+k] = line
	}
}

// orDefault allocates *p when it is nil.
func orDefault[T any](p **T) {
	if *p == nil {
		*p = new(T)
	}
}

// orValue sets *p to v when it is nil.
func orValue[T any](p **T, v T) {
	if *p == nil {
		*p = &v
	}
}

// deref returns *p, or the zero value when p is nil.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// pointIndex is runtime.point_index with its defaults.
func pointIndex(r *rawPointIndex) PointIndex {
	c := PointIndex{Enabled: true, MaxBytes: DefaultPointIndexBytes}
	if r == nil {
		return c
	}
	if r.Enabled != nil {
		c.Enabled = *r.Enabled
	}
	if r.MaxBytes != nil {
		c.MaxBytes = int64(*r.MaxBytes)
	}
	c.Line = r.Pos[""]
	return c
}

// duckDB is runtime.duckdb as written (0 and "": the defaults, which
// depend on the machine and the data dir).
func duckDB(r *rawDuckDB) DuckDB {
	if r == nil {
		return DuckDB{}
	}
	d := DuckDB{TempDirectory: deref(r.TempDirectory), Line: r.Pos[""]}
	if r.MemoryLimit != nil {
		d.MemoryLimit = int64(*r.MemoryLimit)
		if d.MemoryLimit == 0 {
			d.MemoryLimit = -1 // written as 0: invalid (validate says why)
		}
	}
	return d
}

// verify is runtime.verify with its defaults.
func verify(r *rawVerify) Verify {
	v := Verify{SampleRate: DefaultVerifySampleRate, SampleRateText: "1%", OriginTimePerMinute: DefaultVerifyOriginTime}
	if r == nil {
		return v
	}
	if r.Enabled != nil {
		v.Enabled = *r.Enabled
	}
	if r.SampleRate != nil {
		v.SampleRateText = *r.SampleRate
		v.SampleRate = -1 // invalid until parsed (validate says why)
		if f, ok := parseRate(*r.SampleRate); ok {
			v.SampleRate = f
		}
	}
	if r.OriginTimePerMinute != nil {
		v.OriginTimePerMinute = *r.OriginTimePerMinute
	}
	v.Line = r.Pos[""]
	return v
}

// parseRate reads a rate written as a percentage ("1%", "0.5%") or a
// fraction ("0.01", "1").
func parseRate(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	pct := strings.HasSuffix(s, "%")
	f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(s, "%")), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	if pct {
		f /= 100
	}
	return f, f > 0 && f <= 1
}

// resultsCache is runtime.results_cache with its defaults.
func resultsCache(r *rawResultsCache) ResultsCache {
	c := ResultsCache{Enabled: true, MaxBytes: DefaultResultsCacheBytes, MaxEntryBytes: DefaultResultsCacheEntryBytes}
	if r == nil {
		return c
	}
	if r.Enabled != nil {
		c.Enabled = *r.Enabled
	}
	if r.MaxBytes != nil {
		c.MaxBytes = int64(*r.MaxBytes)
	}
	if r.MaxEntryBytes != nil {
		c.MaxEntryBytes = int64(*r.MaxEntryBytes)
	}
	c.Line = r.Pos[""]
	return c
}

func statementStats(r *rawStatementStats) StatementStats {
	v := StatementStats{Enabled: true, MaxStatements: DefaultMaxStatements}
	if r == nil {
		return v
	}
	if r.Enabled != nil {
		v.Enabled = *r.Enabled
	}
	if r.MaxStatements != nil {
		v.MaxStatements = *r.MaxStatements
	}
	v.WithoutDatasets = deref(r.WithoutDatasets)
	v.Line = r.Pos[""]
	return v
}

func readYourWrites(r *rawReadYourWrites) ReadYourWrites {
	v := ReadYourWrites{Scope: RYWSession, MaxWait: DefaultRYWMaxWait}
	if r == nil {
		return v
	}
	if r.Scope != nil {
		v.Scope = strings.ToLower(*r.Scope)
	}
	if r.MaxWait != nil {
		v.MaxWait = *r.MaxWait
	}
	v.Line = r.Pos[""]
	return v
}
