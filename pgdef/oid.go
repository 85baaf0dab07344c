package pgdef

// Postgres's type OIDs (pg_type.oid) that the packages share; they are fixed
// in every Postgres release. (PROXY-REDESIGN.md: the OIDs the accelerator,
// the planner and the proxy declare apart move here.)
const (
	OIDBool    uint32 = 16
	OIDName    uint32 = 19
	OIDInt8    uint32 = 20
	OIDInt2    uint32 = 21
	OIDInt4    uint32 = 23
	OIDText    uint32 = 25
	OIDBpchar  uint32 = 1042
	OIDVarchar uint32 = 1043
	OIDCidr    uint32 = 650
	OIDInet    uint32 = 869
	OIDNumeric uint32 = 1700
)
