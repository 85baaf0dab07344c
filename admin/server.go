package admin

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/refresh"
	"github.com/pgaccel/pgaccel/stmtstats"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
)

// Refresher is the refresh scheduler as the admin port uses it
// (refresh.Runner).
type Refresher interface {
	// Trigger starts an on-demand refresh and returns at once, replacing a
	// refresh of the dataset in progress.
	Trigger(dataset string) error
	// TriggerFull is Trigger for a full reload (an append dataset's
	// acceleration replaced by every row the source has).
	TriggerFull(dataset string) error
	// Progress reports a refresh running now.
	Progress(dataset string) (rows, estimate int64, running bool)
	// SetRefreshSQL replaces refresh_sql until restart.
	SetRefreshSQL(dataset, sql string) error
	// Replication reports a changes dataset's stream.
	Replication(dataset string) (refresh.ReplicationStatus, bool)
	// Slots lists the origin's replication slots named like pgaccel's;
	// DropSlot drops one no dataset uses.
	Slots(ctx context.Context) ([]refresh.SlotStatus, error)
	DropSlot(ctx context.Context, name string) error
}

// Options configure a Server.
type Options struct {
	// Token, when set, is required as "Authorization: Bearer <token>" by
	// every endpoint except /health and /v1/ready.
	Token string
	// RuntimeReadyState is runtime.ready_state: on_load (every dataset by
	// its own ready_state) or on_registration (ready once started).
	RuntimeReadyState string
	// Memory reports pgaccel's accounted memory (GET /v1/memory); nil:
	// the endpoint answers 404.
	Memory func(context.Context) MemoryStatus
	// ReadyRequiresFresh is runtime.ready_requires_fresh: not ready while
	// every dataset with a max_staleness is stale.
	ReadyRequiresFresh bool
	// CanLogIn, when set, reports whether a new client session could log
	// in now (GET /v1/ready?login=true): with auth.mode origin, whether
	// the origin answers.
	CanLogIn func(context.Context) bool
	// Stats, when set, are the statement statistics (statements.go).
	Stats *stmtstats.Store
	// Reload, when set, reads the config file again and applies its
	// datasets (POST /v1/reload).
	Reload func(context.Context) (ReloadResult, error)
}

// ReloadResult is what a reload did (POST /v1/reload).
type ReloadResult struct {
	Message string   `json:"message"`
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
	Changed []string `json:"changed"`
}

// MemoryStatus is pgaccel's accounted memory as GET /v1/memory returns
// it, in bytes: DuckDB's buffer pool (tables of mode memory, loads and
// applies in progress, query operators) and its limit, the point indexes'
// and the results cache's estimates and their budgets, and the sum. The
// Go heap beside them is in the go_memstats_* metrics.
type MemoryStatus struct {
	DuckDBBytes       int64 `json:"duckdb_bytes"`
	DuckDBLimitBytes  int64 `json:"duckdb_limit_bytes"`
	PointIndexBytes   int64 `json:"point_index_bytes"`
	PointIndexMax     int64 `json:"point_index_max_bytes"`
	ResultsCacheBytes int64 `json:"results_cache_bytes"`
	ResultsCacheMax   int64 `json:"results_cache_max_bytes"`
	TotalBytes        int64 `json:"total_bytes"`
	ProcessRSSBytes   int64 `json:"process_rss_bytes,omitempty"`
}

// Server is the admin HTTP port: health, readiness, dataset status,
// on-demand refresh, refresh_sql changes and metrics.
type Server struct {
	reg     *catalog.Registry
	refresh Refresher
	metrics *prometheus.Registry
	opts    Options
	log     zerolog.Logger
	srv     *http.Server
	done    chan error
}

// New builds the admin server; metrics is the process's private registry.
func New(reg *catalog.Registry, refresh Refresher, metrics *prometheus.Registry, log zerolog.Logger, opts Options) *Server {
	s := &Server{reg: reg, refresh: refresh, metrics: metrics, log: log, opts: opts, done: make(chan error, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", s.health)
	mux.HandleFunc("GET /v1/ready", s.ready)
	mux.HandleFunc("GET /v1/datasets", s.auth(s.datasets))
	mux.HandleFunc("POST /v1/datasets/{name}/acceleration/refresh", s.auth(s.refreshDataset))
	mux.HandleFunc("PATCH /v1/datasets/{name}/acceleration", s.auth(s.patchAcceleration))
	mux.HandleFunc("GET /v1/replication/slots", s.auth(s.slots))
	mux.HandleFunc("GET /v1/memory", s.auth(s.memory))
	mux.HandleFunc("DELETE /v1/replication/slots/{name}", s.auth(s.dropSlot))
	mux.HandleFunc("GET /{$}", s.pageAuth(s.statusPage))
	mux.HandleFunc("GET /status.css", s.statusCSS)
	mux.HandleFunc("POST /v1/reload", s.auth(s.reloadConfig))
	mux.HandleFunc("GET /v1/statements", s.auth(s.statements))
	mux.HandleFunc("DELETE /v1/statements", s.auth(s.resetStatements))
	mux.HandleFunc("GET /v1/stats", s.auth(s.totals))
	mux.HandleFunc("GET /v1/advice", s.auth(s.advice))
	mux.Handle("GET /metrics", s.auth(promhttp.HandlerFor(metrics, promhttp.HandlerOpts{Registry: metrics}).ServeHTTP))
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return s
}

// auth requires the bearer token, when one is configured.
func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	if s.opts.Token == "" {
		return h
	}
	want := []byte("Bearer " + s.opts.Token)
	return func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="pgaccel"`)
			writeMessage(w, http.StatusUnauthorized, "A valid bearer token is required (admin.token).")
			return
		}
		h(w, r)
	}
}

// Start serves on ln until Close.
func (s *Server) Start(ln net.Listener) {
	go func() {
		err := s.srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
}

// Close stops the server, letting requests in flight finish until ctx ends.
func (s *Server) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; serr != nil && err == nil {
		err = serr
	}
	return err
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// ready answers 200 "ready" when the runtime is ready, else 503 "not
// ready": not while shutting down; with runtime ready_state on_load, when
// every accelerated dataset is ready by its ready_state: on_load once it
// has been Ready (loaded, or loaded with nothing to accelerate) in this
// process, even if it is in Error since;
// on_registration at once; on_schema_resolved once the origin's schema of
// its table has been read. With ?login=true, also not while a new session
// could not log in (Options.CanLogIn).
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if r.URL.Query().Get("login") == "true" && s.opts.CanLogIn != nil && !s.opts.CanLogIn(r.Context()) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("not ready: new sessions cannot log in (the origin does not answer)"))
		return
	}
	if !s.isReady() {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("not ready"))
		return
	}
	_, _ = w.Write([]byte("ready"))
}

func (s *Server) isReady() bool {
	if s.reg.ShuttingDown() {
		return false
	}
	if s.opts.ReadyRequiresFresh && s.allStale(time.Now()) {
		return false
	}
	if s.opts.RuntimeReadyState == catalog.ReadyOnRegistration {
		return true
	}
	for _, name := range s.reg.Names() {
		d, ok := s.reg.Dataset(name)
		if !ok {
			continue // removed by a reload since Names
		}
		st, _ := s.reg.State(name)
		if !d.Acceleration.Enabled {
			continue
		}
		switch d.ReadyState {
		case catalog.ReadyOnRegistration:
		case catalog.ReadyOnSchemaResolved:
			if !st.SchemaResolved {
				return false
			}
		default:
			if !st.ReadyOnce {
				return false
			}
		}
	}
	return true
}

// allStale reports whether at least one dataset has a max_staleness and
// every such dataset holds data older than it (runtime.ready_requires_fresh).
func (s *Server) allStale(now time.Time) bool {
	bounded := false
	for _, name := range s.reg.Names() {
		d, ok := s.reg.Dataset(name)
		if !ok || !d.Acceleration.Enabled || d.Acceleration.MaxStaleness <= 0 {
			continue
		}
		bounded = true
		if !catalog.Stale(s.reg.DataAsOf(name), now, d.Acceleration.MaxStaleness) {
			return false
		}
	}
	return bounded
}

// DatasetStatus is one dataset as GET /v1/datasets returns it (the status
// fields with ?status=true); `pgaccel status` decodes it too.
type DatasetStatus struct {
	Name                string `json:"name"`
	From                string `json:"from"`
	AccelerationEnabled bool   `json:"acceleration_enabled"`
	RefreshMode         string `json:"refresh_mode,omitempty"`
	// With ?status=true:
	Status        string           `json:"status,omitempty"`
	LastRefresh   *time.Time       `json:"last_refresh,omitempty"`
	NextRefresh   *time.Time       `json:"next_refresh,omitempty"`
	Error         string           `json:"error_message,omitempty"`
	Rows          *int64           `json:"rows,omitempty"`
	RefreshStatus *RefreshProgress `json:"refresh_progress,omitempty"`
	// DataAsOf is a time before which every transaction committed at the
	// origin is in the data served, DataAgeSeconds how long ago that is;
	// MaxStalenessSeconds the dataset's max_staleness, and Stale whether
	// the data is older (its reads then go to the origin).
	DataAsOf            *time.Time `json:"data_as_of,omitempty"`
	DataAgeSeconds      *float64   `json:"data_age_seconds,omitempty"`
	MaxStalenessSeconds float64    `json:"max_staleness_seconds,omitempty"`
	Stale               bool       `json:"stale,omitempty"`
	// ColumnsNotAccelerated are the columns the acceleration leaves out,
	// with why: statements that read them go to the origin.
	ColumnsNotAccelerated []ColumnNotAccelerated `json:"columns_not_accelerated,omitempty"`
	// Collations are the accelerated text columns whose collation is not
	// bytewise: ordered by pgaccel under the locale, or at the origin,
	// with why.
	Collations []ColumnCollation `json:"collations,omitempty"`
	// Notes say what the status alone does not: a Ready dataset that
	// holds nothing, because none of its columns can be accelerated; an
	// append dataset that may hold rows the source no longer has.
	Notes []string `json:"notes,omitempty"`
	// Replication is where a changes dataset's change stream stands.
	Replication *Replication `json:"replication,omitempty"`
	// Snapshots are the acceleration snapshots the dataset serves and
	// last published.
	Snapshots *SnapshotsStatus `json:"snapshots,omitempty"`
	// Cache is a refresh_mode: caching dataset's answers in the results
	// cache.
	Cache *CacheStatus `json:"cache,omitempty"`
	// PointIndex is the dataset's point index (runtime.point_index), once
	// a point read of it was answered from the acceleration.
	PointIndex *PointIndexStatus `json:"point_index,omitempty"`
	// Storage is how the acceleration is stored (file bytes, live and
	// stored rows, the dead share rewrites reclaim).
	Storage *StorageStatus `json:"storage,omitempty"`
	// Verify is what shadow verification (runtime.verify) found of the
	// dataset's accelerated answers, once one was sampled.
	Verify *VerifyStatus `json:"verify,omitempty"`
}

// VerifyStatus is shadow verification in DatasetStatus: answers found
// equal to the origin's, different (their statements' shapes now go to the
// origin), and not compared (skipped), and the last difference.
type VerifyStatus struct {
	Equal           uint64     `json:"equal"`
	Differed        uint64     `json:"differed"`
	Skipped         uint64     `json:"skipped"`
	LastDifference  *time.Time `json:"last_difference,omitempty"`
	LastFingerprint string     `json:"last_difference_fingerprint,omitempty"`
	LastWhat        string     `json:"last_difference_detail,omitempty"`
}

// CacheStatus is a caching dataset's answers in DatasetStatus: how many
// are kept, hits and misses since start, the hit rate, and the oldest
// answer's age.
type CacheStatus struct {
	Entries          int     `json:"entries"`
	Hits             uint64  `json:"hits"`
	Misses           uint64  `json:"misses"`
	HitRate          float64 `json:"hit_rate"`
	OldestAgeSeconds float64 `json:"oldest_entry_age_seconds"`
}

// StorageStatus is a dataset's storage in DatasetStatus. StoredRows count
// the deleted rows not yet reclaimed; DeadShare is their share, which a
// rewrite of the table brings back to 0 when it passes 20 %.
type StorageStatus struct {
	FileBytes   int64      `json:"file_bytes"`
	LiveRows    int64      `json:"live_rows"`
	StoredRows  int64      `json:"stored_rows"`
	DeadShare   float64    `json:"dead_share"`
	Rewrites    int64      `json:"rewrites"`
	LastRewrite *time.Time `json:"last_rewrite,omitempty"`
	// RewritesDropped: rewrites of the file in the background whose
	// copy a write they could not catch up with made useless.
	RewritesDropped int64 `json:"rewrites_dropped"`
}

// PointIndexStatus is a dataset's point index in DatasetStatus: whether it
// holds the current data, its rows and estimated memory, its builds, and
// the point reads it answered (hits) or left to DuckDB (misses).
type PointIndexStatus struct {
	Current      bool       `json:"current"`
	Rows         int        `json:"rows"`
	Bytes        int64      `json:"bytes"`
	BuiltAt      *time.Time `json:"built_at,omitempty"`
	BuildSeconds float64    `json:"build_seconds"`
	Builds       uint64     `json:"builds"`
	Follows      uint64     `json:"follows"`
	Hits         uint64     `json:"hits"`
	Misses       uint64     `json:"misses"`
	Error        string     `json:"error,omitempty"`
}

// SnapshotsStatus is a dataset's acceleration snapshots in DatasetStatus.
type SnapshotsStatus struct {
	Served    *SnapshotRef `json:"served,omitempty"`
	Published *SnapshotRef `json:"published,omitempty"`
	// Error is the last failed snapshot operation (bootstrap, load,
	// create) and its cause, until one succeeds.
	Error string `json:"error,omitempty"`
}

// SnapshotRef is one acceleration snapshot: its id, when it was created
// and how old it is now, and its size.
type SnapshotRef struct {
	ID         string    `json:"id"`
	Created    time.Time `json:"created"`
	AgeSeconds float64   `json:"age_seconds"`
	Bytes      int64     `json:"bytes"`
}

func snapshotRef(s catalog.SnapshotInfo) *SnapshotRef {
	if s.ID == "" {
		return nil
	}
	return &SnapshotRef{ID: s.ID, Created: s.Created.UTC(), AgeSeconds: time.Since(s.Created).Seconds(), Bytes: s.Bytes}
}

// Replication is a changes dataset's stream in DatasetStatus.
type Replication struct {
	Slot        string `json:"slot"`
	Publication string `json:"publication"`
	AppliedLSN  string `json:"applied_lsn"`
	ServerLSN   string `json:"server_lsn"`
	LagMs       int64  `json:"lag_ms"`
	LagBytes    int64  `json:"lag_bytes"`
	SlotState   string `json:"slot_state,omitempty"`
	Streaming   bool   `json:"streaming"`
	// RetainedBytes is the WAL the slot holds at the origin, SafeWALBytes
	// what it may still fall behind before max_slot_wal_keep_size
	// invalidates it (-1: unlimited).
	RetainedBytes      int64  `json:"slot_retained_bytes"`
	SafeWALBytes       int64  `json:"slot_safe_wal_bytes"`
	MaxSlotWALKeepSize string `json:"max_slot_wal_keep_size,omitempty"`
	Transactions       int64  `json:"transactions_applied"`
	Inserts            int64  `json:"inserts_applied"`
	Updates            int64  `json:"updates_applied"`
	Deletes            int64  `json:"deletes_applied"`
	Reconnects         int64  `json:"reconnects"`
	Rebuilds           int64  `json:"rebuilds"`
}

// ColumnNotAccelerated is a column left out of an acceleration.
type ColumnNotAccelerated struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Reason string `json:"reason"`
}

// ColumnCollation is how a text column of a linguistic collation is
// ordered: by pgaccel's keys under Locale, or at the origin (OrderedAtOrigin
// says why).
type ColumnCollation struct {
	Name            string `json:"name"`
	Locale          string `json:"locale,omitempty"`
	OrderedAtOrigin string `json:"ordered_at_origin,omitempty"`
}

// RefreshProgress is a running refresh's progress in DatasetStatus.
type RefreshProgress struct {
	RowsLoaded    int64  `json:"rows_loaded"`
	RowsEstimated *int64 `json:"rows_estimated,omitempty"`
}

// datasets lists the datasets; with ?status=true, with their status,
// freshness, error, row count and the progress of a refresh running.
func (s *Server) datasets(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, s.datasetStatuses(r.URL.Query().Get("status") == "true"))
}

// datasetStatuses is GET /v1/datasets' answer (and the status page's).
func (s *Server) datasetStatuses(withStatus bool) []DatasetStatus {
	names := s.reg.Names()
	out := make([]DatasetStatus, 0, len(names))
	for _, name := range names {
		d, ok := s.reg.Dataset(name)
		if !ok {
			continue // removed by a reload since Names
		}
		st, _ := s.reg.State(name)
		j := DatasetStatus{Name: name, From: d.From, AccelerationEnabled: d.Acceleration.Enabled}
		if d.Acceleration.Enabled {
			j.RefreshMode = d.Acceleration.RefreshMode
		}
		if withStatus {
			j.Status = st.Status.Display()
			j.Error = st.Error
			if d.Acceleration.Enabled {
				if !st.LastRefresh.IsZero() {
					t := st.LastRefresh.UTC()
					j.LastRefresh = &t
				}
				if !st.NextRefresh.IsZero() {
					t := st.NextRefresh.UTC()
					j.NextRefresh = &t
				}
				rows := st.Rows
				j.Rows = &rows
				now := time.Now()
				if age, ok := st.ServedAge(d, now); ok {
					t, secs := st.DataAsOf.UTC(), age.Seconds()
					j.DataAsOf, j.DataAgeSeconds = &t, &secs
				}
				if b := d.Acceleration.MaxStaleness; b > 0 {
					j.MaxStalenessSeconds = b.Seconds()
					j.Stale = catalog.Stale(st.DataAsOf, now, b)
				}
				if rs, ok := s.refresh.Replication(name); ok {
					j.Replication = &Replication{Slot: rs.Slot, Publication: rs.Publication, AppliedLSN: rs.AppliedLSN, ServerLSN: rs.ServerLSN,
						LagMs: rs.LagMs, LagBytes: rs.LagBytes, SlotState: rs.SlotState, Streaming: rs.Streaming,
						Transactions: rs.Transactions, Inserts: rs.Inserts, Updates: rs.Updates, Deletes: rs.Deletes,
						Reconnects: rs.Reconnects, Rebuilds: rs.Rebuilds,
						RetainedBytes: rs.RetainedBytes, SafeWALBytes: rs.SafeWALBytes, MaxSlotWALKeepSize: rs.MaxSlotWALKeepSize}
				}
				if served, published := snapshotRef(st.SnapshotServed), snapshotRef(st.SnapshotPublished); served != nil || published != nil || st.SnapshotError != "" {
					j.Snapshots = &SnapshotsStatus{Served: served, Published: published, Error: st.SnapshotError}
				}
				if cs, ok := s.reg.CachingStatus(name); ok {
					j.Cache = &CacheStatus{Entries: cs.Entries, Hits: cs.Hits, Misses: cs.Misses, OldestAgeSeconds: cs.OldestAge.Seconds()}
					if total := cs.Hits + cs.Misses; total > 0 {
						j.Cache.HitRate = float64(cs.Hits) / float64(total)
					}
				}
				if ps, ok := s.reg.PointIndexStatus(name); ok {
					j.PointIndex = &PointIndexStatus{Current: ps.Current, Rows: ps.Rows, Bytes: ps.Bytes, BuildSeconds: ps.BuildSeconds,
						Builds: ps.Builds, Follows: ps.Follows, Hits: ps.Hits, Misses: ps.Misses, Error: ps.Error}
					if !ps.BuiltAt.IsZero() {
						t := ps.BuiltAt.UTC()
						j.PointIndex.BuiltAt = &t
					}
				}
				if ss, ok := s.reg.StorageStatus(name); ok {
					j.Storage = &StorageStatus{FileBytes: ss.FileBytes, LiveRows: ss.LiveRows, StoredRows: ss.StoredRows,
						DeadShare: ss.DeadShare, Rewrites: ss.Rewrites, RewritesDropped: ss.RewritesDropped}
					if !ss.LastRewrite.IsZero() {
						t := ss.LastRewrite.UTC()
						j.Storage.LastRewrite = &t
					}
				}
				if vs, ok := s.reg.VerifyStatus(name); ok {
					j.Verify = &VerifyStatus{Equal: vs.Equal, Differed: vs.Differed, Skipped: vs.Skipped,
						LastFingerprint: vs.LastFingerprint, LastWhat: vs.LastWhat}
					if !vs.LastDifference.IsZero() {
						t := vs.LastDifference.UTC()
						j.Verify.LastDifference = &t
					}
				}
				for _, c := range st.Columns {
					if !c.Accelerated {
						j.ColumnsNotAccelerated = append(j.ColumnsNotAccelerated, ColumnNotAccelerated{Name: c.Name, Type: c.TypeName, Reason: c.NotAccelerated})
						continue
					}
					if c.CollationLocale != "" || c.CollationNote != "" {
						cc := ColumnCollation{Name: c.Name, Locale: c.CollationLocale}
						if c.CollationLocale == "" {
							cc.OrderedAtOrigin = c.CollationNote
						}
						j.Collations = append(j.Collations, cc)
					}
				}
				j.Notes = notes(d, st)
				if n, est, running := s.refresh.Progress(name); running {
					j.RefreshStatus = &RefreshProgress{RowsLoaded: n}
					if est >= 0 {
						j.RefreshStatus.RowsEstimated = &est
					}
				}
			}
		}
		out = append(out, j)
	}
	return out
}

// NoteNothingToAccelerate is the note of a dataset none of whose columns
// can be accelerated.
const NoteNothingToAccelerate = "None of its columns can be accelerated (see columns_not_accelerated): it holds nothing, and every statement over it goes to the origin."

// notes are the notes of dataset d in st.
func notes(d *catalog.Dataset, st catalog.DatasetState) []string {
	var out []string
	if st.NothingToAccelerate {
		out = append(out, NoteNothingToAccelerate)
	}
	if d.Acceleration.RefreshMode == catalog.RefreshAppend {
		out = append(out, "refresh_mode: append adds and updates rows but never removes them, so the acceleration may hold rows the source has since deleted or truncated. "+
			"A full reload brings it back in line: pgaccel refresh -full "+d.Name+`, or POST /v1/datasets/`+d.Name+`/acceleration/refresh with {"refresh_mode": "full"}.`)
	}
	return out
}

// memory reports pgaccel's accounted memory.
func (s *Server) memory(w http.ResponseWriter, r *http.Request) {
	if s.opts.Memory == nil {
		writeMessage(w, http.StatusNotFound, "no memory accounting in this process")
		return
	}
	writeJSON(w, s.opts.Memory(r.Context()))
}

// slots lists the origin's replication slots named like pgaccel's, with
// whether a dataset of this pgaccel streams from each and the WAL it holds.
func (s *Server) slots(w http.ResponseWriter, r *http.Request) {
	slots, err := s.refresh.Slots(r.Context())
	if err != nil {
		writeMessage(w, http.StatusBadGateway, "cannot list the origin's replication slots: "+err.Error())
		return
	}
	writeJSON(w, slots)
}

// dropSlot drops a replication slot no dataset uses: 200, 404 when the
// origin has none of that name, 409 when it is in use, 400 when it is not
// named like pgaccel's.
func (s *Server) dropSlot(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	err := s.refresh.DropSlot(r.Context(), name)
	switch {
	case err == nil:
		writeMessage(w, http.StatusOK, "Replication slot "+name+" dropped.")
	case errors.Is(err, refresh.ErrNoSlot):
		writeMessage(w, http.StatusNotFound, err.Error())
	case errors.Is(err, refresh.ErrSlotInUse):
		writeMessage(w, http.StatusConflict, err.Error())
	case errors.Is(err, refresh.ErrNotPgaccelSlot):
		writeMessage(w, http.StatusBadRequest, err.Error())
	default:
		writeMessage(w, http.StatusBadGateway, err.Error())
	}
}

// refreshDataset starts a refresh of one dataset and answers 201 at once;
// the dataset's status shows its progress. The body may be empty, or
// {"refresh_mode": "full"} for a full reload (an append dataset's
// acceleration replaced by every row the source has); the dataset's own
// refresh_mode asks for an ordinary refresh.
func (s *Server) refreshDataset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	d, ok := s.reg.Dataset(name)
	if !ok {
		writeMessage(w, http.StatusNotFound, "Dataset "+name+" not found.")
		return
	}
	full, msg := refreshBody(w, r, d)
	if msg != "" {
		writeMessage(w, http.StatusBadRequest, msg)
		return
	}
	trigger, done := s.refresh.Trigger, "Dataset refresh triggered for "+name+"."
	if full {
		trigger, done = s.refresh.TriggerFull, "Dataset refresh triggered for "+name+" (refresh_mode: full: a full reload)."
	}
	if err := trigger(name); err != nil {
		code := http.StatusServiceUnavailable
		switch {
		case errors.Is(err, refresh.ErrUnknownDataset):
			code = http.StatusNotFound
		case errors.Is(err, refresh.ErrNotAccelerated), errors.Is(err, refresh.ErrNoOnDemand), errors.Is(err, refresh.ErrNoFullReload):
			code = http.StatusBadRequest
		}
		writeMessage(w, code, err.Error())
		return
	}
	writeMessage(w, http.StatusCreated, done)
}

// refreshBody reads the body of an on-demand refresh of d: full is true
// for {"refresh_mode": "full"}; msg says what is wrong with a body that is
// neither empty nor such an object.
func refreshBody(w http.ResponseWriter, r *http.Request, d *catalog.Dataset) (full bool, msg string) {
	const form = `The body must be empty or a JSON object {"refresh_mode": "full"} (a full reload)`
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		return false, form + ": " + err.Error()
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return false, ""
	}
	var body struct {
		RefreshMode *string `json:"refresh_mode"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return false, form + ": " + err.Error()
	}
	switch {
	case body.RefreshMode == nil:
		return false, ""
	case *body.RefreshMode == catalog.RefreshFull:
		return true, ""
	case *body.RefreshMode == d.Acceleration.RefreshMode:
		return false, ""
	}
	return false, fmt.Sprintf("refresh_mode %q: an on-demand refresh of dataset %s (refresh_mode: %s) may ask for refresh_mode full (a full reload) or %s (an ordinary refresh)",
		*body.RefreshMode, d.Name, d.Acceleration.RefreshMode, d.Acceleration.RefreshMode)
}

// patchAcceleration applies {"refresh_sql": "..."} until restart.
func (s *Server) patchAcceleration(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if _, ok := s.reg.Dataset(name); !ok {
		writeMessage(w, http.StatusNotFound, "Dataset "+name+" not found.")
		return
	}
	var body struct {
		RefreshSQL *string `json:"refresh_sql"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || body.RefreshSQL == nil {
		msg := `The body must be a JSON object {"refresh_sql": "SELECT ..."}`
		if err != nil {
			msg += ": " + err.Error()
		}
		writeMessage(w, http.StatusBadRequest, msg)
		return
	}
	if err := s.refresh.SetRefreshSQL(name, *body.RefreshSQL); err != nil {
		code := http.StatusBadRequest
		if errors.Is(err, refresh.ErrUnknownDataset) {
			code = http.StatusNotFound
		}
		writeMessage(w, code, err.Error())
		return
	}
	writeMessage(w, http.StatusOK, "refresh_sql of "+name+" updated until restart; a refresh has started.")
}

// writeJSON answers v, indented, with 200.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// writeMessage answers {"message": msg} with code.
func writeMessage(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}
