package integration

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/pgdef"
)

// TestInetText_MatchesPostgres: the acceleration's text of inet and cidr
// values (pgdef.InetText, from inet_send's binary form, as the COPY
// and change streams carry them) is Postgres's own inet_out and cidr_out,
// for random IPv4 and IPv6 addresses of every mask, with zero runs of
// every length and place (ties, the embedded-IPv4 forms) among them.
func TestInetText_MatchesPostgres(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var texts []string
	for len(texts) < 3000 {
		if rng.IntN(3) == 0 {
			bits := rng.IntN(33)
			a := [4]int{rng.IntN(256), rng.IntN(256), rng.IntN(256), rng.IntN(256)}
			texts = append(texts, fmt.Sprintf("%d.%d.%d.%d/%d", a[0], a[1], a[2], a[3], bits))
			continue
		}
		var w [8]int
		for i := range w {
			switch rng.IntN(3) {
			case 0:
				w[i] = 0
			case 1:
				w[i] = rng.IntN(0x10000)
			default:
				w[i] = rng.IntN(16)
			}
		}
		switch rng.IntN(6) {
		case 0: // ::a.b.c.d
			w = [8]int{0, 0, 0, 0, 0, 0, rng.IntN(0x10000), rng.IntN(0x10000)}
		case 1: // ::ffff:a.b.c.d
			w = [8]int{0, 0, 0, 0, 0, 0xffff, rng.IntN(0x10000), rng.IntN(0x10000)}
		case 2: // ::1 and ::x
			w = [8]int{0, 0, 0, 0, 0, 0, 0, rng.IntN(3)}
		}
		parts := make([]string, 8)
		for i, x := range w {
			parts[i] = fmt.Sprintf("%x", x)
		}
		texts = append(texts, strings.Join(parts, ":")+fmt.Sprintf("/%d", rng.IntN(129)))
	}
	c := connect(t, origin.SuperDSN())
	// The inet of each text (set_masklen keeps host bits), and its cidr
	// (network() clears them).
	rows, err := c.Query(ctxT(t), `SELECT concat(i), encode(inet_send(i), 'hex'), concat(c), encode(cidr_send(c), 'hex')
		FROM (SELECT t::inet AS i, network(t::inet)::cidr AS c, n FROM unnest($1::text[]) WITH ORDINALITY AS x(t, n)) s ORDER BY n`, texts)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n, bad := 0, 0
	for rows.Next() {
		var it, ib, ct, cb string
		if err := rows.Scan(&it, &ib, &ct, &cb); err != nil {
			t.Fatal(err)
		}
		// concat() prints with the output functions.
		for _, v := range []struct{ want, bin string }{{it, ib}, {ct, cb}} {
			b, err := hex.DecodeString(v.bin)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := pgdef.InetText(b); err != nil || got != v.want {
				bad++
				if bad <= 10 {
					t.Errorf("%s: %q (%v), Postgres %q", v.bin, got, err, v.want)
				}
			}
		}
		n++
	}
	if err := rows.Err(); err != nil || n != len(texts) {
		t.Fatalf("%d rows: %v", n, err)
	}
}

// inetSchema is a Devise-like users table: inet sign-in addresses (IPv4
// and IPv6, with and without a mask, NULL) and a cidr network.
const inetSchema = `DROP TABLE IF EXISTS app_inet;
	CREATE TABLE app_inet (id int PRIMARY KEY, email text, current_sign_in_ip inet, last_sign_in_ip inet, net cidr);
	INSERT INTO app_inet VALUES
	  (1, 'a@x', '10.0.0.1', '10.0.0.1', '10.0.0.0/8'), (2, 'b@x', '192.168.1.5/24', NULL, '192.168.1.0/24'),
	  (3, 'c@x', '::1', '2001:db8::1', '2001:db8::/32'), (4, 'd@x', '::ffff:10.0.0.1', '::10.0.0.1', '::/0'),
	  (5, 'e@x', NULL, '10.0.0.1', NULL), (6, 'f@x', '10.0.0.1', '172.16.0.9/12', '172.16.0.0/12'),
	  (7, 'g@x', 'fe80::1:0:0:1/64', '1:0:0:2:0:0:0:3', '10.0.0.0/8');
	GRANT SELECT ON app_inet TO app;`

// TestAppTypes_InetIsAccelerated: a table with inet and cidr columns is
// accelerated: SELECT * and the reads that print, group, count and compare
// them for equality are answered byte for byte as the origin answers them,
// in text and binary, and the rest goes to the origin.
func TestAppTypes_InetIsAccelerated(t *testing.T) {
	inBothLocales(t, "pgaccel_inet_enus", inetSchema, "DROP TABLE IF EXISTS app_inet", "  - from: postgres:public.app_inet\n", checkInet)
}

// checkInet checks the inet reads of app_inet through a against direct.
func checkInet(t *testing.T, a *app.App, direct, proxied string) {
	st, _ := a.Registry.State("app_inet")
	for _, c := range st.Columns {
		if !c.Accelerated {
			t.Errorf("column %s (%s) not accelerated: %s", c.Name, c.TypeName, c.NotAccelerated)
		}
	}
	checkRouteCases(t, a, direct, proxied, []routeCase{
		{"SELECT * FROM app_inet ORDER BY id", acc},
		{"SELECT current_sign_in_ip, count(*), count(DISTINCT net), min(id) FROM app_inet GROUP BY 1 ORDER BY 4", acc},
		{"SELECT id FROM app_inet WHERE current_sign_in_ip = '10.0.0.1' OR last_sign_in_ip IN ('10.0.0.1', '172.16.0.9/12') ORDER BY id", acc},
		{"SELECT id FROM app_inet WHERE current_sign_in_ip = last_sign_in_ip ORDER BY id", acc},
		{"SELECT id FROM app_inet WHERE current_sign_in_ip IS DISTINCT FROM last_sign_in_ip ORDER BY id", acc},
		{"SELECT id, net FROM app_inet WHERE net = '10.0.0.0/8' ORDER BY id", acc},
		{"SELECT count(*) FROM app_inet WHERE current_sign_in_ip IS NULL", acc},
		{"SELECT count(*) FROM (SELECT DISTINCT net FROM app_inet WHERE net IS NOT NULL) s", acc},
		// Postgres's own semantics of them: the origin's.
		{"SELECT id FROM app_inet ORDER BY current_sign_in_ip, id", org},
		{"SELECT id FROM app_inet WHERE current_sign_in_ip = '10.0.0.1/32' ORDER BY id", org},
		{"SELECT id FROM app_inet WHERE current_sign_in_ip << '10.0.0.0/8' ORDER BY id", org},
		{"SELECT id, host(current_sign_in_ip), current_sign_in_ip::text FROM app_inet ORDER BY id", org},
		{"SELECT max(last_sign_in_ip) FROM app_inet", org},
	})
	// Parameters: as an ORM binds them (text) and as pgx does (binary).
	t.Run("parameters", func(t *testing.T) {
		const sql = "SELECT id, email FROM app_inet WHERE current_sign_in_ip = $1 OR net = $2 ORDER BY id"
		before := routeCounts(t, a)
		differentialDSN(t, direct, proxied, func(t *testing.T, c *pgx.Conn, tr *transcript) {
			ctx := ctxT(t)
			for _, args := range [][][]byte{{[]byte("10.0.0.1"), []byte("2001:db8::/32")}, {[]byte("::ffff:10.0.0.1"), []byte("10.0.0.0/8")},
				{[]byte("192.168.1.5/24"), []byte("172.16.0.0/12")}, {[]byte("10.0.0.1/32"), []byte("::/0")}} {
				extended(ctx, c, tr, sql, args, nil)
			}
			rows, err := c.Query(ctx, sql, netip.MustParseAddr("10.0.0.1"), netip.MustParsePrefix("10.0.0.0/8"))
			if err != nil {
				tr.err(err)
				return
			}
			for rows.Next() {
				var id int
				var email string
				if err := rows.Scan(&id, &email); err != nil {
					tr.err(err)
				}
				tr.printf("pgx binary row %d %s", id, email)
			}
			rows.Close()
		})
		if got := routeCounts(t, a)[acc] - before[acc]; got != 5 {
			t.Errorf("accelerated %v of 5 executions", got)
		}
	})
}

// TestAppTypes_InetUnderChanges: inet and cidr values arrive through the
// change stream (binary pgoutput) as Postgres prints them.
func TestAppTypes_InetUnderChanges(t *testing.T) {
	const table = "cdc_inet"
	dropCDCSlots(t, table)
	t.Cleanup(func() { dropCDCSlots(t, table); mustExec(t, "DROP TABLE IF EXISTS cdc_inet") })
	mustExec(t, strings.ReplaceAll(inetSchema, "app_inet", table))
	a := startAppRuntime(t, "", "", changesDatasetYAML(table), true)
	v := newCDCView(t, appDSN(a, appUser, appPass), appAccelerated(t, a), appRoutes(t, a))
	mustExec(t, `INSERT INTO cdc_inet VALUES (8, 'h@x', '2001:db8:0:0:1:0:0:1', '0.0.0.0/0', '2001:db8:1::/48'), (9, 'i@x', '::ffff:1.2.3.4/120', '::', '0.0.0.0/0');
		UPDATE cdc_inet SET current_sign_in_ip = '203.0.113.7' WHERE id = 1; DELETE FROM cdc_inet WHERE id = 2`)
	// SELECT * in text and binary, once applied.
	v.waitEqual(t, table, "after the changes", replicationOf(a, table), lagZero(a, table))
	ctx := ctxT(t)
	const grouped = "SELECT current_sign_in_ip, count(*), min(id) FROM cdc_inet GROUP BY 1 ORDER BY 3"
	for _, format := range []int16{0, 1} {
		if diff, accelerated, err := v.compare(ctx, grouped, true, format); err != nil || diff != "" || !accelerated {
			t.Errorf("%s (format %d): accelerated %v, %v\n%s", grouped, format, accelerated, err, diff)
		}
	}
}
