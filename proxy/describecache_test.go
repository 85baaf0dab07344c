package proxy

import (
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// A text the origin never described takes the description of one of the
// same description shape, by the rest of its key too (user, search path,
// generation, statement kind and parameter types); an invalidation (DDL)
// forgets them.
func TestDescribeCache_Shaped(t *testing.T) {
	var c describeCache
	rd := &pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{{Name: []byte("count"), DataTypeOID: 20}}}
	pd := &pgproto3.ParameterDescription{ParameterOIDs: []uint32{23}}
	key := func(sql, user string) string { return sql + "\x00" + user + "\x00public\x001" }
	c.put(key("SELECT count(*) FROM t WHERE a > 1", "u"), rd)
	c.put(stmtKey('P', key("SELECT count(*) FROM t WHERE a > $1 AND b = 'x'", "u"), nil), pd)
	c.put("\x01lookup\x00SELECT v FROM t WHERE id = ?i\x00u\x00public\x001", rd)
	if got := c.shaped(key("SELECT count(*) FROM t WHERE a > 500", "u")); got != rd {
		t.Errorf("same shape: %v", got)
	}
	if got := c.shaped(stmtKey('P', key("SELECT count(*) FROM t WHERE a > $1 AND b = 'yy'", "u"), nil)); got != pd {
		t.Errorf("same shape, parameters: %v", got)
	}
	for _, k := range []string{
		key("SELECT count(*) FROM t WHERE a > 500", "other"),                // another user
		key("SELECT count(*) FROM t WHERE a > '500'", "u"),                  // another kind of constant
		key("SELECT count(*) + 1 FROM t WHERE a > 500", "u"),                // another statement
		stmtKey('R', key("SELECT count(*) FROM t WHERE a > 500", "u"), nil), // a statement's, not a Query's
		stmtKey('P', key("SELECT count(*) FROM t WHERE a > $1 AND b = 'yy'", "u"), []uint32{20}),
	} {
		if got := c.shaped(k); got != nil {
			t.Errorf("%q: %v, want none", k, got)
		}
	}
	// Entries put after the index was built are found too.
	rd2 := &pgproto3.RowDescription{}
	c.put(key("SELECT v FROM t WHERE a = 'p'", "u"), rd2)
	if got := c.shaped(key("SELECT v FROM t WHERE a = 'q'", "u")); got != rd2 {
		t.Errorf("put after indexing: %v", got)
	}
	c.invalidate()
	if got := c.shaped(key("SELECT count(*) FROM t WHERE a > 500", "u")); got != nil {
		t.Errorf("after invalidate: %v", got)
	}
}
