package app

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pgaccel/pgaccel/catalog"
)

// storageTimeout bounds one measurement of a dataset's storage (a count
// and DuckDB's storage info) for a status request or a scrape.
const storageTimeout = 5 * time.Second

// storageFresh is how long a measurement of a dataset's storage is given
// again (status requests and scrapes come often; a measurement counts the
// rows and reads DuckDB's storage info of the whole table).
const storageFresh = 5 * time.Second

// storageMeasured is the last measurement of each dataset's storage.
type storageMeasured struct {
	mu sync.Mutex
	m  map[string]storageReading
}

type storageReading struct {
	at time.Time
	s  catalog.StorageStatus
}

// storageStatus measures how a loaded dataset's acceleration is stored
// (a measurement less than storageFresh old is given again).
func (a *App) storageStatus(name string) (catalog.StorageStatus, bool) {
	if st, ok := a.Registry.State(name); !ok || !st.Loaded || st.NothingToAccelerate {
		return catalog.StorageStatus{}, false
	}
	a.storage.mu.Lock()
	r, ok := a.storage.m[name]
	a.storage.mu.Unlock()
	if ok && time.Since(r.at) < storageFresh {
		return r.s, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), storageTimeout)
	defer cancel()
	s, err := a.Engine.Storage(ctx, name)
	if err != nil {
		return catalog.StorageStatus{}, false
	}
	out := catalog.StorageStatus{FileBytes: s.FileBytes, LiveRows: s.LiveRows, StoredRows: s.StoredRows, DeadShare: s.DeadShare(),
		Rewrites: s.Rewrites, LastRewrite: s.LastRewrite, RewritesDropped: s.RewritesDropped}
	a.storage.mu.Lock()
	if a.storage.m == nil {
		a.storage.m = map[string]storageReading{}
	}
	a.storage.m[name] = storageReading{at: time.Now(), s: out}
	a.storage.mu.Unlock()
	return out, true
}

// storageCollector exports each loaded dataset's storage at scrape time.
type storageCollector struct{ a *App }

var (
	storageFileBytes = prometheus.NewDesc("pgaccel_dataset_file_bytes",
		"Bytes of a file-mode dataset's DuckDB file and write-ahead log.", []string{"dataset"}, nil)
	storageStoredRows = prometheus.NewDesc("pgaccel_dataset_stored_rows",
		"Rows a dataset's table stores, deleted rows not yet reclaimed included (dataset_acceleration_rows counts the live ones).", []string{"dataset"}, nil)
	storageDeadShare = prometheus.NewDesc("pgaccel_dataset_dead_share",
		"Share of a dataset's stored rows that are deleted and not yet reclaimed; past 0.2 the table is rewritten.", []string{"dataset"}, nil)
	storageRewrites = prometheus.NewDesc("pgaccel_dataset_rewrites_total",
		"Rewrites of a dataset's table that reclaimed its deleted rows, since the process started.", []string{"dataset"}, nil)
)

func (c storageCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{storageFileBytes, storageStoredRows, storageDeadShare, storageRewrites} {
		ch <- d
	}
}

func (c storageCollector) Collect(ch chan<- prometheus.Metric) {
	for _, name := range c.a.Registry.Names() {
		s, ok := c.a.storageStatus(name)
		if !ok {
			continue
		}
		ch <- prometheus.MustNewConstMetric(storageFileBytes, prometheus.GaugeValue, float64(s.FileBytes), name)
		ch <- prometheus.MustNewConstMetric(storageStoredRows, prometheus.GaugeValue, float64(s.StoredRows), name)
		ch <- prometheus.MustNewConstMetric(storageDeadShare, prometheus.GaugeValue, s.DeadShare, name)
		ch <- prometheus.MustNewConstMetric(storageRewrites, prometheus.CounterValue, float64(s.Rewrites), name)
	}
}

// processRSS is the process's resident set size (Linux), 0 when unknown.
func processRSS() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}
