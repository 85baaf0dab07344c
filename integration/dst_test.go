package integration

import (
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestAccel_TimestamptzArithmeticAcrossZones: timestamptz and interval
// arithmetic answers as Postgres does in zones with daylight-saving
// changes in both hemispheres and historic offsets: timestamptz -
// timestamptz is computed on the instants (it was an hour off across a
// change, 29m43s across Moscow's 1919 offset), and interval constants of
// the same length but other fields ('1 day' and '24 hours', '1 month'
// and '30 days') are not taken one for another.
func TestAccel_TimestamptzArithmeticAcrossZones(t *testing.T) {
	mustExec(t, `DROP TABLE IF EXISTS dst_vals;
		CREATE TABLE dst_vals (id int PRIMARY KEY, a timestamptz, b timestamptz, iv interval);
		INSERT INTO dst_vals VALUES
		 (1, '2024-03-09 12:00:00+00', '2024-03-11 12:00:00+00', '1 day'),
		 (2, '2024-10-05 12:00:00+00', '2024-10-07 12:00:00+00', '1 mon 1 day 1 hour'),
		 (3, '2024-01-15 10:14:29.876544+00', '2024-04-17 21:28:59.753088+00', '-1 days +25:00:00'),
		 (4, '1910-06-01 00:00:00+00', '1950-06-01 00:00:00+00', '36 hours'),
		 (5, '2024-03-31 00:30:00+00', '2024-03-31 03:30:00+00', '2 days'),
		 (6, '2024-04-06 14:00:00+00', '2024-04-07 18:00:00+00', '-2 days -03:00:00'),
		 (7, '2024-11-03 09:30:00+00', '2023-11-03 09:30:00+00', '00:00:00.000001'),
		 (8, 'infinity', '2024-01-01 00:00:00+00', '1 year'),
		 (9, NULL, '2024-01-01 00:00:00+00', NULL);
		GRANT SELECT ON dst_vals TO app`)
	a := startApp(t, "  - from: postgres:public.dst_vals\n")
	queries := []string{
		"SELECT id, b - a FROM dst_vals WHERE id < 8 ORDER BY id",
		"SELECT id, b - a FROM dst_vals ORDER BY id",
		"SELECT id, max(b) - min(a), extract(epoch FROM b - a), justify_hours(b - a) FROM dst_vals WHERE id < 8 GROUP BY id, a, b ORDER BY id",
		"SELECT id, date_trunc('day', b) - date_trunc('day', a) FROM dst_vals WHERE id < 8 ORDER BY id",
		"SELECT id, b - '2024-03-01 00:00:00+00', '2024-03-01 00:00:00+00' - a FROM dst_vals WHERE id < 8 ORDER BY id",
		"SELECT id FROM dst_vals WHERE b - a > interval '2 days' ORDER BY id",
		"SELECT id, a + interval '1 day', a - interval '1 day' FROM dst_vals WHERE id < 8 ORDER BY id",
		"SELECT id, a + interval '24 hours' FROM dst_vals WHERE id < 8 ORDER BY id",
		"SELECT id, a + interval '1 day', a + interval '24 hours' FROM dst_vals WHERE id < 8 ORDER BY id",
		"SELECT id, a + interval '1 month', a + interval '30 days' FROM dst_vals WHERE id < 8 ORDER BY id",
		"SELECT id, iv + interval '1 day', iv + interval '24 hours' FROM dst_vals ORDER BY id",
		"SELECT id, a + iv FROM dst_vals WHERE id < 8 ORDER BY id",
		"SELECT id, a - iv FROM dst_vals WHERE id < 8 ORDER BY id",
		"SELECT id, a - interval '1 day 12 hours', a + interval '1 day 1 hour' FROM dst_vals WHERE id < 8 ORDER BY id",
		"SELECT id, a - interval '1.5 days' FROM dst_vals WHERE id < 8 ORDER BY id",
		"SELECT id, age(b, a) FROM dst_vals WHERE id < 8 ORDER BY id",
		"SELECT id, date_trunc('week', a), extract(hour FROM a), a::date FROM dst_vals WHERE id < 8 ORDER BY id",
	}
	for _, zone := range []string{"UTC", "America/Los_Angeles", "Australia/Sydney", "Europe/Moscow", "America/Sao_Paulo", "Asia/Kolkata", "Europe/London"} {
		t.Run(zone, func(t *testing.T) {
			differentialDSN(t, origin.DSN(appUser, appPass), appDSN(a, appUser, appPass), func(t *testing.T, c *pgx.Conn, tr *transcript) {
				ctx := ctxT(t)
				simple(ctx, c, tr, "SET TimeZone = '"+zone+"'")
				for _, q := range queries {
					simple(ctx, c, tr, q)
					extended(ctx, c, tr, q, nil, []int16{1})
				}
			})
		})
	}
	t.Logf("routes: %v", routeCounts(t, a))
}
