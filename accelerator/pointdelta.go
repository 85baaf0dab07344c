package accelerator

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// Point indexes that follow a change stream. Every committed change batch
// gives its dataset a new data generation, and an index of an older one is
// never used; rebuilt from a scan each time, the index of a busy `changes`
// dataset was rebuilt over and over and answered almost no point read. So
// an Applier records the keys each commit deleted and put (pointDelta),
// and after the commit the engine's point indexes (PointIndexes.applied)
// move the dataset's index to the next generation: the deleted keys
// dropped, the put keys' rows read from DuckDB by key (the same Go values a
// build's scan gives) and set. A commit whose keys cannot be given (a
// TRUNCATE, a key of several columns or of a type the index does not key
// by, more than maxPointDelta puts) drops the index instead, which is then
// rebuilt as before.

// maxPointDelta is the most put keys a commit may have for the point index
// to follow it; beyond, a rebuild's scan is cheaper than the lookups.
const maxPointDelta = 20_000

// pointDelta is what one commit did to the keys of a dataset.
type pointDelta struct {
	lost bool                // the keys cannot be given: drop the index
	del  map[string]struct{} // key forms (AppendPointKey) deleted
	put  map[string]string   // key form -> the key's DuckDB literal
	// added: the puts are rows added beside the stored ones (an append
	// without a primary_key), not replacing them: a put key the index
	// holds already means the key is no longer unique, and the index goes.
	added bool
}

func (d *pointDelta) reset() { *d = pointDelta{} }

// note records one batch's changes (truncate: the table was emptied
// first).
func (a *Applier) notePointDelta(truncate bool, changes []Change) {
	d := &a.delta
	if d.lost {
		return
	}
	if truncate || len(a.keys) != 1 {
		d.lost = true
		return
	}
	if d.del == nil {
		d.del, d.put = map[string]struct{}{}, map[string]string{}
	}
	spec := a.specs[a.keys[0]]
	for _, c := range changes {
		var v []byte
		switch {
		case c.Delete:
			if len(c.Key) != 1 {
				d.lost = true
				return
			}
			v = c.Key[0]
		default:
			k := a.keys[0]
			v = c.Row[k]
			if k < len(c.Unchanged) && c.Unchanged[k] {
				d.lost = true // an unchanged (TOASTed) key: not at hand
				return
			}
		}
		form, lit, ok := pointKeyOf(spec, v)
		if !ok {
			d.lost = true
			return
		}
		if c.Delete {
			delete(d.put, form)
			d.del[form] = struct{}{}
		} else {
			d.put[form] = lit
		}
	}
	if len(d.put) > maxPointDelta {
		d.lost = true
	}
}

// Append merges and retention passes (swap.go) give their keys too, from
// DuckDB: a query of the key column cast to VARCHAR, collected by
// collectKeys.

// pointKeyColumn is the one key column a point index of the dataset keys
// by (indexColumns), or "" when there is none.
func pointKeyColumn(info *TableInfo) (string, ColumnSpec) {
	_, key := indexColumns(info.Columns)
	if len(key) != 1 {
		return "", ColumnSpec{}
	}
	for _, s := range info.Specs {
		if s.Name == key[0] {
			return key[0], s
		}
	}
	return "", ColumnSpec{}
}

// collectKeys runs q, whose one column is the key column c's values as
// VARCHAR, and records each as deleted (del) or put; it returns the rows.
func (d *pointDelta) collectKeys(ctx context.Context, tx *sql.Tx, query string, c ColumnSpec, del bool) (n int64, err error) {
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	if d.del == nil {
		d.del, d.put = map[string]struct{}{}, map[string]string{}
	}
	for rows.Next() {
		var s sql.NullString
		if err := rows.Scan(&s); err != nil {
			return n, err
		}
		n++
		if d.lost {
			continue
		}
		form, lit, ok := pointKeyOfText(c, s)
		switch {
		case !ok:
			d.lost = true
		case del:
			delete(d.put, form)
			d.del[form] = struct{}{}
		default:
			d.put[form] = lit
		}
		if len(d.put) > maxPointDelta || len(d.del) > maxPointDeltaDeletes {
			d.lost = true
		}
	}
	return n, rows.Err()
}

// exec runs the INSERT or DELETE q in tx and returns the rows it wrote;
// unless d is lost already, it reads their keys (column key, of spec) with
// RETURNING and records them as put or deleted (del).
func (d *pointDelta) exec(ctx context.Context, tx *sql.Tx, q, key string, spec ColumnSpec, del bool) (int64, error) {
	if d.lost {
		res, err := tx.ExecContext(ctx, q)
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}
	return d.collectKeys(ctx, tx, q+" RETURNING "+quoteIdent(key)+"::VARCHAR", spec, del)
}

// maxPointDeltaDeletes bounds the deleted keys a merge or retention pass
// hands the index (each is a map entry here, and a removal there).
const maxPointDeltaDeletes = 1_000_000

// pointKeyOfText is pointKeyOf of a key value given as DuckDB's VARCHAR
// cast of it.
func pointKeyOfText(c ColumnSpec, s sql.NullString) (form, lit string, ok bool) {
	t, held := resolveType(c)
	if !held || !s.Valid {
		return "", "", false
	}
	var b []byte
	switch t.kind {
	case kindInt2, kindInt4, kindInt8:
		n, err := strconv.ParseInt(s.String, 10, 64)
		if err != nil {
			return "", "", false
		}
		switch t.kind {
		case kindInt2:
			b = binary.BigEndian.AppendUint16(nil, uint16(n))
		case kindInt4:
			b = binary.BigEndian.AppendUint32(nil, uint32(n))
		default:
			b = binary.BigEndian.AppendUint64(nil, uint64(n))
		}
	case kindText:
		b = []byte(s.String)
	case kindUUID:
		h, err := hex.DecodeString(strings.ReplaceAll(s.String, "-", ""))
		if err != nil || len(h) != 16 {
			return "", "", false
		}
		b = h
	default:
		return "", "", false
	}
	return pointKeyOf(c, b)
}

// pointKeyOf is a key value's form in a point index (AppendPointKey of
// the value a query of the column returns) and its DuckDB literal, from
// its binary send form; ok is false for a type the index does not key by.
func pointKeyOf(c ColumnSpec, b []byte) (form, lit string, ok bool) {
	t, held := resolveType(c)
	if !held || b == nil {
		return "", "", false
	}
	var n int64
	switch t.kind {
	case kindInt2:
		if len(b) != 2 {
			return "", "", false
		}
		n = int64(int16(binary.BigEndian.Uint16(b)))
	case kindInt4:
		if len(b) != 4 {
			return "", "", false
		}
		n = int64(int32(binary.BigEndian.Uint32(b)))
	case kindInt8:
		if len(b) != 8 {
			return "", "", false
		}
		n = int64(binary.BigEndian.Uint64(b))
	case kindText:
		k, _ := AppendPointKey(nil, string(b))
		return string(k), quoteLiteral(string(b)), true
	case kindUUID:
		if len(b) != 16 {
			return "", "", false
		}
		k, _ := AppendPointKey(nil, b)
		return string(k), quoteLiteral(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])) + "::UUID", true
	default:
		return "", "", false
	}
	k, _ := AppendPointKey(nil, n)
	return string(k), strconv.FormatInt(n, 10), true
}

// pointsFollow hands the point indexes what a commit that refresh follows
// with one new data generation did to the dataset's keys. The caller holds
// the dataset's load lock.
func (e *Engine) pointsFollow(dataset string, d *pointDelta) {
	if l := e.points.Load(); l != nil {
		(*l).applied(dataset, d)
	}
}

// PointListener learns of each commit an Applier makes that changed rows:
// the keys it deleted and put, or lost (the index must go).
type pointListener interface {
	applied(dataset string, d *pointDelta)
}

// putRows reads the rows of keys (DuckDB literals of the one key column
// key) from the dataset's table, with columns, as a build's scan would.
func (e *Engine) putRows(ctx context.Context, dataset string, columns []string, key string, lits []string) ([][]any, error) {
	quoted := make([]string, len(columns))
	for i, c := range columns {
		quoted[i] = quoteIdent(c)
	}
	var out [][]any
	for start := 0; start < len(lits); start += 1000 {
		end := min(start+1000, len(lits))
		rows, err := e.Query(ctx, "SELECT "+strings.Join(quoted, ", ")+" FROM "+e.TableRef(dataset)+" WHERE "+quoteIdent(key)+
			" IN ("+strings.Join(lits[start:end], ", ")+")")
		if err != nil {
			return nil, fmt.Errorf("read the changed rows: %w", err)
		}
		for rows.Next() {
			out = append(out, append([]any(nil), rows.Values()...))
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("read the changed rows: %w", err)
		}
	}
	return out, nil
}
