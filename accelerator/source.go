package accelerator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/pgdef"
)

// copySource is the table function behind a load: it decodes a binary COPY
// stream into the DataChunks DuckDB asks for.
//
// DuckDB calls FillChunk from up to maxThreads threads at once. Each call
// takes the next chunk's worth of tuples off the stream under a lock (a
// memcpy of the raw tuples into the thread's local buffer), then decodes
// them into its chunk without the lock, so that framing, decoding and
// DuckDB's inserting overlap. Using more than one thread also keeps
// DuckDB's calling thread working instead of spinning while a worker thread
// runs the pipeline.
type copySource struct {
	ctx     context.Context
	outs    []outColumn
	columns []catalog.ColumnInfo
	nfields int // columns in the stream
	// leftOut holds, per stream field, why the column is left out of the
	// acceleration: the first value of it the load met that its DuckDB type
	// cannot hold (unstorableError), with its row; nil while there is none.
	leftOut []atomic.Pointer[string]
	// asIs marks, per stream field, a column left out for a value its
	// DuckDB type cannot hold that it could hold as Postgres sends it
	// (LoadStats.HeldAsIs).
	asIs       []atomic.Bool
	maxThreads int

	mu       sync.Mutex // guards everything below
	tr       *tupleReader
	header   bool          // the stream's header has been read
	done     bool          // the trailer has been read
	sliceEnd int64         // stop taking tuples at this many bytes read (0: no limit)
	rows     int64         // rows taken off the stream
	progress *atomic.Int64 // when set, follows rows
	err      error         // the first error, returned to Load as is
}

// ErrData marks a load that failed on what the origin table holds (a value
// the decoder rejects, columns DuckDB cannot create): loading the same
// table again fails the same way, so it is no reason to retry. Values that
// are valid but that a column's DuckDB type cannot hold do not fail a load:
// the column is left out (see copySource.leaveOut).
var ErrData = errors.New("data the acceleration cannot load")

// dataError wraps an error of the table's data: errors.Is(err, ErrData).
type dataError struct{ err error }

func (e dataError) Error() string        { return e.err.Error() }
func (e dataError) Unwrap() error        { return e.err }
func (e dataError) Is(target error) bool { return target == ErrData }

// outColumn is one accelerated column: which stream field feeds it and how.
type outColumn struct {
	field     int // index in the COPY tuple
	name      string
	stageName string
	typ       colType
	write     writeFunc
}

// localState is one thread's batch: raw tuples and their field spans.
type localState struct {
	buf    []byte
	spans  []int32 // per tuple, per field: offset in buf (-1 NULL), length
	first  int64   // stream row number of the batch's first tuple, from 1
	ntuple int
}

// newCopySource plans a load of cols and returns the load table's column
// definitions.
func newCopySource(ctx context.Context, cols []ColumnSpec, r io.Reader, maxThreads int, asciiOnly bool) (*copySource, []string, error) {
	s := &copySource{
		ctx:        ctx,
		tr:         newTupleReader(r),
		nfields:    len(cols),
		maxThreads: max(maxThreads, 1),
		leftOut:    make([]atomic.Pointer[string], len(cols)),
		asIs:       make([]atomic.Bool, len(cols)),
	}
	var defs []string
	for i, c := range cols {
		t, ok := resolveType(c)
		s.columns = append(s.columns, columnInfo(c, ok))
		if !ok {
			continue
		}
		w, err := writerFor(t, asciiOnly)
		if err != nil {
			return nil, nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
		s.outs = append(s.outs, outColumn{field: i, name: c.Name, stageName: fmt.Sprintf("c%d", i), typ: t, write: w})
		defs = append(defs, quoteIdent(c.Name)+" "+t.duck)
	}
	if len(s.outs) == 0 {
		return nil, nil, dataError{errors.New("none of its columns has a type that can be accelerated")}
	}
	return s, defs, nil
}

// ColumnInfos implements duckdb.ParallelChunkTableSource: the staged columns.
func (s *copySource) ColumnInfos() []duckdb.ColumnInfo {
	infos := make([]duckdb.ColumnInfo, len(s.outs))
	for i, o := range s.outs {
		t, err := stageType(o.typ)
		if err != nil {
			panic(err) // resolveType only yields kinds stageType knows
		}
		infos[i] = duckdb.ColumnInfo{Name: o.stageName, T: t}
	}
	return infos
}

// Cardinality implements duckdb.ParallelChunkTableSource: unknown.
func (s *copySource) Cardinality() *duckdb.CardinalityInfo { return nil }

// Init implements duckdb.ParallelChunkTableSource.
func (s *copySource) Init() duckdb.ParallelTableSourceInfo {
	return duckdb.ParallelTableSourceInfo{MaxThreads: s.maxThreads}
}

// NewLocalState implements duckdb.ParallelChunkTableSource.
func (s *copySource) NewLocalState() any {
	return &localState{spans: make([]int32, 0, 2*s.nfields*duckdb.GetDataChunkCapacity())}
}

// FillChunk implements duckdb.ParallelChunkTableSource: it fills ch with
// the next tuples, or leaves it empty after the trailer.
func (s *copySource) FillChunk(ls any, ch duckdb.DataChunk) error {
	local := ls.(*localState)
	if err := s.take(local); err != nil {
		return err
	}
	if err := s.decode(local, ch); err != nil {
		s.fail(err)
		return err
	}
	return nil
}

// take moves up to a chunk's capacity of tuples off the stream into local.
func (s *copySource) take(local *localState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	local.buf, local.spans, local.ntuple = local.buf[:0], local.spans[:0], 0
	local.first = s.rows + 1
	if s.err != nil {
		return s.err
	}
	if s.done || s.sliceEnd > 0 && s.tr.read >= s.sliceEnd {
		return nil
	}
	if err := s.ctx.Err(); err != nil {
		s.err = err
		return err
	}
	if !s.header {
		if err := s.tr.readHeader(); err != nil {
			s.err = err
			return err
		}
		s.header = true
	}
	capacity := duckdb.GetDataChunkCapacity()
	for local.ntuple < capacity {
		n := len(local.spans)
		local.spans = local.spans[:n+2*s.nfields]
		spans := local.spans[n:]
		tuple, ok, err := s.tr.next(spans)
		if err != nil {
			s.err = fmt.Errorf("read copy row %d: %w", s.rows+1, err)
			return s.err
		}
		if !ok {
			local.spans = local.spans[:n]
			s.done = true
			break
		}
		base := int32(len(local.buf))
		local.buf = append(local.buf, tuple...)
		for i := 0; i < len(spans); i += 2 {
			if spans[i] >= 0 {
				spans[i] += base
			}
		}
		local.ntuple++
		s.rows++
	}
	if s.progress != nil {
		s.progress.Store(s.rows)
	}
	return nil
}

// decode writes local's tuples into ch.
func (s *copySource) decode(local *localState, ch duckdb.DataChunk) error {
	stride := 2 * s.nfields
	for row := range local.ntuple {
		spans := local.spans[row*stride : (row+1)*stride]
		for j := range s.outs {
			o := &s.outs[j]
			var err error
			if off := spans[2*o.field]; off < 0 {
				err = ch.SetValue(j, row, nil)
			} else {
				end := off + spans[2*o.field+1]
				err = o.write(ch, j, row, local.buf[off:end:end])
				if err != nil && isUnstorable(err) {
					if o.typ.kind == kindNumeric || o.typ.elem != nil && pgdef.ArrayElemPrintable(o.typ.elemOID) {
						s.asIs[o.field].Store(true)
					}
					s.leaveOut(o.field, fmt.Sprintf("row %d holds %s", local.first+int64(row), err))
					err = ch.SetValue(j, row, nil)
				}
			}
			if err != nil {
				return fmt.Errorf("column %s, row %d: %w", o.name, local.first+int64(row), dataError{err})
			}
		}
	}
	return ch.SetSize(local.ntuple)
}

// startSlice lets the next INSERT take about n more bytes of the stream
// (all of it when n is 0): at the first chunk boundary past them every
// thread gets an empty chunk, which ends the INSERT.
func (s *copySource) startSlice(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sliceEnd = 0
	if n > 0 {
		s.sliceEnd = s.tr.read + n
	}
}

// fail records err as the load's error unless one is recorded already.
func (s *copySource) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// result returns the rows taken, the bytes read, whether the trailer was
// reached and the first error.
func (s *copySource) result() (rows, bytes int64, done bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rows, s.tr.read, s.done, s.err
}

// leaveOut records why the column of a stream field is left out of the
// acceleration, unless a reason is recorded already. Its other values are
// still loaded, and NULL stands in the unstorable ones; queries that use
// the column go to the origin.
func (s *copySource) leaveOut(field int, why string) {
	s.leftOut[field].CompareAndSwap(nil, &why)
}

// heldAsIs names the columns asIs marks.
func (s *copySource) heldAsIs() []string {
	var names []string
	for i := range s.asIs {
		if s.asIs[i].Load() {
			names = append(names, s.columns[i].Name)
		}
	}
	return names
}

// markLeftOut marks the columns leaveOut recorded as not accelerated.
func (s *copySource) markLeftOut() {
	for i := range s.leftOut {
		if why := s.leftOut[i].Load(); why != nil {
			s.columns[i].Accelerated = false
			s.columns[i].NotAccelerated = *why
		}
	}
}
