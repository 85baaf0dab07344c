package encode

import "github.com/pgaccel/pgaccel/pgdef"

// Postgres type OIDs (pg_type.oid) of the types this package encodes. They
// are fixed in every Postgres release.
const (
	OIDBool               = pgdef.OIDBool
	OIDBytea       uint32 = 17
	OIDName               = pgdef.OIDName
	OIDInt8               = pgdef.OIDInt8
	OIDInt2               = pgdef.OIDInt2
	OIDInt4               = pgdef.OIDInt4
	OIDText               = pgdef.OIDText
	OIDJSON        uint32 = 114
	OIDFloat4      uint32 = 700
	OIDFloat8      uint32 = 701
	OIDBpchar             = pgdef.OIDBpchar
	OIDVarchar            = pgdef.OIDVarchar
	OIDDate        uint32 = 1082
	OIDTime        uint32 = 1083
	OIDTimestamp   uint32 = 1114
	OIDTimestamptz uint32 = 1184
	OIDInet               = pgdef.OIDInet
	OIDCidr               = pgdef.OIDCidr
	OIDInterval    uint32 = 1186
	OIDNumeric            = pgdef.OIDNumeric
	OIDUUID        uint32 = 2950
	OIDJSONB       uint32 = 3802
)

// kind is what the encoders do with a target type; several OIDs share one.
type kind uint8

const (
	kindInvalid kind = iota
	kindBool
	kindInt2
	kindInt4
	kindInt8
	kindFloat4
	kindFloat8
	kindNumeric
	kindText // text, varchar, name, json: the bytes as stored
	kindBpchar
	kindJSONB
	kindBytea
	kindUUID
	kindDate
	kindTime
	kindTimestamp
	kindTimestamptz
	kindInterval
	kindInet // inet, cidr: held as inet_out's text (inet.go)
)

// typeInfo describes one supported Postgres type.
type typeInfo struct {
	name string // for error messages
	kind kind
	elem uint32 // for an array type: the element type; else 0
}

// types maps every supported scalar and one-dimensional array type OID.
var types = map[uint32]typeInfo{
	OIDBool:        {"boolean", kindBool, 0},
	OIDBytea:       {"bytea", kindBytea, 0},
	OIDName:        {"name", kindText, 0},
	OIDInt8:        {"bigint", kindInt8, 0},
	OIDInt2:        {"smallint", kindInt2, 0},
	OIDInt4:        {"integer", kindInt4, 0},
	OIDText:        {"text", kindText, 0},
	OIDJSON:        {"json", kindText, 0},
	OIDFloat4:      {"real", kindFloat4, 0},
	OIDFloat8:      {"double precision", kindFloat8, 0},
	OIDBpchar:      {"character", kindBpchar, 0},
	OIDVarchar:     {"character varying", kindText, 0},
	OIDDate:        {"date", kindDate, 0},
	OIDTime:        {"time", kindTime, 0},
	OIDTimestamp:   {"timestamp", kindTimestamp, 0},
	OIDTimestamptz: {"timestamptz", kindTimestamptz, 0},
	OIDInterval:    {"interval", kindInterval, 0},
	OIDNumeric:     {"numeric", kindNumeric, 0},
	OIDUUID:        {"uuid", kindUUID, 0},
	OIDJSONB:       {"jsonb", kindJSONB, 0},
	OIDInet:        {"inet", kindInet, 0},
	OIDCidr:        {"cidr", kindInet, 0},

	1000: {"boolean[]", kindBool, OIDBool},
	1001: {"bytea[]", kindBytea, OIDBytea},
	1003: {"name[]", kindText, OIDName},
	1016: {"bigint[]", kindInt8, OIDInt8},
	1005: {"smallint[]", kindInt2, OIDInt2},
	1007: {"integer[]", kindInt4, OIDInt4},
	1009: {"text[]", kindText, OIDText},
	199:  {"json[]", kindText, OIDJSON},
	1021: {"real[]", kindFloat4, OIDFloat4},
	1022: {"double precision[]", kindFloat8, OIDFloat8},
	1014: {"character[]", kindBpchar, OIDBpchar},
	1015: {"character varying[]", kindText, OIDVarchar},
	1182: {"date[]", kindDate, OIDDate},
	1183: {"time[]", kindTime, OIDTime},
	1115: {"timestamp[]", kindTimestamp, OIDTimestamp},
	1185: {"timestamptz[]", kindTimestamptz, OIDTimestamptz},
	1187: {"interval[]", kindInterval, OIDInterval},
	1231: {"numeric[]", kindNumeric, OIDNumeric},
	2951: {"uuid[]", kindUUID, OIDUUID},
	3807: {"jsonb[]", kindJSONB, OIDJSONB},
	1041: {"inet[]", kindInet, OIDInet}, // held as sent only (rawArray)
	651:  {"cidr[]", kindInet, OIDCidr},
}

// IsArray reports whether oid is an array type the encoder encodes.
func IsArray(oid uint32) bool { return types[oid].elem != 0 }
