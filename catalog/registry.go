package catalog

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Status is where a dataset's acceleration stands.
type Status string

// Dataset statuses, as the spec names them.
const (
	StatusInitializing Status = "initializing"  // registered, no data loaded yet
	StatusReady        Status = "ready"         // loaded and serving
	StatusRefreshing   Status = "refreshing"    // serving the previous data while a refresh runs
	StatusError        Status = "error"         // the last refresh failed; earlier data may still serve
	StatusDisabled     Status = "disabled"      // acceleration.enabled: false
	StatusShuttingDown Status = "shutting_down" // the process is stopping
)

// Display is the status as the admin API shows it (the spec's names).
func (s Status) Display() string {
	switch s {
	case StatusInitializing:
		return "Initializing"
	case StatusReady, StatusDisabled:
		return "Ready"
	case StatusRefreshing:
		return "Refreshing"
	case StatusError:
		return "Error"
	case StatusShuttingDown:
		return "ShuttingDown"
	}
	return string(s)
}

// ColumnInfo is one column of an acceleration: its origin name and type,
// and whether the acceleration holds it (types that cannot be kept exactly
// are left out, and queries that need them go to the origin).
type ColumnInfo struct {
	Name        string
	TypeOID     uint32
	TypeMod     int32
	TypeName    string // format_type() at the origin, e.g. "numeric(12,2)"
	Accelerated bool
	// NotAccelerated says why Accelerated is false: the column's type has
	// no exact DuckDB type, or the last load met a value its DuckDB type
	// cannot hold (e.g. "row 5 holds numeric NaN, which DECIMAL(12,2)
	// cannot hold").
	NotAccelerated string
	// HeldScale is, for a numeric column without a declared scale, the
	// display scale every value it holds has (the acceleration holds it
	// as DECIMAL(38, HeldScale)); nil otherwise.
	HeldScale *int
	// NumericText: a numeric column held as numeric_out's text, each value
	// with its own display scale (NaN and ±Infinity too); ValueScale is
	// the scale its values are read at where only they matter (nil: they
	// cannot be, so only the text is read). See pgdef.FuncNumericHeld.
	NumericText bool
	ValueScale  *int
	ValueWidth  int // the DECIMAL width the values are read at (0: 38)
	// ArrayBinary: an array column (of more dimensions, or lower bounds
	// other than 1) held as Postgres sends it, read only as it is.
	ArrayBinary bool
	// EnumLabels are, for a column of an enum type (or a domain over
	// one), the labels in the enum's sort order; the acceleration holds
	// each value as its label.
	EnumLabels []string
	// BinaryCollation is true when the column's values compare and sort
	// by their bytes at the origin (not collatable, or the C/POSIX
	// collation), as they do in DuckDB.
	BinaryCollation bool
	// CollationLocale: the column's collation is not bytewise, and its
	// order is the libc locale's of this name, which the acceleration
	// reproduces (accelerator.CollationKey): the planner orders and
	// range-compares its values by their keys. Empty otherwise;
	// CollationNote says why for a collation that is not reproduced.
	CollationLocale string
	CollationNote   string
	// CaseLocale: the column's LC_CTYPE is not C or POSIX, and its case
	// mapping (upper, lower, initcap, ILIKE) is the libc locale's of this
	// name, which the acceleration reproduces (accelerator.MapCase).
	// CaseNote says why not otherwise.
	CaseLocale string
	CaseNote   string
	// ASCIICase is true when the origin maps the column's case (upper,
	// lower, ILIKE) under the C or POSIX LC_CTYPE: ASCII letters only.
	ASCIICase bool
	// Unique: the column alone is the key of a unique index (a value finds
	// one row).
	Unique bool
	// KeyPart is the column's position (from 1) in the primary key, 0 when
	// it is not part of it.
	KeyPart int
	// RelOID, AttNum and TypLen are the origin table's oid, the column's
	// attnum and its type's typlen (a domain's base type's), as the
	// origin's RowDescription gives them; 0 when unknown.
	RelOID uint32
	AttNum int16
	TypLen int16
}

// DatasetState is the live state of one dataset, shared by the refresh
// scheduler (which writes it), the planner and the admin port (which read
// it). Values returned by the Registry are copies.
type DatasetState struct {
	Name        string
	Status      Status
	LastRefresh time.Time // when the last successful refresh completed
	NextRefresh time.Time // zero when nothing is scheduled
	Rows        int64     // rows in the acceleration after the last refresh
	Error       string    // the last refresh error, "" after a success
	// Loaded is true once the acceleration holds data it may serve.
	Loaded bool
	// NothingToAccelerate is true when the last load found that none of
	// the columns it reads can be accelerated: the load is complete, and
	// the dataset Ready, but it holds nothing (Loaded is false) and every
	// statement over it goes to the origin.
	NothingToAccelerate bool
	// Columns is the acceleration's schema after the last successful load.
	Columns []ColumnInfo
	// Generation increases with every swap of new data and every change
	// of the columns (what a statement over the dataset is described as).
	Generation uint64
	// DataGeneration increases with every change of the rows served: a
	// load or append, a change batch, a retention pass, a snapshot swap
	// (what an accelerated answer over the dataset holds).
	DataGeneration uint64
	// ReadyOnce is true once the dataset has been Ready (loaded and
	// serving, or loaded with nothing to accelerate) in this process;
	// runtime readiness counts it even after an error.
	ReadyOnce bool
	// SchemaResolved is true once the origin's columns of the table have
	// been read in this process (ready_state: on_schema_resolved).
	SchemaResolved bool
	// FallbackReady is true once FallbackFilter has been built for the
	// origin's columns (datasets with on_zero_results: use_source).
	FallbackReady bool
	// FallbackFilter is the Postgres predicate a use_source fallback adds
	// for the dataset (see Dataset.FallbackFilter); "" for none.
	FallbackFilter string
	// SubsetReady is true once SubsetFilter is known (built for the
	// origin's columns and run there once): until then point reads are
	// not sent to the origin.
	SubsetReady bool
	// SubsetFilter is the Postgres predicate of the origin rows the
	// acceleration holds (see Dataset.SubsetFilter); "" for all of them.
	SubsetFilter string
	// VerifyStamp is what the origin's statistics counters of the table
	// said when the acceleration last took all its rows while the table
	// did not change (a full load, runtime.verify on); "" when not known.
	// An answer of the acceleration is comparable to the origin's while
	// the counters still say the same (shadow verification).
	VerifyStamp string
	// SnapshotServed is the acceleration snapshot whose data the dataset
	// serves (bootstrapped, or followed with refresh_mode: snapshot), and
	// SnapshotPublished the last one it published; zero for none.
	SnapshotServed, SnapshotPublished SnapshotInfo
	// SnapshotError is the last failed snapshot operation of the dataset
	// (bootstrap, load, create) and its cause, "" once one succeeds.
	SnapshotError string
	// DataAsOf is a time before which every transaction committed at the
	// origin is in the data served: the start of the load or append
	// served, the snapshot's, the change stream's last caught-up moment;
	// zero when not known. Read-your-writes and max_staleness judge the
	// data by it.
	DataAsOf time.Time
}

// SnapshotInfo names an acceleration snapshot in a dataset's state.
type SnapshotInfo struct {
	ID      string
	Created time.Time
	Bytes   int64
}

// Servable reports whether queries may be answered from the acceleration.
func (s DatasetState) Servable() bool {
	return s.Loaded && s.Status != StatusDisabled
}

// Registry holds every configured dataset and its live state.
type Registry struct {
	mu           sync.RWMutex
	shuttingDown bool
	datasets     map[string]*Dataset
	states       map[string]*DatasetState
	byTable      map[string]string // "schema.table" -> dataset name
	// cachingStatus reports caching datasets' answers (SetCachingStatus),
	// pointStatus their point indexes (SetPointIndexStatus).
	cachingStatus reporter[CachingStatus]
	pointStatus   reporter[PointIndexStatus]
	verifyStatus  reporter[VerifyStatus]
	storage       reporter[StorageStatus]
	// version counts the changes of any dataset's state or configuration
	// (Version).
	version atomic.Uint64
	// applied is each dataset's applied WAL position (applied.go).
	applied map[string]*Applied
	// bounded: a dataset has a max_staleness (Bounded).
	bounded atomic.Bool
	// epoch counts the changes of the set of datasets or of a dataset's
	// configuration (a reload, a refresh_sql PATCH): Epoch.
	epoch atomic.Uint64
}

// Epoch returns a number that changes whenever a dataset is added or
// removed or its configuration replaced (not with its state): what was
// decided from the datasets' configuration alone is decided again.
func (r *Registry) Epoch() uint64 { return r.epoch.Load() }

// Version returns a number that changes with every change of a dataset's
// state or configuration: what was decided from them before may be
// decided again.
func (r *Registry) Version() uint64 { return r.version.Load() }

// NewRegistry registers the datasets of cfg, each initializing (or disabled).
func NewRegistry(cfg *Config) *Registry {
	r := &Registry{
		datasets: make(map[string]*Dataset),
		states:   make(map[string]*DatasetState),
		byTable:  make(map[string]string),
		applied:  make(map[string]*Applied),
	}
	for _, d := range cfg.Datasets {
		r.applied[d.Name] = &Applied{}
		r.bounded.Store(r.bounded.Load() || d.Acceleration.Enabled && d.Acceleration.MaxStaleness > 0)
		st := &DatasetState{Name: d.Name, Status: StatusInitializing}
		if !d.Acceleration.Enabled {
			st.Status = StatusDisabled
		}
		r.datasets[d.Name] = d
		r.states[d.Name] = st
		r.byTable[d.Schema+"."+d.Table] = d.Name
	}
	return r
}

// Dataset returns the configuration of the named dataset.
func (r *Registry) Dataset(name string) (*Dataset, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	d, ok := r.datasets[name]
	return d, ok
}

// ByTable returns the dataset that accelerates the origin table schema.table.
func (r *Registry) ByTable(schema, table string) (*Dataset, DatasetState, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	name, ok := r.byTable[schema+"."+table]
	if !ok {
		return nil, DatasetState{}, false
	}
	return r.datasets[name], r.states[name].clone(), true
}

// State returns a copy of the named dataset's state.
func (r *Registry) State(name string) (DatasetState, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	st, ok := r.states[name]
	if !ok {
		return DatasetState{}, false
	}
	return st.clone(), true
}

// Generation returns the named dataset's swap generation (0 if unknown),
// without copying its state.
func (r *Registry) Generation(name string) uint64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if st, ok := r.states[name]; ok {
		return st.Generation
	}
	return 0
}

// DataGeneration returns the named dataset's data generation (0 if
// unknown), without copying its state.
func (r *Registry) DataGeneration(name string) uint64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if st, ok := r.states[name]; ok {
		return st.DataGeneration
	}
	return 0
}

// BumpDataGeneration gives the named dataset a new data generation: what
// was kept of its data before (the proxy's results cache) is not served
// again.
func (r *Registry) BumpDataGeneration(name string) {
	r.Update(name, func(st *DatasetState) { st.DataGeneration++ })
}

// CachingStatus is a refresh_mode: caching dataset's answers, for its
// status: how many the results cache keeps, hits and misses since start,
// and the oldest one's age.
type CachingStatus struct {
	Entries      int
	Hits, Misses uint64
	OldestAge    time.Duration
}

// SetCachingStatus installs what reports the caching datasets' answers
// (the proxy's results cache).
func (r *Registry) SetCachingStatus(fn func(dataset string) (CachingStatus, bool)) {
	r.cachingStatus.set(fn)
}

// CachingStatus returns the named caching dataset's answers; false when
// it is none or nothing reports them.
func (r *Registry) CachingStatus(name string) (CachingStatus, bool) {
	return r.cachingStatus.get(name)
}

// reporter holds what reports part of a dataset's status that another
// package keeps (installed once at start).
type reporter[T any] struct {
	mu sync.RWMutex
	fn func(dataset string) (T, bool)
}

func (p *reporter[T]) set(fn func(dataset string) (T, bool)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fn = fn
}

func (p *reporter[T]) get(name string) (T, bool) {
	p.mu.RLock()
	fn := p.fn
	p.mu.RUnlock()
	if fn == nil {
		var zero T
		return zero, false
	}
	return fn(name)
}

// PointIndexStatus is a dataset's point index (runtime.point_index), for
// its status.
type PointIndexStatus struct {
	// Current: an index of the dataset's current data generation is held.
	Current      bool
	Rows         int
	Bytes        int64
	BuiltAt      time.Time
	BuildSeconds float64 // how long the last build took
	Builds       uint64
	// Follows are the change batches applied to the index instead of a
	// rebuild (refresh_mode: changes).
	Follows uint64
	// Hits are point reads the index answered; Misses those it could not
	// (not built yet for the current data), which DuckDB answered.
	Hits, Misses uint64
	Error        string // why the last build failed, "" after a success
}

// VerifyStatus is what shadow verification (runtime.verify) found of a
// dataset's accelerated answers, for its status.
type VerifyStatus struct {
	Equal, Differed, Skipped uint64
	// The last difference: when, the statement's fingerprint (hex), and
	// what differed.
	LastDifference  time.Time
	LastFingerprint string
	LastWhat        string
}

// SetVerifyStatus installs what reports the datasets' verification (the
// proxy's Verifier).
func (r *Registry) SetVerifyStatus(fn func(dataset string) (VerifyStatus, bool)) {
	r.verifyStatus.set(fn)
}

// VerifyStatus returns what verification found of the named dataset's
// answers; false when nothing was verified.
func (r *Registry) VerifyStatus(name string) (VerifyStatus, bool) {
	return r.verifyStatus.get(name)
}

// StorageStatus is how a dataset's acceleration is stored, for its
// status: the file's bytes (mode file), the rows queries see and the rows
// stored, deleted ones not yet reclaimed included, and the rewrites that
// reclaimed them.
type StorageStatus struct {
	FileBytes            int64
	LiveRows, StoredRows int64
	DeadShare            float64
	Rewrites             int64
	LastRewrite          time.Time
	// RewritesDropped counts the file rewrites in the background whose
	// copy was dropped: a write they could not catch up with came.
	RewritesDropped int64
}

// SetStorageStatus installs what measures the datasets' storage (the
// engine's).
func (r *Registry) SetStorageStatus(fn func(dataset string) (StorageStatus, bool)) {
	r.storage.set(fn)
}

// StorageStatus measures the named dataset's storage now; false when it
// holds nothing or nothing measures it.
func (r *Registry) StorageStatus(name string) (StorageStatus, bool) {
	return r.storage.get(name)
}

// SetPointIndexStatus installs what reports the datasets' point indexes
// (the proxy's accelerator.PointIndexes).
func (r *Registry) SetPointIndexStatus(fn func(dataset string) (PointIndexStatus, bool)) {
	r.pointStatus.set(fn)
}

// PointIndexStatus returns the named dataset's point index; false when no
// point read of it was answered yet, or nothing reports them.
func (r *Registry) PointIndexStatus(name string) (PointIndexStatus, bool) {
	return r.pointStatus.get(name)
}

// States returns copies of every dataset's state, sorted by name.
func (r *Registry) States() []DatasetState {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]DatasetState, 0, len(r.states))
	for _, st := range r.states {
		out = append(out, st.clone())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names returns the dataset names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.datasets))
	for n := range r.datasets {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Update changes the named dataset's state under the registry's lock.
func (r *Registry) Update(name string, fn func(*DatasetState)) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, ok := r.states[name]
	if !ok {
		return false
	}
	fn(st)
	r.version.Add(1)
	if (st.Loaded || st.NothingToAccelerate) && st.Status == StatusReady {
		st.ReadyOnce = true
	}
	if r.shuttingDown && st.Status != StatusDisabled {
		st.Status = StatusShuttingDown
	}
	return true
}

// ShutDown marks every accelerated dataset ShuttingDown, for good.
func (r *Registry) ShutDown() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.shuttingDown = true
	r.version.Add(1)
	for _, st := range r.states {
		if st.Status != StatusDisabled {
			st.Status = StatusShuttingDown
		}
	}
}

// ShuttingDown reports whether ShutDown was called.
func (r *Registry) ShuttingDown() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.shuttingDown
}

func (s *DatasetState) clone() DatasetState {
	c := *s
	c.Columns = append([]ColumnInfo(nil), s.Columns...)
	return c
}

// ReplaceDataset replaces the configuration of the dataset of d's name
// (PATCH of refresh_sql); the table it accelerates must be the same.
func (r *Registry) ReplaceDataset(d *Dataset) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	old, ok := r.datasets[d.Name]
	if !ok || old.Schema != d.Schema || old.Table != d.Table {
		return false
	}
	r.datasets[d.Name] = d
	r.version.Add(1)
	r.epoch.Add(1)
	r.rebound()
	return true
}

// AddDataset registers a dataset (a reload), initializing (or disabled);
// false when one of its name or table is registered.
func (r *Registry) AddDataset(d *Dataset) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.datasets[d.Name]; ok {
		return false
	}
	if _, ok := r.byTable[d.Schema+"."+d.Table]; ok {
		return false
	}
	st := &DatasetState{Name: d.Name, Status: StatusInitializing}
	if !d.Acceleration.Enabled {
		st.Status = StatusDisabled
	}
	if r.shuttingDown && st.Status != StatusDisabled {
		st.Status = StatusShuttingDown
	}
	if r.applied[d.Name] == nil {
		r.applied[d.Name] = &Applied{}
	}
	r.datasets[d.Name] = d
	r.states[d.Name] = st
	r.byTable[d.Schema+"."+d.Table] = d.Name
	r.version.Add(1)
	r.epoch.Add(1)
	r.rebound()
	return true
}

// RemoveDataset forgets a dataset (a reload): from now on no statement
// resolves to it. Its Applied stays (a waiter of it times out).
func (r *Registry) RemoveDataset(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.datasets[name]
	if !ok {
		return false
	}
	delete(r.datasets, name)
	delete(r.states, name)
	delete(r.byTable, d.Schema+"."+d.Table)
	r.version.Add(1)
	r.epoch.Add(1)
	r.rebound()
	return true
}

// rebound sets bounded from the datasets; the registry is held.
func (r *Registry) rebound() {
	b := false
	for _, d := range r.datasets {
		b = b || d.Acceleration.Enabled && d.Acceleration.MaxStaleness > 0
	}
	r.bounded.Store(b)
}
