package admin

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/pgaccel/pgaccel/stmtstats"
)

// The statement statistics (runtime.statement_stats) on the admin port:
//
//	GET    /v1/statements  {"info": …, "statements": [stmtstats.Stat]}; ?sort=origin_time|total_time|calls,
//	                       ?limit=n, ?role=name
//	DELETE /v1/statements  forget them all (204)
//	GET    /v1/stats       totals by database, role and route (stmtstats.Total)
//	GET    /v1/advice      the advisor (stmtstats.Advice)

// statementsReply is GET /v1/statements' answer.
type statementsReply struct {
	Info       stmtstats.Info   `json:"info"`
	Statements []stmtstats.Stat `json:"statements"`
}

func (s *Server) noStats(w http.ResponseWriter) bool {
	if s.opts.Stats == nil {
		writeMessage(w, http.StatusNotFound, "statement statistics are off (runtime.statement_stats.enabled: false), or no dataset is accelerated")
		return true
	}
	return false
}

// filter reads ?sort, ?limit and ?role.
func filter(r *http.Request) (stmtstats.Filter, bool) {
	f := stmtstats.Filter{Sort: r.URL.Query().Get("sort"), Role: r.URL.Query().Get("role")}
	switch f.Sort {
	case "", "origin_time", "total_time", "calls":
	default:
		return f, false
	}
	if l := r.URL.Query().Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			return f, false
		}
		f.Limit = n
	}
	return f, true
}

func (s *Server) statements(w http.ResponseWriter, r *http.Request) {
	if s.noStats(w) {
		return
	}
	f, ok := filter(r)
	if !ok {
		writeMessage(w, http.StatusBadRequest, "sort is origin_time, total_time or calls; limit a number")
		return
	}
	writeJSON(w, statementsReply{Info: s.opts.Stats.Info(), Statements: nonNil(s.opts.Stats.Snapshot(f))})
}

func (s *Server) resetStatements(w http.ResponseWriter, _ *http.Request) {
	if s.noStats(w) {
		return
	}
	s.opts.Stats.Reset()
	s.log.Info().Msg("statement statistics reset (DELETE /v1/statements)")
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) totals(w http.ResponseWriter, r *http.Request) {
	if s.noStats(w) {
		return
	}
	writeJSON(w, nonNil(s.opts.Stats.Totals(stmtstats.Filter{Role: r.URL.Query().Get("role")})))
}

func (s *Server) advice(w http.ResponseWriter, _ *http.Request) {
	if s.noStats(w) {
		return
	}
	writeJSON(w, s.adviceNow())
}

// adviceNow is the advisor's answer now.
func (s *Server) adviceNow() stmtstats.Advice {
	a := stmtstats.Advise(s.opts.Stats.Snapshot(stmtstats.Filter{}), stmtstats.InputFrom(s.reg))
	a.Tables, a.Changes = nonNil(a.Tables), nonNil(a.Changes)
	return a
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// reloadConfig is POST /v1/reload: 200 with what changed; 409 when the
// new configuration needs a restart or is invalid (nothing changed then),
// 500 when part of it could not be applied.
func (s *Server) reloadConfig(w http.ResponseWriter, r *http.Request) {
	if s.opts.Reload == nil {
		writeMessage(w, http.StatusNotFound, "this pgaccel cannot reload its configuration")
		return
	}
	res, err := s.opts.Reload(r.Context())
	if err != nil {
		s.log.Warn().Err(err).Msg("configuration not reloaded (POST /v1/reload)")
		code := http.StatusConflict
		if res.Message != "" {
			code = http.StatusInternalServerError
			err = fmt.Errorf("%s Some of it failed: %w", res.Message, err)
		}
		writeMessage(w, code, err.Error())
		return
	}
	res.Added, res.Removed, res.Changed = nonNil(res.Added), nonNil(res.Removed), nonNil(res.Changed)
	writeJSON(w, res)
}
