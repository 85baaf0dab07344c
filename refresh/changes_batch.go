package refresh

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/jackc/pglogrepl"

	"github.com/pgaccel/pgaccel/accelerator"
)

// batch coalesces a stretch of the change stream per key into the final
// changes the Applier takes: the last change of a key wins, and values an
// update does not send (unchanged TOAST) are taken from the key's earlier
// change in the batch when it has them, else from the stored row. A key
// change (an UPDATE of key columns) deletes the old key and puts the new
// one, whose unchanged values come from the old key's row.
type batch struct {
	// cols maps each column of the origin's relation to the position in
	// the acceleration's columns (-1: not accelerated, or not selected).
	cols []int
	// keys are the relation columns of the primary key, in its order.
	keys []int
	// width is the number of acceleration columns.
	width int
	// full: the relation's replica identity is FULL, so updates and
	// deletes carry the whole old row.
	full bool

	ops                       map[string]*accelerator.Change
	truncate                  bool
	bytes                     int
	inserts, updates, deletes int
}

func newBatch() *batch { return &batch{ops: map[string]*accelerator.Change{}} }

// len is the number of keys with a change.
func (b *batch) len() int { return len(b.ops) }

// empty reports whether the batch holds nothing to apply.
func (b *batch) empty() bool { return len(b.ops) == 0 && !b.truncate }

// reset empties the batch for the next stretch.
func (b *batch) reset() {
	clear(b.ops)
	b.truncate, b.bytes, b.inserts, b.updates, b.deletes = false, 0, 0, 0, 0
}

// final returns the batch's changes.
func (b *batch) final() []accelerator.Change {
	out := make([]accelerator.Change, 0, len(b.ops))
	for _, c := range b.ops {
		out = append(out, *c)
	}
	return out
}

// errKeyUnknown: a change whose key the stream does not say (an unchanged
// TOASTed key value): the dataset is rebuilt.
var errKeyUnknown = fmt.Errorf("a change does not carry its row's key")

// keyOf returns the encoded key of a tuple and its key values.
func (b *batch) keyOf(t *pglogrepl.TupleData) (string, [][]byte, error) {
	vals := make([][]byte, len(b.keys))
	var enc []byte
	for i, k := range b.keys {
		if k >= len(t.Columns) {
			return "", nil, errKeyUnknown
		}
		c := t.Columns[k]
		switch c.DataType {
		case pglogrepl.TupleDataTypeBinary:
			vals[i] = c.Data
			enc = binary.BigEndian.AppendUint32(enc, uint32(len(c.Data)))
			enc = append(enc, c.Data...)
		case pglogrepl.TupleDataTypeNull:
			enc = binary.BigEndian.AppendUint32(enc, 0xffffffff)
		default:
			return "", nil, errKeyUnknown
		}
	}
	return string(enc), vals, nil
}

// row projects a new tuple on the acceleration's columns; old, when the
// replica identity is FULL, supplies the values the new tuple leaves
// unchanged.
func (b *batch) row(t, old *pglogrepl.TupleData) (row [][]byte, unchanged []bool, err error) {
	row = make([][]byte, b.width)
	for i, c := range t.Columns {
		if i >= len(b.cols) {
			return nil, nil, fmt.Errorf("a change has %d columns, the relation %d", len(t.Columns), len(b.cols))
		}
		pos := b.cols[i]
		if pos < 0 {
			continue
		}
		switch c.DataType {
		case pglogrepl.TupleDataTypeBinary:
			row[pos] = c.Data
			b.bytes += len(c.Data)
		case pglogrepl.TupleDataTypeNull:
		case pglogrepl.TupleDataTypeToast:
			if old != nil && i < len(old.Columns) && old.Columns[i].DataType == pglogrepl.TupleDataTypeBinary {
				row[pos] = old.Columns[i].Data
				continue
			}
			if unchanged == nil {
				unchanged = make([]bool, b.width)
			}
			unchanged[pos] = true
		default:
			return nil, nil, fmt.Errorf("a change sends column %d as %q, not in binary", i+1, c.DataType)
		}
	}
	return row, unchanged, nil
}

// insert takes an INSERT's new tuple.
func (b *batch) insert(t *pglogrepl.TupleData) error {
	key, _, err := b.keyOf(t)
	if err != nil {
		return err
	}
	row, unchanged, err := b.row(t, nil)
	if err != nil {
		return err
	}
	b.put(key, row, unchanged, key, nil)
	b.inserts++
	return nil
}

// update takes an UPDATE: its old key or row (nil when the key did not
// change and the identity is not FULL) and its new tuple.
func (b *batch) update(old, t *pglogrepl.TupleData) error {
	newKey, _, err := b.keyOf(t)
	if err != nil {
		return err
	}
	oldKey, oldVals := newKey, [][]byte(nil)
	if old != nil {
		if oldKey, oldVals, err = b.keyOf(old); err != nil {
			return err
		}
	}
	var full *pglogrepl.TupleData
	if b.full {
		full = old
	}
	row, unchanged, err := b.row(t, full)
	if err != nil {
		return err
	}
	if oldKey == newKey {
		b.put(newKey, row, unchanged, newKey, nil)
	} else {
		b.put(newKey, row, unchanged, oldKey, oldVals)
		b.del(oldKey, oldVals)
	}
	b.updates++
	return nil
}

// delete takes a DELETE's old key (or row).
func (b *batch) delete(old *pglogrepl.TupleData) error {
	key, vals, err := b.keyOf(old)
	if err != nil {
		return err
	}
	b.del(key, vals)
	b.deletes++
	return nil
}

// truncateAll takes a TRUNCATE of the table: every change before it is
// void.
func (b *batch) truncateAll() {
	clear(b.ops)
	b.truncate = true
}

// put records key's new row. Unchanged columns come from src's change in
// the batch when it is a put that has them, else from src's stored row
// (srcVals: its key values, nil when src is key).
func (b *batch) put(key string, row [][]byte, unchanged []bool, src string, srcVals [][]byte) {
	c := &accelerator.Change{Row: row, Unchanged: unchanged}
	if unchanged != nil {
		srcKeyVals := srcVals
		if base, ok := b.ops[src]; ok && !base.Delete {
			// The earlier change of src in this batch: its values, and
			// its own source for what it leaves unchanged.
			still := false
			for i, u := range unchanged {
				if !u {
					continue
				}
				if base.Unchanged == nil || !base.Unchanged[i] {
					row[i] = base.Row[i]
					unchanged[i] = false
				} else {
					still = true
				}
			}
			if !still {
				c.Unchanged = nil
			}
			srcKeyVals = base.Src
		}
		if c.Unchanged != nil {
			if srcKeyVals == nil {
				srcKeyVals = decodeKey(src)
			}
			c.Src = srcKeyVals
		}
	}
	b.ops[key] = c
}

// decodeKey returns the key values of an encoded key (keyOf).
func decodeKey(key string) [][]byte {
	var vals [][]byte
	p := []byte(key)
	for len(p) >= 4 {
		n := binary.BigEndian.Uint32(p)
		p = p[4:]
		if n == 0xffffffff {
			vals = append(vals, nil)
			continue
		}
		vals = append(vals, p[:n:n])
		p = p[n:]
	}
	return vals
}

// del records that key's row is gone.
func (b *batch) del(key string, vals [][]byte) {
	if vals == nil {
		vals = decodeKey(key)
	}
	b.ops[key] = &accelerator.Change{Delete: true, Key: vals}
}

// jsonStrings decodes a JSON array of strings.
func jsonStrings(b []byte, out *[]string) error {
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("decode %q: %w", b, err)
	}
	return nil
}
