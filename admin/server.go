package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/refresh"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
)

// Refresher starts an on-demand refresh of a dataset (refresh.Runner):
// it returns at once, replacing a refresh of the dataset in progress.
type Refresher interface {
	Trigger(dataset string) error
}

// Server is the admin HTTP port. This is its first cut: health, readiness,
// dataset status and metrics.
type Server struct {
	reg     *catalog.Registry
	refresh Refresher
	metrics *prometheus.Registry
	ctx     context.Context
	cancel  context.CancelFunc
	log     zerolog.Logger
	srv     *http.Server
	done    chan error
}

// New builds the admin server; metrics is the process's private registry.
func New(reg *catalog.Registry, refresh Refresher, metrics *prometheus.Registry, log zerolog.Logger) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{reg: reg, refresh: refresh, metrics: metrics, log: log, done: make(chan error, 1), ctx: ctx, cancel: cancel}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", s.health)
	mux.HandleFunc("GET /v1/ready", s.ready)
	mux.HandleFunc("GET /v1/datasets", s.datasets)
	mux.HandleFunc("POST /v1/datasets/{name}/acceleration/refresh", s.refreshDataset)
	mux.Handle("GET /metrics", promhttp.HandlerFor(metrics, promhttp.HandlerOpts{Registry: metrics}))
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return s
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
	s.cancel()
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

// ready answers 200 when every enabled dataset has loaded once, else 503.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	for _, st := range s.reg.States() {
		if st.Status == catalog.StatusDisabled {
			continue
		}
		if !st.Loaded {
			http.Error(w, "not ready: dataset "+st.Name+" has not loaded yet\n", http.StatusServiceUnavailable)
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ready\n"))
}

type datasetJSON struct {
	Name        string     `json:"name"`
	Status      string     `json:"status"`
	Rows        int64      `json:"rows"`
	LastRefresh *time.Time `json:"last_refresh,omitempty"`
	NextRefresh *time.Time `json:"next_refresh,omitempty"`
	Error       string     `json:"error_message,omitempty"`
}

func (s *Server) datasets(w http.ResponseWriter, r *http.Request) {
	states := s.reg.States()
	out := make([]datasetJSON, 0, len(states))
	for _, st := range states {
		d := datasetJSON{Name: st.Name, Status: string(st.Status), Rows: st.Rows, Error: st.Error}
		if !st.LastRefresh.IsZero() {
			t := st.LastRefresh
			d.LastRefresh = &t
		}
		if !st.NextRefresh.IsZero() {
			t := st.NextRefresh
			d.NextRefresh = &t
		}
		out = append(out, d)
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
}

// refreshDataset starts a refresh of one dataset and answers 201 at once,
// as Spice does; the dataset's status shows its progress.
func (s *Server) refreshDataset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if _, ok := s.reg.Dataset(name); !ok {
		writeMessage(w, http.StatusNotFound, "Dataset "+name+" not found.")
		return
	}
	if err := s.refresh.Trigger(name); err != nil {
		code := http.StatusServiceUnavailable
		switch {
		case errors.Is(err, refresh.ErrUnknownDataset):
			code = http.StatusNotFound
		case errors.Is(err, refresh.ErrNotAccelerated), errors.Is(err, refresh.ErrNoOnDemand):
			code = http.StatusBadRequest
		}
		writeMessage(w, code, err.Error())
		return
	}
	writeMessage(w, http.StatusCreated, "Dataset refresh triggered for "+name+".")
}

// writeMessage answers {"message": msg} with code.
func writeMessage(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}
