package proxy

import (
	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/pgdef"
	"github.com/pgaccel/pgaccel/planner"
	"github.com/pgaccel/pgaccel/proxy/encode"
)

// Point reads from a point index (accelerator.PointIndexes): a read the
// planner found to pin a dataset's primary key in the plainest shape
// (planner.PointLookup) is answered from the index's row, encoded by the
// encoder DuckDB's answer would go through, so the bytes are the same.
// The answer is not kept in the results cache: the index is as quick, and
// the keys of a uniform workload would push out the answers worth keeping.

// routePointIndex is SHOW pgaccel.last_route after such an answer.
const routePointIndex = "accelerated (point index)"

// pointRows returns the answer of d from its dataset's point index, or nil
// when the index cannot give it (none, or not of the current data; then
// DuckDB answers). params, formats and oids are an Execute's parameters
// (nil for a simple Query, whose keys are literals).
func (ss *session) pointRows(d planner.Decision, params [][]byte, formats []int16, oids []uint32) *accelerator.Rows {
	pl := d.Point
	if pl == nil || ss.accel.Points == nil {
		return nil
	}
	kb := ss.acc.pointKey[:0]
	for _, k := range pl.Keys {
		v := k.Value
		if k.Param > 0 {
			i := k.Param - 1
			if i >= len(params) || i >= len(oids) {
				return nil
			}
			if params[i] == nil {
				// NULL equals nothing: a key no row has.
				kb = append(kb, 'n')
				continue
			}
			if !pointParamType(oids[i], k) {
				return nil
			}
			val, err := encode.DecodeParam(oids[i], formatAt(formats, i), params[i], nil) // integers and text need no settings
			if err != nil {
				return nil // DuckDB's path decides, as for any parameter
			}
			v = val
		} else if k.UUID {
			// The literal's text, read as the origin reads a uuid.
			str, _ := v.(string)
			val, err := encode.DecodeParam(pgdef.OIDUUID, 0, []byte(str), nil)
			if err != nil {
				return nil
			}
			v = val
		}
		var ok bool
		if kb, ok = accelerator.AppendPointKey(kb, v); !ok {
			return nil
		}
	}
	ss.acc.pointKey = kb
	rows, ok := ss.accel.Points.Rows(pl.Dataset, pl.Columns, kb)
	if !ok {
		return nil
	}
	return rows
}

// pointParamType reports whether a parameter of type oid compares with
// key column k as its decoded value's equality does: an integer of any
// width with an integer column, a text or varchar with a text one, a uuid
// with a uuid. (A bpchar parameter would compare without its trailing
// spaces; a numeric one by value.)
func pointParamType(oid uint32, k planner.PointKey) bool {
	switch {
	case k.Int:
		return oid == pgdef.OIDInt2 || oid == pgdef.OIDInt4 || oid == pgdef.OIDInt8
	case k.UUID:
		return oid == pgdef.OIDUUID
	}
	return oid == pgdef.OIDText || oid == pgdef.OIDVarchar
}

// localRoute is SHOW pgaccel.last_route after r was answered.
func localRoute(r *localResult) string {
	if r.point {
		return routePointIndex
	}
	return "accelerated"
}

// describedText is the text whose origin description a simple Query's
// answer is headed by, as the describe cache keys it: for a point lookup
// of a known shape, the shape (every text of it is described alike, since
// its literals only pin the key), so that a new key needs no origin round
// trip; else the text itself.
func describedText(sql string, d planner.Decision) string {
	if d.Point != nil && d.Point.Shape != "" {
		return "\x01lookup\x00" + d.Point.Shape
	}
	return sql
}
