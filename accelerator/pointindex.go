package accelerator

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/pgaccel/pgaccel/catalog"
)

// Point indexes. A read that pins a dataset's primary key (SELECT ... FROM
// accounts WHERE aid = $1) touches at most one row, yet DuckDB spends
// hundreds of microseconds preparing and running any statement, several
// times what the origin spends answering it from its B-tree
// (bench/RESULTS.md, "Accelerated point reads"). A point index holds a
// dataset's rows in memory, as the Go values a DuckDB query of its columns
// returns, in a map by the key's values: such reads are then answered
// without DuckDB, and encoded by the same encoder, so their bytes are the
// ones DuckDB's answer would give.
//
// An index is built by one scan of the table on the dataset's first point
// read, and again on the first one after its rows change (a new data
// generation: a load, an append, a retention pass, a snapshot swap; a
// change batch moves it to the next generation instead, pointdelta.go); an index of another generation is never used, and until
// the new one is built DuckDB answers. Every index counts against one
// budget (runtime.point_index.max_bytes); a dataset that does not fit is
// not indexed. A build costs a scan: after one, the next build of the
// dataset waits ten times as long as it took, so a dataset that changes
// all the time (a busy CDC stream) costs at most a tenth of a core here
// and is otherwise answered by DuckDB.

// PointIndex is one dataset's rows by primary key, of one data generation.
// It is read-only once built and safe for concurrent use.
type PointIndex struct {
	cols  []ResultColumn
	pos   map[string]int // column name -> position in cols
	rows  [][]any
	byKey map[string]int32
	bytes int64
	// names and key are the columns read and the key's, for the changes
	// applied to the index (applied); free counts the rows of rows no
	// key refers to any more.
	names, key []string
	free       int
	// mu guards byKey and rows against applyTo, which changes them in
	// place (under PointIndexes.mu too); readers take it, not the
	// indexes' shared lock, so point reads of any datasets run side by
	// side.
	mu sync.RWMutex
}

// pointTooLargeWait is how long a dataset whose index did not fit the
// budget waits before the next build is tried.
const pointTooLargeWait = 10 * time.Minute

// ErrPointIndexTooLarge: the dataset's rows do not fit in the budget.
var ErrPointIndexTooLarge = errors.New("the dataset's rows do not fit in runtime.point_index.max_bytes")

// AppendPointKey appends the key form of one key value to buf: integers
// (any width), strings and uuids, the values a primary key of integer,
// text or uuid columns holds and that a point read pins it to. ok is
// false for other types and for NULL, which equals nothing.
func AppendPointKey(buf []byte, v any) ([]byte, bool) {
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case int32:
		n = int64(x)
	case int16:
		n = int64(x)
	case int8:
		n = int64(x)
	case int:
		n = int64(x)
	case string:
		buf = append(buf, 's')
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(x)))
		return append(buf, x...), true
	case []byte: // a uuid as a query returns it
		if len(x) != 16 {
			return buf, false
		}
		return append(append(buf, 'u'), x...), true
	case duckdb.UUID: // a uuid as a parameter decodes
		return append(append(buf, 'u'), x[:]...), true
	default:
		return buf, false
	}
	buf = append(buf, 'i')
	return binary.BigEndian.AppendUint64(buf, uint64(n)), true
}

// buildPointIndex reads columns of the table ref (a dataset's TableRef)
// into an index by key (names of columns, in the key's order), within
// maxBytes.
func (e *Engine) buildPointIndex(ctx context.Context, ref string, columns, key []string, maxBytes int64) (*PointIndex, error) {
	quoted := make([]string, len(columns))
	ix := &PointIndex{pos: make(map[string]int, len(columns)), byKey: make(map[string]int32), names: columns, key: key}
	for i, c := range columns {
		quoted[i] = quoteIdent(c)
		ix.pos[c] = i
	}
	keyPos := make([]int, len(key))
	for i, k := range key {
		p, ok := ix.pos[k]
		if !ok {
			return nil, fmt.Errorf("key column %s is not among the columns", k)
		}
		keyPos[i] = p
	}
	rows, err := e.Query(ctx, "SELECT "+strings.Join(quoted, ", ")+" FROM "+ref)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ix.cols = append([]ResultColumn(nil), rows.Columns()...)
	var kb []byte
	for rows.Next() {
		vals := append([]any(nil), rows.Values()...)
		kb = kb[:0]
		for _, p := range keyPos {
			var ok bool
			if kb, ok = AppendPointKey(kb, vals[p]); !ok {
				return nil, fmt.Errorf("key column %s holds a %T, which the point index does not key by", columns[p], vals[p])
			}
		}
		if _, dup := ix.byKey[string(kb)]; dup {
			return nil, errors.New("the key is not unique in the acceleration")
		}
		if len(ix.rows) == 1<<31-1 {
			return nil, ErrPointIndexTooLarge
		}
		ix.byKey[string(kb)] = int32(len(ix.rows))
		ix.rows = append(ix.rows, vals)
		// The row's values, its slice, and its map entry (key, value and
		// the map's own share).
		ix.bytes += valuesSize(vals) + 24 + int64(len(kb)) + 16 + 4 + 16
		if ix.bytes > maxBytes {
			return nil, ErrPointIndexTooLarge
		}
		if len(ix.rows)&4095 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return ix, nil
}

// valuesSize estimates the memory vals hold: each interface and what it
// points to.
func valuesSize(vals []any) int64 {
	var n int64
	for _, v := range vals {
		n += 16 + valueSize(v)
	}
	return n
}

func valueSize(v any) int64 {
	switch x := v.(type) {
	case nil, bool, int8, uint8:
		return 0
	case int16, int32, int64, uint16, uint32, uint64, float32, float64:
		return 8
	case string:
		return 16 + int64(len(x))
	case []byte:
		return 24 + int64(len(x))
	case time.Time:
		return 24
	case *big.Int:
		return 32 + int64(len(x.Bits()))*8
	case duckdb.Decimal:
		n := int64(48)
		if x.Value != nil {
			n += int64(len(x.Value.Bits())) * 8
		}
		return n
	case duckdb.Interval:
		return 16
	case []any:
		return 24 + valuesSize(x)
	case map[string]any:
		n := int64(48)
		for k, e := range x {
			n += 16 + int64(len(k)) + 16 + valueSize(e)
		}
		return n
	}
	return 64
}

// Rows returns the rows (none or one) of key, the key form of the key's
// values (AppendPointKey, in the key's order), with columns, which must
// be columns of the index.
func (ix *PointIndex) Rows(columns []string, key []byte) (*Rows, bool) {
	r := &Rows{cols: make([]ResultColumn, len(columns)), out: make([]any, len(columns)), memPos: make([]int, len(columns))}
	for i, c := range columns {
		p, ok := ix.pos[c]
		if !ok {
			return nil, false
		}
		r.cols[i] = ix.cols[p]
		r.memPos[i] = p
	}
	ix.mu.RLock()
	if i, ok := ix.byKey[string(key)]; ok {
		// Its own slice: a change applied later replaces ix.rows[i],
		// never the row's values.
		r.mem = [][]any{ix.rows[i]}
	}
	ix.mu.RUnlock()
	return r, true
}

// PointIndexOptions configure PointIndexes.
type PointIndexOptions struct {
	// MaxBytes is the budget of every index together.
	MaxBytes int64
	// State returns a dataset's columns and data generation, ok false
	// when it may not be served now.
	State func(dataset string) (cols []catalog.ColumnInfo, dataGen uint64, ok bool)
	// Generation returns a dataset's data generation (cheaper than State).
	Generation func(dataset string) uint64
	// OnBuilt, when set, learns of every build's outcome (for the log).
	OnBuilt func(dataset string, rows int, bytes int64, took time.Duration, err error)
}

// PointIndexes holds the point indexes of the engine's datasets, built on
// demand (see above). It is safe for concurrent use.
type PointIndexes struct {
	e    *Engine
	opts PointIndexOptions
	ctx  context.Context

	mu    sync.Mutex
	slots map[string]*pointSlot
	used  int64 // bytes of the indexes held
}

type pointSlot struct {
	ix  *PointIndex
	gen uint64
	// building: a build runs; notBefore: the next one may not start
	// before then.
	building  bool
	notBefore time.Time
	builtAt   time.Time
	took      time.Duration
	err       string
	builds    uint64
	hits      uint64 // reads answered
	misses    uint64 // point reads the index could not answer (not built)
	follows   uint64 // change batches applied to the index (applied)
	// tooLarge: the last build did not fit the budget, which was said.
	tooLarge bool
	// pending: change batches applied while a build runs (applied);
	// pendingLost: one could not be kept.
	pending     []pendingDelta
	pendingLost bool
	// forgotten: the dataset was removed (Forget); a build running then
	// keeps nothing.
	forgotten bool
}

// NewPointIndexes makes the point indexes of e. Builds stop when ctx ends.
func (e *Engine) NewPointIndexes(ctx context.Context, opts PointIndexOptions) *PointIndexes {
	p := &PointIndexes{e: e, opts: opts, ctx: ctx, slots: make(map[string]*pointSlot)}
	var l pointListener = p
	e.points.Store(&l)
	return p
}

// applied moves dataset's index, when it is of the current data
// generation, to the next one with what a committed change batch did (d),
// which the commit publishes next; otherwise, or when d cannot be
// followed, the index goes (a later read rebuilds it). While a build
// runs, the batches are kept (with their rows) and applied after it, in
// order, from the generation the build read: a table that changes all the
// time still gets a current index. It runs in the commit, under the
// dataset's load lock.
func (p *PointIndexes) applied(dataset string, d *pointDelta) {
	gen := p.opts.Generation(dataset)
	p.mu.Lock()
	s := p.slots[dataset]
	if s == nil || s.ix == nil && !s.building {
		p.mu.Unlock()
		return
	}
	if d.lost || !s.building && s.gen != gen {
		if s.building {
			s.pendingLost = true
		}
		p.drop(s)
		p.mu.Unlock()
		return
	}
	ix := s.ix
	p.mu.Unlock()
	var names []string
	var key string
	if ix != nil {
		names, key = ix.names, ix.key[0]
	} else if cols, _, ok := p.opts.State(dataset); ok {
		var keys []string
		names, keys = indexColumns(cols)
		if len(keys) == 1 {
			key = keys[0]
		}
	}
	var rows [][]any
	var err error
	if key == "" {
		err = errors.New("no one-column key")
	} else if len(d.put) > 0 {
		lits := make([]string, 0, len(d.put))
		for _, l := range d.put {
			lits = append(lits, l)
		}
		rows, err = p.e.putRows(p.ctx, dataset, names, key, lits)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s.building {
		if err != nil || len(s.pending) >= maxPendingDeltas {
			s.pendingLost = true
			return
		}
		s.pending = append(s.pending, pendingDelta{gen: gen, d: d, rows: rows})
		return
	}
	if s.ix != ix || s.gen != gen {
		return // rebuilt meanwhile: of a generation a read will judge
	}
	if err == nil {
		err = p.applyTo(ix, d, rows)
	}
	if err != nil {
		p.drop(s)
		s.err = "changes not followed: " + err.Error()
		return
	}
	s.gen = gen + 1
	s.follows++
}

// maxPendingDeltas bounds the batches kept while a build runs.
const maxPendingDeltas = 10_000

// pendingDelta is a batch applied while the index was being built.
type pendingDelta struct {
	gen  uint64 // the generation before it
	d    *pointDelta
	rows [][]any
}

// replay applies the batches kept during a build of s.ix (of generation
// s.gen) in order, under p.mu: those before s.gen are in the build's
// scan already (it read the generation before scanning; one applied
// again sets the same rows), a gap drops the index.
func (p *PointIndexes) replay(s *pointSlot) {
	pending, lost := s.pending, s.pendingLost
	s.pending, s.pendingLost = nil, false
	if s.ix == nil {
		return
	}
	if lost {
		p.drop(s)
		return
	}
	for _, pd := range pending {
		if pd.gen > s.gen { // a batch not seen
			p.drop(s)
			return
		}
		if err := p.applyTo(s.ix, pd.d, pd.rows); err != nil {
			p.drop(s)
			return
		}
		if pd.gen == s.gen {
			s.gen++
			s.follows++
		}
	}
}

// Forget lets dataset's index go, and its status (a reload removed the
// dataset).
func (p *PointIndexes) Forget(dataset string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.slots[dataset]; s != nil {
		p.drop(s)
		s.forgotten = true
		delete(p.slots, dataset)
	}
}

// drop lets s's index go (under p.mu).
func (p *PointIndexes) drop(s *pointSlot) {
	if s.ix != nil {
		p.used -= s.ix.bytes
		s.ix = nil
	}
}

// indexColumns are the accelerated columns an index holds and its key's,
// in the key's order.
func indexColumns(cols []catalog.ColumnInfo) (columns, key []string) {
	keyAt := map[int]string{}
	for _, c := range cols {
		if !c.Accelerated {
			continue
		}
		columns = append(columns, c.Name)
		if c.KeyPart > 0 {
			keyAt[c.KeyPart] = c.Name
		}
	}
	for i := 1; i <= len(keyAt); i++ {
		if k, ok := keyAt[i]; ok {
			key = append(key, k)
		} else {
			return columns, nil
		}
	}
	return columns, key
}

// applyTo changes ix (under p.mu) by d, the put keys' rows being rows
// (a put key without a row was evicted by retention: deleted).
func (p *PointIndexes) applyTo(ix *PointIndex, d *pointDelta, rows [][]any) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	keyPos := ix.pos[ix.key[0]]
	before := ix.bytes
	remove := func(k string) {
		if i, ok := ix.byKey[k]; ok {
			ix.bytes -= valuesSize(ix.rows[i]) + 24 + int64(len(k)) + 16 + 4 + 16
			ix.rows[i] = nil
			delete(ix.byKey, k)
			ix.free++
		}
	}
	for k := range d.del {
		remove(k)
	}
	if d.added {
		for k := range d.put {
			if _, ok := ix.byKey[k]; ok {
				return errors.New("an appended row's key is in the acceleration already: the key is not unique")
			}
		}
	}
	found := make(map[string]bool, len(rows))
	for _, vals := range rows {
		kb, ok := AppendPointKey(nil, vals[keyPos])
		if !ok {
			return fmt.Errorf("key column %s holds a %T", ix.key[0], vals[keyPos])
		}
		k := string(kb)
		found[k] = true
		remove(k)
		if len(ix.rows) == 1<<31-1 {
			return ErrPointIndexTooLarge
		}
		ix.byKey[k] = int32(len(ix.rows))
		ix.rows = append(ix.rows, vals)
		ix.bytes += valuesSize(vals) + 24 + int64(len(k)) + 16 + 4 + 16
	}
	for k := range d.put {
		if !found[k] {
			remove(k)
		}
	}
	ix.free = max(ix.free, 0)
	if ix.free > len(ix.rows)/2 && ix.free > 1024 {
		// Most slots are dead: pack the rows.
		packed := make([][]any, 0, len(ix.byKey))
		for k, i := range ix.byKey {
			ix.byKey[k] = int32(len(packed))
			packed = append(packed, ix.rows[i])
		}
		ix.rows, ix.free = packed, 0
	}
	p.used += ix.bytes - before
	if p.used > p.opts.MaxBytes {
		return ErrPointIndexTooLarge
	}
	return nil
}

// Rows answers a point read of dataset from its index: the rows (none or
// one) whose key form (AppendPointKey of the key's values in the key's
// order) is key, with columns. ok is false when the dataset's index of its
// current data generation is not built; Rows then starts building it when
// it may, and the caller asks DuckDB.
func (p *PointIndexes) Rows(dataset string, columns []string, key []byte) (*Rows, bool) {
	gen := p.opts.Generation(dataset)
	p.mu.Lock()
	s := p.slots[dataset]
	if s == nil {
		s = &pointSlot{}
		p.slots[dataset] = s
	}
	if s.ix != nil && s.gen == gen {
		ix := s.ix
		s.hits++
		p.mu.Unlock()
		// A batch applied meanwhile (applied) shows rows newer than gen,
		// committed already, never older ones.
		return ix.Rows(columns, key)
	}
	s.misses++
	if s.ix != nil && s.gen == gen+1 {
		// A change batch was applied to the index and its generation is
		// about to be published: DuckDB answers until it is.
		p.mu.Unlock()
		return nil, false
	}
	if !s.building && !time.Now().Before(s.notBefore) {
		s.building = true
		if s.ix != nil { // of another generation: never used again
			p.used -= s.ix.bytes
			s.ix = nil
		}
		go p.build(dataset, s)
	}
	p.mu.Unlock()
	return nil, false
}

// build builds dataset's index into s.
func (p *PointIndexes) build(dataset string, s *pointSlot) {
	start := time.Now()
	var ix *PointIndex
	cols, gen, ok := p.opts.State(dataset)
	err := errors.New("the dataset is not servable")
	if ok {
		columns, key := indexColumns(cols)
		p.mu.Lock()
		budget := p.opts.MaxBytes - p.used
		p.mu.Unlock()
		if len(key) == 0 {
			err = errors.New("the dataset has no primary key in the acceleration")
		} else {
			ix, err = p.e.buildPointIndex(p.ctx, p.e.TableRef(dataset), columns, key, budget)
		}
	}
	took := time.Since(start)
	p.mu.Lock()
	s.building = false
	s.builds++
	s.took = took
	// The next build waits ten times as long as this one took, at least
	// a second (a failure: a minute).
	wait := max(10*took, time.Second)
	quiet := false
	if err != nil {
		wait = max(wait, time.Minute)
		if errors.Is(err, ErrPointIndexTooLarge) {
			// Said once; tried again only now and then (rows may go).
			wait = max(wait, pointTooLargeWait)
			quiet = s.tooLarge
			s.tooLarge = true
		}
		s.err = err.Error()
		s.ix = nil
	} else if !s.forgotten {
		s.tooLarge = false
		s.err = ""
		s.ix, s.gen, s.builtAt = ix, gen, time.Now()
		p.used += ix.bytes
	}
	p.replay(s)
	s.notBefore = time.Now().Add(wait)
	p.mu.Unlock()
	if p.opts.OnBuilt != nil && !quiet {
		n, b := 0, int64(0)
		if ix != nil {
			n, b = len(ix.rows), ix.bytes
		}
		p.opts.OnBuilt(dataset, n, b, took, err)
	}
}

// Status returns dataset's index status; ok is false when no point read
// of it was seen.
func (p *PointIndexes) Status(dataset string) (catalog.PointIndexStatus, bool) {
	gen := p.opts.Generation(dataset)
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.slots[dataset]
	if s == nil {
		return catalog.PointIndexStatus{}, false
	}
	st := catalog.PointIndexStatus{Builds: s.builds, Hits: s.hits, Misses: s.misses, Follows: s.follows, Error: s.err, BuiltAt: s.builtAt, BuildSeconds: s.took.Seconds()}
	if s.ix != nil {
		st.Current = s.gen == gen
		st.Rows, st.Bytes = len(s.ix.byKey), s.ix.bytes
	}
	return st, true
}

// Bytes is the memory every index held now takes, as estimated.
func (p *PointIndexes) Bytes() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.used
}
