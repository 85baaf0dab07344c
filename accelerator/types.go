package accelerator

import (
	"fmt"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/pgaccel/pgaccel/pgdef"
)

// maxDecimalWidth is DuckDB's widest DECIMAL; wider numerics stay at the
// origin.
const maxDecimalWidth = 38

// ColumnSpec is one origin column as pg_attribute and pg_type describe it.
// Domains are described by their base type: that is what the binary COPY
// stream and the origin's RowDescription carry.
type ColumnSpec struct {
	Name     string
	TypeOID  uint32
	TypeMod  int32  // atttypmod; -1 when none
	TypeName string // format_type(atttypid, atttypmod), e.g. "numeric(12,2)"
	// ElemOID is the element type of a one-dimensional array column
	// (pg_type.typelem of an array type), 0 for every other column.
	ElemOID uint32 `json:",omitempty"`
	// EnumLabels are, for a column of an enum type (or a domain over
	// one), the enum's labels in their sort order (pg_enum.enumsortorder).
	// The acceleration holds each value as its label; the planner orders
	// by the label's position here.
	EnumLabels []string `json:",omitempty"`
	// HeldScale is, for a numeric column without a declared scale, the
	// display scale its values share (refresh reads one value's scale):
	// the acceleration holds it as DECIMAL(38, HeldScale), and a value of
	// another scale (or NaN, ±Infinity) leaves the column out. nil for
	// every other column.
	HeldScale *int `json:",omitempty"`
	// NumericText: a numeric column (of any typmod) held as numeric_out's
	// text (VARCHAR), each value with its own display scale, NaN and
	// ±Infinity included. Set for the columns a DECIMAL cannot hold:
	// values of mixed display scales where none is declared, NaN or
	// ±Infinity, more than 38 digits (refresh loads again with it when a
	// load meets such a value: LoadStats.HeldAsIs), and for types
	// whose precision or scale DECIMAL has no room for.
	NumericText bool `json:",omitempty"`
	// ValueScale is, for a NumericText column, the greatest display scale
	// of its values at the last load when every one of them is finite and
	// fits DECIMAL(38, ValueScale); nil otherwise. The planner reads the
	// values through a guard that fails on a value it cannot hold
	// (pgdef.FuncNumericHeld), so a later value beyond it (a change) sends
	// the statement to the origin instead of rounding.
	ValueScale *int `json:",omitempty"`
	// ValueWidth is the DECIMAL width those values are read at: 18 when
	// they fit it (DuckDB casts text to a DECIMAL(18) about 150 times as
	// fast as to a DECIMAL(38)), else 38.
	ValueWidth int `json:",omitempty"`
	// ArrayBinary: an array column held as Postgres sends it (array_send's
	// binary form, a BLOB), for arrays a LIST cannot hold (more than one
	// dimension, lower bounds other than 1) of element types
	// pgdef.ArrayText prints. Read only as it is (planner/numerictext.go).
	ArrayBinary bool `json:",omitempty"`
	// BinaryCollation: the origin compares the column's values by bytes.
	BinaryCollation bool
	// CollationLocale is, for a column of a linguistic libc collation
	// whose order this process reproduces (CollationKey; established by
	// refresh against the origin), that collation's locale; empty
	// otherwise, with CollationNote saying why for a collation it does
	// not reproduce.
	CollationLocale string `json:",omitempty"`
	CollationNote   string `json:",omitempty"`
	// CollationVersion is the C library version CollationLocale was
	// established for: an acceleration kept on disk and opened by a
	// process on another version orders at the origin again.
	CollationVersion string `json:",omitempty"`
	// CaseLocale is, for a collatable column whose LC_CTYPE is not C or
	// POSIX, the libc locale whose case mapping (MapCase) this process
	// established as the origin's; CaseNote says why not otherwise.
	CaseLocale string `json:",omitempty"`
	CaseNote   string `json:",omitempty"`
	// ASCIICase: the origin maps the column's case under the C or POSIX
	// LC_CTYPE (ASCII letters only).
	ASCIICase bool `json:",omitempty"`
	// Key: the column is the origin table's whole primary key. The
	// acceleration indexes it (see keyIndex).
	Key bool `json:",omitempty"`
	// Unique: a unique index of the origin table has this column as its
	// only key (no predicate, no expression): a value finds one row.
	Unique bool `json:",omitempty"`
	// KeyPart is the column's position (from 1) in the origin table's
	// primary key, 0 when it is not part of it.
	KeyPart int `json:",omitempty"`
	// RelOID, AttNum and TypLen are what the origin's RowDescription says
	// of the column (pg_class.oid, pg_attribute.attnum, and the typlen of
	// its type, or of a domain's base type): the proxy describes a
	// statement by them while the origin cannot (planner.Describe). 0 in
	// a checkpoint written before they were read.
	RelOID uint32 `json:",omitempty"`
	AttNum int16  `json:",omitempty"`
	TypLen int16  `json:",omitempty"`
}

// kind is how a Postgres value is decoded from binary COPY and which DuckDB
// type holds it.
type kind uint8

const (
	kindNone kind = iota
	kindBool
	kindInt2
	kindInt4
	kindInt8
	kindFloat4
	kindFloat8
	kindNumeric // DECIMAL(p,s), p <= 38
	kindText    // text, varchar, name, json: the bytes as they are
	kindBpchar  // char(n): trailing spaces removed
	kindJSONB   // version byte 1, then the canonical text
	kindBytea
	kindDate
	kindTime
	kindTimestamp
	kindTimestamptz
	kindInterval
	kindUUID
	kindInet // inet and cidr: their printed text (pgdef.InetText)
	// kindNumericText: a numeric held as numeric_out's text
	// (pgdef.NumericText; ColumnSpec.NumericText).
	kindNumericText
	// kindArrayBinary: an array held as array_send's binary form
	// (ColumnSpec.ArrayBinary).
	kindArrayBinary
)

// colType is the resolved storage of one column: its kind, the DuckDB type
// that holds it, and for arrays the element's colType.
type colType struct {
	kind      kind
	duck      string // DuckDB type name, e.g. "DECIMAL(12,2)", "INTEGER[]"
	precision uint8  // numeric
	scale     uint8  // numeric
	elem      *colType
	elemOID   uint32 // the element OID the array's binary header must carry
	// uniform: a numeric without a declared scale, held at the one
	// scale its values share (ColumnSpec.HeldScale); a value of another
	// display scale cannot be held.
	uniform bool
}

// DuckDBType maps a Postgres column to the DuckDB type that keeps its values
// exactly, or ok=false when none does (the column is then left out of the
// acceleration and catalog.ColumnInfo.Accelerated is false).
//
//	Postgres                      DuckDB           notes
//	bool                          BOOLEAN
//	int2 / int4 / int8            SMALLINT / INTEGER / BIGINT
//	float4 / float8               FLOAT / DOUBLE   NaN, ±Infinity, -0 kept
//	numeric(p,s), p <= 38         DECIMAL(p,s)
//	numeric (no typmod)           DECIMAL(38,s)    when its values share the display
//	                                               scale s (HeldScale)
//	any other numeric, and        VARCHAR          numeric_out's text (NumericText:
//	NumericText                                    mixed scales, NaN, ±Infinity, wide)
//	text, varchar(n), name        VARCHAR
//	char(n), bpchar               VARCHAR          trailing spaces removed
//	json                          VARCHAR          the exact text
//	jsonb                         VARCHAR          Postgres's canonical jsonb text
//	bytea                         BLOB
//	date                          DATE             ±infinity kept
//	time                          TIME             24:00:00 leaves the column out
//	timestamp / timestamptz       TIMESTAMP / TIMESTAMPTZ  µs, ±infinity kept
//	interval                      INTERVAL         months, days, µs kept apart
//	uuid                          UUID
//	inet / cidr                   VARCHAR          inet_out's text (pgdef.InetText)
//	enum                          VARCHAR          the label; ordered by EnumLabels
//	one-dimensional arrays of     <type>[] (LIST)  multi-dimensional values or
//	the above                                      lower bounds other than 1:
//	                                               BLOB (array_send's form) for
//	                                               ArrayElemPrintable elements,
//	                                               else the column is left out;
//	                                               inet[], cidr[]: always BLOB
//	anything else                 -                not accelerated
func DuckDBType(c ColumnSpec) (duckType string, ok bool) {
	t, ok := resolveType(c)
	if !ok {
		return "", false
	}
	return t.duck, true
}

// resolveType is DuckDBType with the decoding details.
func resolveType(c ColumnSpec) (colType, bool) {
	if c.ElemOID != 0 && c.ArrayBinary && pgdef.ArrayElemPrintable(c.ElemOID) {
		return colType{kind: kindArrayBinary, duck: "BLOB", elemOID: c.ElemOID}, true
	}
	if c.ElemOID != 0 {
		elem, ok := scalarType(c.ElemOID, c.TypeMod)
		if !ok && pgdef.ArrayElemPrintable(c.ElemOID) {
			// numeric[] without a declared scale (or too wide): as sent.
			return colType{kind: kindArrayBinary, duck: "BLOB", elemOID: c.ElemOID}, true
		}
		if ok && elem.kind == kindInet {
			// inet[] and cidr[]: as sent (a LIST of inet_out's text
			// would order and compare as text, not as addresses).
			return colType{kind: kindArrayBinary, duck: "BLOB", elemOID: c.ElemOID}, true
		}
		if !ok {
			return colType{}, false
		}
		return colType{kind: kindNone, duck: elem.duck + "[]", elem: &elem, elemOID: c.ElemOID}, true
	}
	if len(c.EnumLabels) > 0 {
		// An enum travels as its label, in binary COPY as in text.
		return colType{kind: kindText, duck: "VARCHAR"}, true
	}
	if c.TypeOID == pgdef.OIDNumeric {
		text := colType{kind: kindNumericText, duck: "VARCHAR"}
		switch {
		case c.NumericText:
			return text, true
		case NeedsHeldScale(c):
			if c.HeldScale != nil && *c.HeldScale >= 0 && *c.HeldScale < maxDecimalWidth {
				s := *c.HeldScale
				return colType{kind: kindNumeric, duck: fmt.Sprintf("DECIMAL(%d,%d)", maxDecimalWidth, s), precision: maxDecimalWidth, scale: uint8(s), uniform: true}, true
			}
			return text, true // no finite value to take a scale from
		}
		if t, ok := scalarType(c.TypeOID, c.TypeMod); ok {
			return t, true
		}
		return text, true // wider than DECIMAL, or a scale it has no room for
	}
	return scalarType(c.TypeOID, c.TypeMod)
}

// NeedsHeldScale reports whether c is a numeric column without a declared
// scale: held only at the one display scale its values share
// (ColumnSpec.HeldScale, which refresh reads from the origin).
func NeedsHeldScale(c ColumnSpec) bool {
	return c.TypeOID == pgdef.OIDNumeric && c.TypeMod < 4 && c.ElemOID == 0
}

// scalarType resolves a non-array type. typmod is the column's atttypmod
// (for arrays it applies to the elements).
func scalarType(oid uint32, typmod int32) (colType, bool) {
	simple := func(k kind, duck string) (colType, bool) { return colType{kind: k, duck: duck}, true }
	switch oid {
	case pgdef.OIDBool:
		return simple(kindBool, "BOOLEAN")
	case pgdef.OIDInt2:
		return simple(kindInt2, "SMALLINT")
	case pgdef.OIDInt4:
		return simple(kindInt4, "INTEGER")
	case pgdef.OIDInt8:
		return simple(kindInt8, "BIGINT")
	case pgdef.OIDFloat4:
		return simple(kindFloat4, "FLOAT")
	case pgdef.OIDFloat8:
		return simple(kindFloat8, "DOUBLE")
	case pgdef.OIDNumeric:
		p, s, ok := numericTypmod(typmod)
		if !ok {
			return colType{}, false
		}
		return colType{kind: kindNumeric, duck: fmt.Sprintf("DECIMAL(%d,%d)", p, s), precision: uint8(p), scale: uint8(s)}, true
	case pgdef.OIDText, pgdef.OIDVarchar, pgdef.OIDName, pgdef.OIDJSON:
		return simple(kindText, "VARCHAR")
	case pgdef.OIDBpchar:
		return simple(kindBpchar, "VARCHAR")
	case pgdef.OIDJSONB:
		return simple(kindJSONB, "VARCHAR")
	case pgdef.OIDBytea:
		return simple(kindBytea, "BLOB")
	case pgdef.OIDDate:
		return simple(kindDate, "DATE")
	case pgdef.OIDTime:
		return simple(kindTime, "TIME")
	case pgdef.OIDTimestamp:
		return simple(kindTimestamp, "TIMESTAMP")
	case pgdef.OIDTimestamptz:
		return simple(kindTimestamptz, "TIMESTAMPTZ")
	case pgdef.OIDInterval:
		return simple(kindInterval, "INTERVAL")
	case pgdef.OIDUUID:
		return simple(kindUUID, "UUID")
	case pgdef.OIDInet, pgdef.OIDCidr:
		// The text Postgres prints them with (pgdef.InetText, from the
		// binary COPY and change streams): equal values print alike.
		return simple(kindInet, "VARCHAR")
	}
	return colType{}, false
}

// numericTypmod decodes a numeric atttypmod, ((p << 16) | (s & 0x7ff)) + 4,
// accepting only the precisions and scales DuckDB's DECIMAL holds
// (1 <= p <= 38, 0 <= s <= p). Postgres 15+ also allows negative scales and
// scales above the precision; those stay at the origin.
func numericTypmod(typmod int32) (p, s int, ok bool) {
	if typmod < 4 {
		return 0, 0, false
	}
	v := typmod - 4
	p = int(v>>16) & 0xffff
	s = int(v & 0x7ff)
	if s&0x400 != 0 { // sign-extend the 11-bit scale
		s -= 0x800
	}
	if p < 1 || p > maxDecimalWidth || s < 0 || s > p {
		return 0, 0, false
	}
	return p, s, true
}

// stageType is the DuckDB type the load's table function produces for a
// column. Times and timestamps travel as BIGINT microseconds and are
// converted by the INSERT's expressions (stageExpr), because duckdb-go
// cannot write ±infinity or 24:00:00 through time.Time.
func stageType(t colType) (duckdb.TypeInfo, error) {
	if t.elem != nil {
		child, err := stageType(*t.elem)
		if err != nil {
			return nil, err
		}
		return duckdb.NewListInfo(child)
	}
	switch t.kind {
	case kindBool:
		return duckdb.NewTypeInfo(duckdb.TYPE_BOOLEAN)
	case kindInt2:
		return duckdb.NewTypeInfo(duckdb.TYPE_SMALLINT)
	case kindInt4:
		return duckdb.NewTypeInfo(duckdb.TYPE_INTEGER)
	case kindInt8, kindTime, kindTimestamp, kindTimestamptz:
		return duckdb.NewTypeInfo(duckdb.TYPE_BIGINT)
	case kindFloat4:
		return duckdb.NewTypeInfo(duckdb.TYPE_FLOAT)
	case kindFloat8:
		return duckdb.NewTypeInfo(duckdb.TYPE_DOUBLE)
	case kindNumeric:
		return duckdb.NewDecimalInfo(t.precision, t.scale)
	case kindText, kindBpchar, kindJSONB, kindInet, kindNumericText:
		return duckdb.NewTypeInfo(duckdb.TYPE_VARCHAR)
	case kindBytea, kindArrayBinary:
		return duckdb.NewTypeInfo(duckdb.TYPE_BLOB)
	case kindDate:
		return duckdb.NewTypeInfo(duckdb.TYPE_DATE)
	case kindInterval:
		return duckdb.NewTypeInfo(duckdb.TYPE_INTERVAL)
	case kindUUID:
		return duckdb.NewTypeInfo(duckdb.TYPE_UUID)
	}
	return nil, fmt.Errorf("no staging type for %s", t.duck)
}

// Sentinels of the staged BIGINT microseconds: Postgres's own ±infinity
// encodings, kept as they are by the decoder.
const (
	stagedInfinity    = "9223372036854775807"
	stagedNegInfinity = "-9223372036854775808"
)

// stageExpr returns the SQL expression that turns the staged column ident
// (a quoted name) into its DuckDB type.
func stageExpr(t colType, ident string) string {
	if t.elem != nil {
		if !needsConversion(*t.elem) {
			return ident
		}
		return fmt.Sprintf("list_transform(%s, lambda x: %s)", ident, stageExpr(*t.elem, "x"))
	}
	switch t.kind {
	case kindTimestamp:
		return fmt.Sprintf("CASE %[1]s WHEN %[2]s THEN 'infinity'::TIMESTAMP WHEN %[3]s THEN '-infinity'::TIMESTAMP ELSE make_timestamp(%[1]s) END",
			ident, stagedInfinity, stagedNegInfinity)
	case kindTimestamptz:
		return fmt.Sprintf("CASE %[1]s WHEN %[2]s THEN 'infinity'::TIMESTAMPTZ WHEN %[3]s THEN '-infinity'::TIMESTAMPTZ ELSE make_timestamptz(%[1]s) END",
			ident, stagedInfinity, stagedNegInfinity)
	case kindTime:
		// 24:00:00 is never staged (decodeTime).
		return fmt.Sprintf("TIME '00:00:00' + to_microseconds(%s)", ident)
	}
	return ident
}

// needsConversion reports whether a staged column differs from its DuckDB
// type.
func needsConversion(t colType) bool {
	if t.elem != nil {
		return needsConversion(*t.elem)
	}
	switch t.kind {
	case kindTime, kindTimestamp, kindTimestamptz:
		return true
	}
	return false
}
