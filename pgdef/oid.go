package pgdef

import "github.com/jackc/pgx/v5/pgtype"

// Postgres's type OIDs (pg_type.oid) that pgaccel names; they are fixed in
// every Postgres release. This is their one declaration: the accelerator,
// the planner and the proxy's encoders use these (PROXY-REDESIGN.md).
const (
	OIDBool         uint32 = pgtype.BoolOID
	OIDBytea        uint32 = pgtype.ByteaOID
	OIDName         uint32 = pgtype.NameOID
	OIDInt8         uint32 = pgtype.Int8OID
	OIDInt2         uint32 = pgtype.Int2OID
	OIDInt4         uint32 = pgtype.Int4OID
	OIDText         uint32 = pgtype.TextOID
	OIDOID          uint32 = pgtype.OIDOID
	OIDJSON         uint32 = pgtype.JSONOID
	OIDCidr         uint32 = pgtype.CIDROID
	OIDFloat4       uint32 = pgtype.Float4OID
	OIDFloat8       uint32 = pgtype.Float8OID
	OIDMoney        uint32 = 790 // cash_in/cash_out; pgtype has no name for it
	OIDInet         uint32 = pgtype.InetOID
	OIDBpcharArray  uint32 = pgtype.BPCharArrayOID
	OIDBpchar       uint32 = pgtype.BPCharOID
	OIDVarchar      uint32 = pgtype.VarcharOID
	OIDDate         uint32 = pgtype.DateOID
	OIDTime         uint32 = pgtype.TimeOID
	OIDTimestamp    uint32 = pgtype.TimestampOID
	OIDTimestamptz  uint32 = pgtype.TimestamptzOID
	OIDInterval     uint32 = pgtype.IntervalOID
	OIDNumericArray uint32 = pgtype.NumericArrayOID
	OIDTimetz       uint32 = pgtype.TimetzOID
	OIDNumeric      uint32 = pgtype.NumericOID
	OIDUUID         uint32 = pgtype.UUIDOID
	OIDJSONB        uint32 = pgtype.JSONBOID
	OIDMacaddr      uint32 = pgtype.MacaddrOID
	OIDMacaddr8     uint32 = pgtype.Macaddr8OID

	OIDNameArray     uint32 = pgtype.NameArrayOID
	OIDInt2Array     uint32 = pgtype.Int2ArrayOID
	OIDInt4Array     uint32 = pgtype.Int4ArrayOID
	OIDTextArray     uint32 = pgtype.TextArrayOID
	OIDVarcharArray  uint32 = pgtype.VarcharArrayOID
	OIDInt8Array     uint32 = pgtype.Int8ArrayOID
	OIDFloat4Array   uint32 = pgtype.Float4ArrayOID
	OIDFloat8Array   uint32 = pgtype.Float8ArrayOID
	OIDIntervalArray uint32 = pgtype.IntervalArrayOID
	OIDJSONBArray    uint32 = pgtype.JSONBArrayOID
)
