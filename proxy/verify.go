package proxy

import (
	"context"
	"errors"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// Shadow verification (runtime.verify). A share of the accelerated
// statements is run again at the origin, in the background, and the
// answers compared: the rows the client got (hashed as they were encoded,
// DataRow by DataRow) against the rows the origin gives the same
// statement, with the same parameters and result formats, under the
// session's search path and output settings (TimeZone, DateStyle,
// IntervalStyle, extra_float_digits, bytea_output). It runs as origin.dsn's
// role: a read is accelerated only when the role's privileges and row
// security cannot change its answer, so the answer is the same.
//
// An answer is comparable only while the tables it read are as the
// acceleration took them: each dataset's VerifyStamp (the table's
// statistics counters when a full load took all its rows while the table
// did not change) must equal the counters before and after the origin's
// run. Postgres flushes a backend's counters about a second after its
// commit, so before calling answers different the verifier waits and
// reads the counters again. Answers whose rows may legitimately come out
// otherwise are not compared: LIMIT, OFFSET, DISTINCT ON, window
// functions and order-sensitive aggregates (planner.Decision.Verifiable);
// and with an ORDER BY, rows in another order but the same rows count as
// ties (skipped), not as a difference.
//
// A difference is logged with the statement's fingerprint (never its
// parameters), counted (pgaccel_verify_total{result="differed"}), shown in
// the datasets' status, and the fingerprint is sent to the origin from
// then on (planner.Planner.Demote).

// VerifyConfig configures a Verifier.
type VerifyConfig struct {
	// Rate is the share of accelerated statements verified, in (0, 1].
	Rate float64
	// Budget is the origin time verification may take per minute.
	Budget time.Duration
	// Pool connects to the origin as origin.dsn's role.
	Pool *pgxpool.Pool
	// Registry has the datasets' tables and stamps.
	Registry *catalog.Registry
	// Demote sends a fingerprint to the origin from now on.
	Demote  func(fingerprint uint64)
	Logger  zerolog.Logger
	Metrics prometheus.Registerer
	// Confirm is how long the verifier waits before it reads the
	// counters again and calls answers different (DefaultVerifyConfirm).
	Confirm time.Duration
}

// DefaultVerifyConfirm is how long the verifier waits for the origin's
// statistics to show a change before it calls answers different.
const DefaultVerifyConfirm = 2 * time.Second

// verifyQueue bounds the samples waiting; more are skipped (reason busy).
const verifyQueue = 64

// maxVerifyRows bounds the answers verified (their rows are hashed as
// they are sent, and the origin's held while they are compared).
const maxVerifyRows = 100000

// Verifier runs samples of accelerated answers again at the origin.
type Verifier struct {
	cfg     VerifyConfig
	queue   chan *verifySample
	results *prometheus.CounterVec

	mu          sync.Mutex
	windowStart time.Time
	used        time.Duration
	stats       map[string]*catalog.VerifyStatus

	wg     sync.WaitGroup
	cancel context.CancelFunc
}

// NewVerifier returns a Verifier; Start runs it.
func NewVerifier(cfg VerifyConfig) *Verifier {
	if cfg.Confirm <= 0 {
		cfg.Confirm = DefaultVerifyConfirm
	}
	v := &Verifier{cfg: cfg, queue: make(chan *verifySample, verifyQueue), stats: map[string]*catalog.VerifyStatus{},
		results: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pgaccel_verify_total",
			Help: "Accelerated statements run again at the origin by shadow verification (runtime.verify), by result: equal (byte-identical answers), differed (the statement's shape goes to the origin from then on), skipped (not comparable: reason says why).",
		}, []string{"result", "reason"}),
	}
	if cfg.Metrics != nil {
		cfg.Metrics.MustRegister(v.results)
	}
	return v
}

// Start runs the verifier until Close.
func (v *Verifier) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	v.cancel = cancel
	v.wg.Add(1)
	go func() {
		defer v.wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case s := <-v.queue:
				v.run(ctx, s)
			}
		}
	}()
}

// Close stops the verifier; samples still queued are dropped.
func (v *Verifier) Close() {
	if v.cancel != nil {
		v.cancel()
	}
	v.wg.Wait()
}

// Status returns what verification found of a dataset's answers.
func (v *Verifier) Status(dataset string) (catalog.VerifyStatus, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	st, ok := v.stats[dataset]
	if !ok {
		return catalog.VerifyStatus{}, false
	}
	return *st, true
}

// verifySample is one accelerated answer to verify: what was asked, under
// which settings, and the answer's rows as hashes.
type verifySample struct {
	sql           string
	simple        bool
	params        [][]byte
	paramFormats  []int16
	paramOIDs     []uint32
	resultFormats []int16
	settings      [][2]string
	datasets      []string
	tables        []string // their quoted origin tables
	stamps        []string
	fingerprint   uint64
	ordered       bool

	rows      int64
	ordered64 uint64 // FNV-1a over the DataRows in order
	set64     uint64 // sum of the DataRows' FNV-1a: the rows in any order
	tooMany   bool
}

// row adds one DataRow message (as sent) to the answer's hashes.
func (s *verifySample) row(msg []byte) {
	s.rows++
	if s.rows > maxVerifyRows {
		s.tooMany = true
		return
	}
	h := fnv.New64a()
	_, _ = h.Write(msg)
	rh := h.Sum64()
	s.set64 += rh
	s.ordered64 = s.ordered64*1099511628211 ^ rh
}

// sample returns a verifySample of d, the accelerated decision of sql
// about to be answered, when this answer is to be verified: sampled, its
// shape verifiable, and every dataset it reads comparable (a stamp, the
// whole table held). nil otherwise.
func (ss *session) verifySample(d planner.Decision, sql string, simple bool) *verifySample {
	v := ss.accel.Verify
	if v == nil || !d.Verifiable || d.Fingerprint == 0 || d.Caching {
		return nil
	}
	if ss.acc.verifyRand == nil {
		ss.acc.verifyRand = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(ss.client.pid)))
	}
	if ss.acc.verifyRand.Float64() >= v.cfg.Rate {
		return nil
	}
	s := &verifySample{sql: sql, simple: simple, fingerprint: d.Fingerprint, ordered: d.Ordered, datasets: slices.Clone(d.Datasets)}
	for _, name := range d.Datasets {
		st, ok := v.cfg.Registry.State(name)
		ds, ok2 := v.cfg.Registry.Dataset(name)
		if !ok || !ok2 || st.VerifyStamp == "" || !st.SubsetReady || st.SubsetFilter != "" {
			v.skip(name, "not_comparable")
			return nil
		}
		s.stamps = append(s.stamps, st.VerifyStamp)
		s.tables = append(s.tables, quoteIdent(ds.Schema)+"."+quoteIdent(ds.Table))
	}
	if enc := ss.state.Param("client_encoding"); enc != "" && !strings.EqualFold(enc, "UTF8") {
		return nil
	}
	var path []string
	for _, p := range ss.acc.info.SearchPath {
		path = append(path, quoteIdent(p))
	}
	s.settings = [][2]string{
		{"search_path", strings.Join(path, ", ")},
		{"TimeZone", ss.state.Param("TimeZone")},
		{"DateStyle", ss.state.Param("DateStyle")},
		{"IntervalStyle", ss.state.Param("IntervalStyle")},
		{"extra_float_digits", ss.acc.info.ExtraFloatDigits},
		{"bytea_output", ss.acc.info.ByteaOutput},
	}
	return s
}

// submitVerify queues s, the sample of an answer sent whole (its rows
// counted), for the verifier.
func (ss *session) submitVerify(s *verifySample) {
	if s == nil {
		return
	}
	v := ss.accel.Verify
	if s.tooMany {
		v.count(s.datasets, "skipped", "too_large")
		return
	}
	select {
	case v.queue <- s:
	default:
		v.count(s.datasets, "skipped", "busy")
	}
}

// withParams records an extended-protocol sample's parameters and
// formats (copies: the portal's may be reused).
func (s *verifySample) withParams(params [][]byte, paramFormats []int16, oids []uint32, resultFormats []int16) *verifySample {
	if s == nil {
		return nil
	}
	s.params = make([][]byte, len(params))
	for i, p := range params {
		if p != nil {
			s.params[i] = slices.Clone(p)
		}
	}
	s.paramFormats, s.resultFormats = slices.Clone(paramFormats), slices.Clone(resultFormats)
	s.paramOIDs = slices.Clone(oids[:min(len(oids), len(params))])
	return s
}

// run verifies one sample.
func (v *Verifier) run(ctx context.Context, s *verifySample) {
	if !v.takeBudget() {
		v.count(s.datasets, "skipped", "budget")
		return
	}
	start := time.Now()
	result, reason := v.verify(ctx, s)
	v.spend(time.Since(start))
	v.count(s.datasets, result, reason)
}

// takeBudget reports whether the minute's origin time is not used up.
func (v *Verifier) takeBudget() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if now := time.Now(); now.Sub(v.windowStart) >= time.Minute {
		v.windowStart, v.used = now, 0
	}
	return v.used < v.cfg.Budget
}

func (v *Verifier) spend(d time.Duration) {
	v.mu.Lock()
	v.used += d
	v.mu.Unlock()
}

// remaining is the origin time left in the minute.
func (v *Verifier) remaining() time.Duration {
	v.mu.Lock()
	defer v.mu.Unlock()
	return max(v.cfg.Budget-v.used, 10*time.Millisecond)
}

// verify runs s at the origin and compares: equal, differed, or skipped
// with a reason.
func (v *Verifier) verify(ctx context.Context, s *verifySample) (result, reason string) {
	conn, err := v.cfg.Pool.Acquire(ctx)
	if err != nil {
		return "skipped", "origin_unavailable"
	}
	defer conn.Release()
	pc := conn.Conn().PgConn()
	if !v.unchanged(ctx, pc, s) {
		return "skipped", "changed"
	}
	rows, tag, originErr, err := v.atOrigin(ctx, pc, s)
	if err != nil {
		conn.Conn().Close(context.Background()) // whatever state it is in
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			return "skipped", "budget"
		}
		return "skipped", "origin_failed"
	}
	if !v.unchanged(ctx, pc, s) {
		return "skipped", "changed"
	}
	var o verifySample
	for _, r := range rows {
		msg, _ := (&pgproto3.DataRow{Values: r}).Encode(nil)
		o.row(msg)
	}
	switch {
	case originErr == nil && o.rows == s.rows && o.set64 == s.set64 && (!s.ordered || o.ordered64 == s.ordered64):
		return "equal", ""
	case originErr == nil && o.rows == s.rows && o.set64 == s.set64:
		return "skipped", "order_of_ties"
	}
	// Different, unless the table changed with a commit whose counters
	// were not flushed yet.
	select {
	case <-ctx.Done():
		return "skipped", "shutdown"
	case <-time.After(v.cfg.Confirm):
	}
	if !v.unchanged(ctx, pc, s) {
		return "skipped", "changed"
	}
	what := "rows differ"
	switch {
	case originErr != nil:
		what = "the origin raised " + originErr.Code + " (" + originErr.Message + ")"
	case o.rows != s.rows:
		what = "the origin answered " + strconv.FormatInt(o.rows, 10) + " rows, the acceleration " + strconv.FormatInt(s.rows, 10)
	}
	_ = tag
	v.differed(s, what)
	return "differed", ""
}

// unchanged reports whether every table s read still has the statistics
// counters its acceleration was stamped with.
func (v *Verifier) unchanged(ctx context.Context, pc *pgconn.PgConn, s *verifySample) bool {
	for i, table := range s.tables {
		res := pc.ExecParams(ctx, tableStampSQL, [][]byte{[]byte(table)}, nil, nil, nil).Read()
		if res.Err != nil || len(res.Rows) != 1 || string(res.Rows[0][0]) != s.stamps[i] {
			return false
		}
		if st, ok := v.cfg.Registry.State(s.datasets[i]); !ok || st.VerifyStamp != s.stamps[i] {
			return false // reloaded since: judged on its next sample
		}
	}
	return true
}

// tableStampSQL is refresh.TableStampSQL (proxy may not import refresh).
const tableStampSQL = `SELECT concat_ws('/', n_tup_ins, n_tup_upd, n_tup_del, n_live_tup) FROM pg_catalog.pg_stat_user_tables WHERE relid = pg_catalog.to_regclass($1)`

// atOrigin runs s at the origin in a read-only transaction under the
// session's settings, bounded by the budget left, and returns its rows,
// its command tag, and the origin's error of the statement (err is a
// failure of the run itself).
func (v *Verifier) atOrigin(ctx context.Context, pc *pgconn.PgConn, s *verifySample) (rows [][][]byte, tag string, originErr *pgconn.PgError, err error) {
	ctx, cancel := context.WithTimeout(ctx, v.remaining()+time.Second)
	defer cancel()
	if _, err := pc.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").ReadAll(); err != nil {
		return nil, "", nil, err
	}
	defer func() {
		_, _ = pc.Exec(context.Background(), "ROLLBACK").ReadAll()
	}()
	ms := strconv.FormatInt(max(v.remaining().Milliseconds(), 1), 10)
	set := append(slices.Clone(s.settings), [2]string{"statement_timeout", ms})
	for _, kv := range set {
		if kv[1] == "" {
			continue
		}
		if res := pc.ExecParams(ctx, "SELECT pg_catalog.set_config($1, $2, true)", [][]byte{[]byte(kv[0]), []byte(kv[1])}, nil, nil, nil).Read(); res.Err != nil {
			return nil, "", nil, res.Err
		}
	}
	var res *pgconn.Result
	if s.simple {
		all, err := pc.Exec(ctx, s.sql).ReadAll()
		if len(all) == 1 {
			res = all[0]
		} else if err == nil {
			return nil, "", nil, errors.New("not one result")
		} else {
			res = &pgconn.Result{Err: err}
		}
	} else {
		res = pc.ExecParams(ctx, s.sql, s.params, s.paramOIDs, s.paramFormats, s.resultFormats).Read()
	}
	var pe *pgconn.PgError
	if errors.As(res.Err, &pe) {
		if pe.Code == pgdef.QueryCanceled { // statement_timeout: the budget
			return nil, "", nil, context.DeadlineExceeded
		}
		return nil, "", pe, nil
	}
	if res.Err != nil {
		return nil, "", nil, res.Err
	}
	return res.Rows, res.CommandTag.String(), nil, nil
}

// differed records a difference: logged, shown in status, and the
// statement's shape demoted.
func (v *Verifier) differed(s *verifySample, what string) {
	fp := strconv.FormatUint(s.fingerprint, 16)
	v.cfg.Logger.Error().Str("fingerprint", fp).Strs("datasets", s.datasets).Str("difference", what).
		Msg("shadow verification: an accelerated answer differed from the origin's; statements of this shape go to the origin from now on")
	if v.cfg.Demote != nil {
		v.cfg.Demote(s.fingerprint)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, ds := range s.datasets {
		st := v.statsOf(ds)
		st.LastDifference = time.Now()
		st.LastFingerprint = fp
		st.LastWhat = what
	}
}

// count records a sample's result for its datasets.
func (v *Verifier) count(datasets []string, result, reason string) {
	v.results.WithLabelValues(result, reason).Inc()
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, ds := range datasets {
		st := v.statsOf(ds)
		switch result {
		case "equal":
			st.Equal++
		case "differed":
			st.Differed++
		default:
			st.Skipped++
		}
	}
}

// skip counts a statement not sampled because a dataset it reads is not
// comparable.
func (v *Verifier) skip(dataset, reason string) {
	v.results.WithLabelValues("skipped", reason).Inc()
	v.mu.Lock()
	v.statsOf(dataset).Skipped++
	v.mu.Unlock()
}

func (v *Verifier) statsOf(ds string) *catalog.VerifyStatus {
	st := v.stats[ds]
	if st == nil {
		st = &catalog.VerifyStatus{}
		v.stats[ds] = st
	}
	return st
}

// quoteIdent quotes an identifier for Postgres.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
