package encode

import "github.com/pgaccel/pgaccel/pgdef"

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
	pgdef.OIDBool:        {"boolean", kindBool, 0},
	pgdef.OIDBytea:       {"bytea", kindBytea, 0},
	pgdef.OIDName:        {"name", kindText, 0},
	pgdef.OIDInt8:        {"bigint", kindInt8, 0},
	pgdef.OIDInt2:        {"smallint", kindInt2, 0},
	pgdef.OIDInt4:        {"integer", kindInt4, 0},
	pgdef.OIDText:        {"text", kindText, 0},
	pgdef.OIDJSON:        {"json", kindText, 0},
	pgdef.OIDFloat4:      {"real", kindFloat4, 0},
	pgdef.OIDFloat8:      {"double precision", kindFloat8, 0},
	pgdef.OIDBpchar:      {"character", kindBpchar, 0},
	pgdef.OIDVarchar:     {"character varying", kindText, 0},
	pgdef.OIDDate:        {"date", kindDate, 0},
	pgdef.OIDTime:        {"time", kindTime, 0},
	pgdef.OIDTimestamp:   {"timestamp", kindTimestamp, 0},
	pgdef.OIDTimestamptz: {"timestamptz", kindTimestamptz, 0},
	pgdef.OIDInterval:    {"interval", kindInterval, 0},
	pgdef.OIDNumeric:     {"numeric", kindNumeric, 0},
	pgdef.OIDUUID:        {"uuid", kindUUID, 0},
	pgdef.OIDJSONB:       {"jsonb", kindJSONB, 0},
	pgdef.OIDInet:        {"inet", kindInet, 0},
	pgdef.OIDCidr:        {"cidr", kindInet, 0},

	1000: {"boolean[]", kindBool, pgdef.OIDBool},
	1001: {"bytea[]", kindBytea, pgdef.OIDBytea},
	1003: {"name[]", kindText, pgdef.OIDName},
	1016: {"bigint[]", kindInt8, pgdef.OIDInt8},
	1005: {"smallint[]", kindInt2, pgdef.OIDInt2},
	1007: {"integer[]", kindInt4, pgdef.OIDInt4},
	1009: {"text[]", kindText, pgdef.OIDText},
	199:  {"json[]", kindText, pgdef.OIDJSON},
	1021: {"real[]", kindFloat4, pgdef.OIDFloat4},
	1022: {"double precision[]", kindFloat8, pgdef.OIDFloat8},
	1014: {"character[]", kindBpchar, pgdef.OIDBpchar},
	1015: {"character varying[]", kindText, pgdef.OIDVarchar},
	1182: {"date[]", kindDate, pgdef.OIDDate},
	1183: {"time[]", kindTime, pgdef.OIDTime},
	1115: {"timestamp[]", kindTimestamp, pgdef.OIDTimestamp},
	1185: {"timestamptz[]", kindTimestamptz, pgdef.OIDTimestamptz},
	1187: {"interval[]", kindInterval, pgdef.OIDInterval},
	1231: {"numeric[]", kindNumeric, pgdef.OIDNumeric},
	2951: {"uuid[]", kindUUID, pgdef.OIDUUID},
	3807: {"jsonb[]", kindJSONB, pgdef.OIDJSONB},
	1041: {"inet[]", kindInet, pgdef.OIDInet},
	651:  {"cidr[]", kindInet, pgdef.OIDCidr},
}

// IsArray reports whether oid is an array type the encoder encodes.
func IsArray(oid uint32) bool { return types[oid].elem != 0 }
