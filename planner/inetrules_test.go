package planner

import (
	"testing"

	"github.com/pgaccel/pgaccel/catalog"
)

// TestPlan_InetIsComparedForEqualityOnly: inet and cidr columns are
// printed, grouped, counted and compared for equality with their own
// type or literals as Postgres prints them; everything else goes to the
// origin.
func TestPlan_InetIsComparedForEqualityOnly(t *testing.T) {
	col := func(name string, oid uint32, typeName string) catalog.ColumnInfo {
		return catalog.ColumnInfo{Name: name, TypeOID: oid, TypeName: typeName, TypeMod: -1, Accelerated: true, BinaryCollation: true}
	}
	reg := valsWith(t, map[string][]catalog.ColumnInfo{
		"vals":  {col("id", 23, "integer"), col("ip", 869, "inet"), col("ip2", 869, "inet"), col("net", 650, "cidr"), col("txt", 25, "text")},
		"other": {col("id", 23, "integer"), col("ip", 869, "inet")},
	})
	p := New(reg, valsResolver(), Options{})
	checkPlanCases(t, p, defaultSession(), []sortCase{
		{sql: "SELECT * FROM vals", route: RouteAccelerate},
		{sql: "SELECT id, ip FROM vals WHERE ip IS NOT NULL ORDER BY id", route: RouteAccelerate},
		{sql: "SELECT ip, count(*), count(DISTINCT net) FROM vals GROUP BY ip", route: RouteAccelerate},
		{sql: "SELECT DISTINCT ip FROM vals", route: RouteAccelerate},
		{sql: "SELECT id FROM vals WHERE ip = '10.0.0.1' OR ip IN ('10.0.0.2', '192.168.1.0/24')", route: RouteAccelerate},
		{sql: "SELECT id FROM vals WHERE net = '10.0.0.0/8'", route: RouteAccelerate},
		{sql: "SELECT id FROM vals WHERE ip = ip2 OR ip IS DISTINCT FROM ip2", route: RouteAccelerate},
		{sql: "SELECT v.id FROM vals v JOIN other o ON v.ip = o.ip", route: RouteAccelerate},
		{sql: "SELECT id FROM vals WHERE ip = $1 OR net = $2", route: RouteAccelerate},
		{sql: "SELECT count(*) FROM vals WHERE id > 3 AND length(txt) = 1", route: RouteAccelerate},
		// To the origin.
		{sql: "SELECT ip FROM vals ORDER BY ip", route: RouteOrigin},
		{sql: "SELECT * FROM vals ORDER BY 2", route: RouteOrigin},
		{sql: "SELECT min(ip) FROM vals", route: RouteOrigin},
		{sql: "SELECT id FROM vals WHERE ip < '10.0.0.1'", route: RouteOrigin},
		{sql: "SELECT id FROM vals WHERE ip = '10.0.0.1/32'", route: RouteOrigin},
		{sql: "SELECT id FROM vals WHERE ip = '010.0.0.1'", route: RouteOrigin},
		{sql: "SELECT id FROM vals WHERE ip = '::1'", route: RouteOrigin},
		{sql: "SELECT id FROM vals WHERE net = '10.0.0.1/8'", route: RouteOrigin},
		{sql: "SELECT id FROM vals WHERE ip = net", route: RouteOrigin},
		{sql: "SELECT id FROM vals WHERE ip = txt", route: RouteOrigin},
		{sql: "SELECT id FROM vals WHERE ip < $1", route: RouteOrigin},
		{sql: "SELECT ip::text FROM vals", route: RouteOrigin},
		{sql: "SELECT host(ip) FROM vals", route: RouteOrigin},
		{sql: "SELECT ip || 'x' FROM vals", route: RouteOrigin},
		{sql: "SELECT coalesce(ip, '0.0.0.0') FROM vals", route: RouteOrigin},
		{sql: "SELECT ip FROM vals UNION SELECT '10.0.0.1'", route: RouteOrigin},
		{sql: "SELECT id FROM vals WHERE ip << '10.0.0.0/8'", route: RouteOrigin},
		{sql: "SELECT ip + 1 FROM vals", route: RouteOrigin},
		{sql: "SELECT id FROM vals WHERE ip LIKE '10.%'", route: RouteOrigin},
	})
}

func TestCanonicalInet(t *testing.T) {
	for s, want := range map[string][2]bool{ // inet, cidr
		"10.0.0.1": {true, false}, "10.0.0.1/32": {false, true}, "10.0.0.0/8": {true, true}, "10.0.0.1/8": {true, false},
		"010.0.0.1": {false, false}, "10.0.0.1/08": {false, false}, "::1": {false, false}, "10.0.0": {false, false},
		"0.0.0.0/0": {true, true}, "255.255.255.255": {true, false},
	} {
		if got := [2]bool{canonicalInet(s, false), canonicalInet(s, true)}; got != want {
			t.Errorf("%q: inet %v cidr %v, want %v", s, got[0], got[1], want)
		}
	}
}
