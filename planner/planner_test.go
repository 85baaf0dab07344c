package planner

import (
	"context"
	"slices"
	"testing"
)

// planCase is one statement, the session it runs in, and the decision
// expected.
type planCase struct {
	name    string
	sql     string
	session func(*Session) // changes defaultSession(); nil keeps it
	route   Route
	reason  string
	kind    Kind
	out     string   // the rewritten SQL, checked when not ""
	ds      []string // datasets, checked when not nil
	writes  bool
	sets    bool
	hold    bool
	params  int
}

func accel(name, sql, out string, ds ...string) planCase {
	return planCase{name: name, sql: sql, route: RouteAccelerate, kind: KindSelect, out: out, ds: ds}
}

func origin(name, sql string, kind Kind, reason string) planCase {
	return planCase{name: name, sql: sql, route: RouteOrigin, kind: kind, reason: reason}
}

func (c planCase) withSession(f func(*Session)) planCase { c.session = f; return c }
func (c planCase) writing() planCase                     { c.writes = true; return c }
func (c planCase) settingSession() planCase              { c.sets = true; return c }
func (c planCase) withParams(n int) planCase             { c.params = n; return c }
func (c planCase) holding() planCase                     { c.hold = true; return c }

var searchSalesFirst = func(s *Session) { s.SearchPath = []string{"sales", "public"} }

var planCases = []planCase{
	// Reads of accelerated tables.
	accel("point query", `SELECT * FROM orders WHERE id = $1`,
		`SELECT * FROM ds_orders.main.orders orders WHERE id = $1`, "orders").withParams(1),
	accel("subquery column named like a table", `SELECT customers FROM (SELECT name AS customers FROM customers) s`,
		`SELECT customers FROM (SELECT name AS customers FROM ds_customers.main.customers customers) s`, "customers"),
	accel("avg rewritten exactly", `SELECT status, avg(amount) FROM orders GROUP BY status`,
		`SELECT status, pgaccel_numeric_avg(sum(amount)::text, count(amount)) FROM ds_orders.main.orders orders GROUP BY status`, "orders"),
	accel("integer CASE merges no scales", `SELECT CASE WHEN id > 1 THEN 1 ELSE 0 END FROM orders`,
		`SELECT CASE WHEN id > 1 THEN 1 ELSE 0 END FROM ds_orders.main.orders orders`, "orders"),
	accel("text concatenation", `SELECT status || '-' || note FROM orders`,
		`SELECT (status || '-') || note FROM ds_orders.main.orders orders`, "orders"),
	accel("literal cast to text", `SELECT 'x'::text, $1::text FROM orders`,
		`SELECT 'x'::text, $1::text FROM ds_orders.main.orders orders`, "orders").withParams(1),
	accel("division guarded", `SELECT length(status) / length(note), length(status) % 3 FROM orders`,
		`SELECT length(status)::int4 / CASE WHEN length(note)::int4 = 0 THEN error('division by zero') ELSE length(note)::int4 END, length(status)::int4 % CASE WHEN 3 = 0 THEN error('division by zero') ELSE 3 END FROM ds_orders.main.orders orders`, "orders"),
	accel("double precision errors guarded", `SELECT weight * 2, sqrt(weight) FROM orders`,
		`SELECT CASE WHEN isinf(weight * 2) AND NOT isinf(weight) AND NOT isinf(2) THEN error('value out of range: overflow') WHEN isnan(weight * 2) AND NOT isnan(weight) AND NOT isnan(2) THEN error('NaN of an invalid operation') WHEN (weight * 2) = 0 AND weight <> 0 AND 2 <> 0 THEN error('value out of range: underflow') ELSE weight * 2 END, CASE WHEN weight < 0 THEN error('cannot take square root of a negative number') ELSE sqrt(weight) END FROM ds_orders.main.orders orders`, "orders"),
	origin("division of untyped operands", `SELECT amount / customer_id FROM orders`, KindSelect, ReasonNumericDivision),
	origin("division of a sum of text", `SELECT sum(length(note)) / sum(amount) FROM orders`, KindSelect, ReasonNumericDivision),
	origin("division of an extract", `SELECT extract(year FROM created_at) / 10 FROM orders`, KindSelect, ReasonNumericDivision),
	origin("division by a parameter", `SELECT length(note) / $1 FROM orders`, KindSelect, ReasonNumericDivision).withParams(1),
	accel("keyword column quoted", `SELECT at FROM orders`,
		`SELECT "at" FROM ds_orders.main.orders orders`, "orders"),
	accel("schema qualified", `SELECT id FROM public.orders`,
		`SELECT id FROM ds_orders.main.orders orders`, "orders"),
	accel("alias kept", `SELECT o.id FROM orders AS o WHERE o.status = 'open'`,
		`SELECT o.id FROM ds_orders.main.orders o WHERE o.status = 'open'`, "orders"),
	accel("upper case folded", `SELECT ID FROM ORDERS`,
		`SELECT id FROM ds_orders.main.orders orders`, "orders"),
	accel("relation name as qualifier", `SELECT orders.id FROM orders`,
		`SELECT orders.id FROM ds_orders.main.orders orders`, "orders"),
	accel("three-part column reference", `SELECT public.orders.id FROM orders`,
		`SELECT orders.id FROM ds_orders.main.orders orders`, "orders"),
	accel("join", `SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id`,
		`SELECT o.id, c.name FROM ds_orders.main.orders o JOIN ds_customers.main.customers c ON c.id = o.customer_id`,
		"orders", "customers"),
	accel("left join using", `SELECT id, name FROM orders LEFT JOIN customers USING (id)`,
		`SELECT id, name FROM ds_orders.main.orders orders LEFT JOIN ds_customers.main.customers customers USING (id)`,
		"orders", "customers"),
	accel("self join", `SELECT a.id FROM orders a JOIN orders b ON a.id = b.id`,
		`SELECT a.id FROM ds_orders.main.orders a JOIN ds_orders.main.orders b ON a.id = b.id`, "orders"),
	accel("IN subquery", `SELECT id FROM orders WHERE customer_id IN (SELECT id FROM customers WHERE region = $1)`,
		`SELECT id FROM ds_orders.main.orders orders WHERE customer_id IN (SELECT id FROM ds_customers.main.customers customers WHERE region = $1)`,
		"orders", "customers").withParams(1),
	accel("correlated EXISTS", `SELECT id FROM orders o WHERE EXISTS (SELECT 1 FROM customers c WHERE c.id = o.customer_id)`,
		`SELECT id FROM ds_orders.main.orders o WHERE EXISTS (SELECT 1 FROM ds_customers.main.customers c WHERE c.id = o.customer_id)`,
		"orders", "customers"),
	accel("derived table", `SELECT t.n FROM (SELECT count(*) AS n FROM orders) t`,
		`SELECT t.n FROM (SELECT count(*) AS n FROM ds_orders.main.orders orders) t`, "orders"),
	accel("scalar subquery", `SELECT id, (SELECT max(id) FROM customers) FROM orders`,
		`SELECT id, (SELECT max(id) FROM ds_customers.main.customers customers) FROM ds_orders.main.orders orders`,
		"customers", "orders"), // the target list comes first in the tree
	accel("lateral", `SELECT o.id, x.n FROM orders o, LATERAL (SELECT count(*) AS n FROM customers c WHERE c.id = o.customer_id) x`,
		`SELECT o.id, x.n FROM ds_orders.main.orders o, LATERAL (SELECT count(*) AS n FROM ds_customers.main.customers c WHERE c.id = o.customer_id) x`,
		"orders", "customers"),
	accel("CTE over a dataset", `WITH big AS (SELECT * FROM orders WHERE amount > 100) SELECT count(*) FROM big`,
		`WITH big AS (SELECT * FROM ds_orders.main.orders orders WHERE amount > 100) SELECT count(*) FROM big`, "orders"),
	accel("CTE named like the table reads the table", `WITH orders AS (SELECT * FROM orders) SELECT id FROM orders`,
		`WITH orders AS (SELECT * FROM ds_orders.main.orders orders) SELECT id FROM orders`, "orders"),
	accel("CTE shadows only inside its query", `SELECT o.id FROM orders o, (WITH orders AS (SELECT 1 AS x) SELECT x FROM orders) s`,
		`SELECT o.id FROM ds_orders.main.orders o, (WITH orders AS (SELECT 1 AS x) SELECT x FROM orders) s`, "orders"),
	accel("later CTE sees earlier one", `WITH a AS (SELECT id FROM customers), b AS (SELECT id FROM a) SELECT * FROM b`,
		`WITH a AS (SELECT id FROM ds_customers.main.customers customers), b AS (SELECT id FROM a) SELECT * FROM b`, "customers"),
	accel("recursive CTE", `WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT o.id FROM r JOIN orders o ON o.id = r.n`,
		`WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT o.id FROM r JOIN ds_orders.main.orders o ON o.id = r.n`, "orders"),
	accel("window function", `SELECT id, row_number() OVER (PARTITION BY customer_id ORDER BY created_at) FROM orders`,
		`SELECT id, row_number() OVER (PARTITION BY customer_id ORDER BY created_at NULLS LAST) FROM ds_orders.main.orders orders`, "orders"),
	accel("DISTINCT ON", `SELECT DISTINCT ON (customer_id) customer_id, id FROM orders ORDER BY customer_id, id DESC`,
		`SELECT DISTINCT ON (customer_id) customer_id, id FROM ds_orders.main.orders orders ORDER BY customer_id NULLS LAST, id DESC NULLS FIRST`, "orders"),
	accel("explicit NULLS kept", `SELECT id FROM orders ORDER BY note DESC NULLS LAST`,
		`SELECT id FROM ds_orders.main.orders orders ORDER BY note DESC NULLS LAST`, "orders"),
	accel("aggregate ORDER BY", `SELECT string_agg(status, ',' ORDER BY id) FROM orders`,
		`SELECT string_agg(status, ',' ORDER BY id NULLS LAST) FROM ds_orders.main.orders orders`, "orders"),
	accel("group by having", `SELECT status, count(*), sum(amount) FROM orders GROUP BY status HAVING count(*) > 1`,
		`SELECT status, count(*), sum(amount) FROM ds_orders.main.orders orders GROUP BY status HAVING count(*) > 1`, "orders"),
	accel("distinct limit offset", `SELECT DISTINCT status FROM orders LIMIT 10 OFFSET 5`,
		`SELECT DISTINCT status FROM ds_orders.main.orders orders LIMIT 10 OFFSET 5`, "orders"),
	accel("union", `SELECT id FROM orders UNION ALL SELECT id FROM customers`,
		`SELECT id FROM ds_orders.main.orders orders UNION ALL SELECT id FROM ds_customers.main.customers customers`,
		"orders", "customers"),
	accel("TABLE", `TABLE customers`, `SELECT * FROM ds_customers.main.customers customers`, "customers"),
	accel("casts", `SELECT amount::numeric(10,2), created_at::date, CAST(id AS bigint) FROM orders WHERE created_at > $1::timestamptz`,
		`SELECT amount::numeric(10, 2), created_at::date, id::bigint FROM ds_orders.main.orders orders WHERE created_at > $1::timestamptz`,
		"orders").withParams(1),
	accel("pg_catalog type unqualified", `SELECT '{}'::json, id FROM orders`,
		`SELECT '{}'::"json", id FROM ds_orders.main.orders orders`, "orders"),
	accel("pg_catalog built-in unqualified", `SELECT pg_catalog.length(status) FROM orders`,
		`SELECT length(status)::int4 FROM ds_orders.main.orders orders`, "orders"),
	origin("case mapping follows the origin's ctype", `SELECT upper(status) FROM orders`, KindSelect, ReasonUnsupported),
	accel("SQL syntax functions", `SELECT EXTRACT(month FROM created_at), substring(status FROM 1 FOR 2) FROM orders`,
		`SELECT extract ('month' FROM created_at), SUBSTRING(status FROM 1 FOR 2) FROM ds_orders.main.orders orders`, "orders"),
	accel("case coalesce in", `SELECT CASE WHEN amount > 10 THEN 'big' ELSE 'small' END, COALESCE(note, '') FROM orders WHERE status IN ($1, $2)`,
		`SELECT CASE WHEN amount > 10 THEN 'big' ELSE 'small' END, COALESCE(note, '') FROM ds_orders.main.orders orders WHERE status IN ($1, $2)`,
		"orders").withParams(2),
	accel("search_path resolves to another schema", `SELECT id FROM orders`,
		`SELECT id FROM ds_sales_orders.main.sales_orders orders`, "sales_orders").withSession(searchSalesFirst),
	accel("quoted mixed case table", `SELECT id FROM "Mixed"`,
		`SELECT id FROM ds_mixed.main.mixed "Mixed"`, "mixed"),
	accel("columns the acceleration holds", `SELECT id, kind FROM events WHERE payload IS NOT NULL`,
		`SELECT id, kind FROM ds_events.main.events events WHERE payload IS NOT NULL`, "events"),
	accel("refresh_sql subset by name", `SELECT id, name FROM subset`,
		`SELECT id, name FROM ds_subset.main.subset subset`, "subset"),
	accel("count star is no star", `SELECT count(*) FROM events`,
		`SELECT count(*) FROM ds_events.main.events events`, "events"),
	accel("constant that only looks special", `SELECT id FROM orders WHERE status = 'nowhere'`,
		`SELECT id FROM ds_orders.main.orders orders WHERE status = 'nowhere'`, "orders"),
	accel("LIKE with a plain literal", `SELECT id FROM orders WHERE status LIKE 'op%'`,
		`SELECT id FROM ds_orders.main.orders orders WHERE status LIKE 'op%'`, "orders"),
	accel("LIKE with a backslash", `SELECT id FROM orders WHERE note LIKE '50\%%'`,
		`SELECT id FROM ds_orders.main.orders orders WHERE like_escape(note, E'50\\%%', E'\\')`, "orders"),
	origin("NOT ILIKE follows the origin's ctype", `SELECT id FROM orders WHERE note NOT ILIKE $1`, KindSelect, ReasonUnsupported).withParams(1),
	accel("LIKE ESCAPE", `SELECT id FROM orders WHERE note LIKE 'a!%' ESCAPE '!'`,
		`SELECT id FROM ds_orders.main.orders orders WHERE like_escape(note, 'a!%', '!')`, "orders"),
	accel("generate_series in FROM", `SELECT g.n, o.id FROM generate_series(1, 3) AS g(n) JOIN orders o ON o.id = g.n`,
		`SELECT g.n, o.id FROM generate_series(1, 3) g(n) JOIN ds_orders.main.orders o ON o.id = g.n`, "orders"),
	accel("age with two arguments", `SELECT age(created_at, created_at) FROM orders`,
		`SELECT age(created_at, created_at) FROM ds_orders.main.orders orders`, "orders"),

	// Reads that must see the origin.
	origin("VALUES alone", `VALUES (1), (2)`, KindSelect, ReasonNoTables),
	origin("no table", `SELECT 1`, KindSelect, ReasonNoTables),
	origin("CTE shadows the table", `WITH orders AS (SELECT 1 AS id) SELECT * FROM orders`, KindSelect, ReasonNoTables),
	origin("FOR UPDATE", `SELECT * FROM orders WHERE id = 1 FOR UPDATE`, KindSelect, ReasonLocking).writing(),
	origin("FOR SHARE", `SELECT * FROM orders FOR SHARE`, KindSelect, ReasonLocking).writing(),
	origin("FOR NO KEY UPDATE SKIP LOCKED", `SELECT id FROM orders FOR NO KEY UPDATE SKIP LOCKED`, KindSelect, ReasonLocking).writing(),
	origin("locking in a subquery", `SELECT * FROM (SELECT id FROM orders FOR UPDATE) s`, KindSelect, ReasonLocking).writing(),
	origin("data-modifying CTE delete", `WITH d AS (DELETE FROM orders WHERE id = 1 RETURNING *) SELECT * FROM d`, KindDelete, ReasonWrite).writing(),
	origin("data-modifying CTE insert", `WITH i AS (INSERT INTO orders (id) VALUES (1) RETURNING id) SELECT id FROM i`, KindInsert, ReasonWrite).writing(),
	origin("data-modifying CTE update", `WITH u AS (UPDATE orders SET note = 'x' RETURNING id) SELECT count(*) FROM u`, KindUpdate, ReasonWrite).writing(),
	origin("SELECT INTO", `SELECT * INTO copy FROM orders`, KindDDL, ReasonWrite).writing(),
	origin("SELECT INTO TEMP", `SELECT * INTO TEMP copy FROM orders`, KindDDL, ReasonWrite).writing().settingSession(),
	origin("pg_catalog table", `SELECT * FROM pg_class`, KindSelect, ReasonCatalog),
	origin("qualified pg_catalog table", `SELECT relname FROM pg_catalog.pg_class`, KindSelect, ReasonCatalog),
	origin("information_schema", `SELECT table_name FROM information_schema.tables`, KindSelect, ReasonCatalog),
	origin("catalog joined with a dataset", `SELECT o.id FROM orders o, pg_catalog.pg_type t`, KindSelect, ReasonCatalog),
	origin("pg_catalog shadows the search path", `SELECT * FROM pg_class`, KindSelect, ReasonCatalog).
		withSession(func(s *Session) { s.SearchPath = []string{"private"} }),
	origin("regclass cast", `SELECT 'orders'::regclass`, KindSelect, ReasonCatalog),
	origin("regclass cast over a dataset", `SELECT id FROM orders WHERE 'orders'::regclass IS NOT NULL`, KindSelect, ReasonCatalog),
	origin("regtype cast", `SELECT id::regtype FROM orders`, KindSelect, ReasonCatalog),
	origin("to_regclass", `SELECT to_regclass('orders'), id FROM orders`, KindSelect, ReasonCatalog),
	// now(), CURRENT_TIMESTAMP, CURRENT_DATE, LOCALTIMESTAMP are
	// accelerated (clock_test.go); what changes while a statement runs,
	// CURRENT_TIME and now(...) are not.
	origin("clock_timestamp()", `SELECT * FROM orders WHERE created_at > clock_timestamp() - interval '1 day'`, KindSelect, ReasonFunction),
	origin("CURRENT_TIME", `SELECT id FROM orders WHERE created_at < CURRENT_TIME`, KindSelect, ReasonFunction),
	origin("timeofday", `SELECT timeofday(), id FROM orders`, KindSelect, ReasonFunction),
	origin("now in a window", `SELECT now() OVER (), id FROM orders`, KindSelect, ReasonFunction),
	origin("current_user", `SELECT current_user, id FROM orders`, KindSelect, ReasonFunction),
	origin("session_user function", `SELECT id FROM orders WHERE note = session_user`, KindSelect, ReasonFunction),
	origin("special time input", `SELECT id FROM orders WHERE created_at > 'today'`, KindSelect, ReasonFunction),
	origin("now literal cast", `SELECT id FROM orders WHERE created_at < 'now'::timestamp`, KindSelect, ReasonFunction),
	origin("clock_timestamp", `SELECT clock_timestamp(), id FROM orders`, KindSelect, ReasonFunction),
	origin("nextval", `SELECT nextval('orders_id_seq'), id FROM orders`, KindSelect, ReasonFunction).writing(),
	origin("setval", `SELECT setval('s', 1)`, KindSelect, ReasonFunction).writing(),
	origin("currval", `SELECT currval('s') FROM orders`, KindSelect, ReasonFunction),
	origin("random", `SELECT id FROM orders ORDER BY random() LIMIT 1`, KindSelect, ReasonFunction),
	origin("gen_random_uuid", `SELECT gen_random_uuid(), id FROM orders`, KindSelect, ReasonFunction),
	origin("uuid_generate_v4", `SELECT uuid_generate_v4() FROM orders`, KindSelect, ReasonFunction),
	origin("pg_advisory_lock", `SELECT pg_advisory_lock(1) FROM orders`, KindSelect, ReasonFunction),
	origin("pg_try_advisory_xact_lock", `SELECT pg_try_advisory_xact_lock(id) FROM orders`, KindSelect, ReasonFunction).writing(),
	origin("pg_sleep", `SELECT pg_sleep(1), id FROM orders`, KindSelect, ReasonFunction),
	origin("pg_backend_pid", `SELECT pg_backend_pid()`, KindSelect, ReasonFunction),
	origin("txid_current", `SELECT txid_current(), id FROM orders`, KindSelect, ReasonFunction),
	origin("version", `SELECT version()`, KindSelect, ReasonFunction),
	origin("current_setting", `SELECT current_setting('TimeZone'), id FROM orders`, KindSelect, ReasonFunction),
	origin("set_config", `SELECT set_config('search_path', 'sales', false)`, KindSelect, ReasonFunction).settingSession(),
	origin("has_table_privilege", `SELECT has_table_privilege('orders', 'SELECT') FROM orders`, KindSelect, ReasonFunction),
	origin("inet_client_addr", `SELECT inet_client_addr(), id FROM orders`, KindSelect, ReasonFunction),
	origin("current_schema function", `SELECT current_schema(), id FROM orders`, KindSelect, ReasonFunction),
	origin("dblink", `SELECT * FROM dblink('x', 'y') AS t(a int)`, KindSelect, ReasonFunction),
	origin("query_to_xml", `SELECT query_to_xml('select 1', true, true, '')`, KindSelect, ReasonFunction),
	origin("age with one argument", `SELECT age(created_at) FROM orders`, KindSelect, ReasonFunction),
	origin("pg_catalog.clock_timestamp", `SELECT pg_catalog.clock_timestamp(), id FROM orders`, KindSelect, ReasonFunction),
	origin("pg_catalog function not allowed", `SELECT pg_catalog.to_char(created_at, 'YYYY') FROM orders`, KindSelect, ReasonFunction),
	origin("user schema function", `SELECT public.discount(amount) FROM orders`, KindSelect, ReasonFunction),
	origin("AT LOCAL", `SELECT created_at AT LOCAL FROM orders`, KindSelect, ReasonFunction),
	origin("SIMILAR TO differs", `SELECT id FROM orders WHERE status SIMILAR TO 'o%'`, KindSelect, ReasonUnsupported),
	origin("HAVING without aggregates over grouping sets", `SELECT max(id / customer_id) FROM orders GROUP BY ROLLUP (status) HAVING 0 >= 2`, KindSelect, ReasonUnsupported),
	origin("HAVING without aggregates over CUBE", `SELECT status, count(*) FROM orders GROUP BY CUBE (status) HAVING status IS NULL`, KindSelect, ReasonUnsupported),
	origin("LIKE ANY", `SELECT id FROM orders WHERE status LIKE ANY (ARRAY['a%', 'b%'])`, KindSelect, ReasonUnsupported),
	origin("format differs", `SELECT format('%s-%s', id, status) FROM orders`, KindSelect, ReasonUnsupported),
	origin("set-returning function in the target list", `SELECT generate_series(1, id) FROM orders`, KindSelect, ReasonUnsupported),
	origin("regex operator differs", `SELECT id FROM orders WHERE status ~ 'op'`, KindSelect, ReasonUnsupported),
	origin("schema-qualified operator", `SELECT id FROM orders WHERE amount OPERATOR(public.+) 1 > 0`, KindSelect, ReasonFunction),
	origin("TABLESAMPLE", `SELECT id FROM orders TABLESAMPLE SYSTEM (10)`, KindSelect, ReasonUnsupported),
	origin("ONLY", `SELECT id FROM ONLY orders`, KindSelect, ReasonUnsupported),
	origin("database-qualified", `SELECT id FROM shop.public.orders`, KindSelect, ReasonUnsupported),
	origin("whole-row reference", `SELECT o FROM orders o`, KindSelect, ReasonUnsupported),
	origin("whole-row in a function", `SELECT row_to_json(orders) FROM orders`, KindSelect, ReasonUnsupported),
	origin("three-part reference with an alias", `SELECT public.orders.id FROM orders o`, KindSelect, ReasonUnsupported),
	origin("three-part reference to another schema", `SELECT sales.orders.id FROM orders`, KindSelect, ReasonUnsupported),
	origin("four-part reference", `SELECT shop.public.orders.id FROM orders`, KindSelect, ReasonUnsupported),
	origin("temp table shadows", `SELECT * FROM orders`, KindSelect, ReasonTempTable).
		withSession(func(s *Session) { s.TempTables = map[string]bool{"orders": true} }),
	origin("pg_temp qualified", `SELECT * FROM pg_temp.scratch`, KindSelect, ReasonTempTable),
	origin("transaction wrote", `SELECT * FROM orders`, KindSelect, ReasonTxWrote).
		withSession(func(s *Session) { s.TxWrote = true }),
	origin("not ready", `SELECT count(*) FROM items`, KindSelect, ReasonNotReady),
	origin("disabled", `SELECT * FROM archive`, KindSelect, ReasonNotReady),
	origin("join with a dataset not ready", `SELECT * FROM orders o JOIN items i ON i.id = o.id`, KindSelect, ReasonNotReady),
	origin("not a dataset", `SELECT * FROM plain`, KindSelect, ReasonNotAccelerated),
	origin("qualified not a dataset", `SELECT * FROM sales.regions`, KindSelect, ReasonNotAccelerated),
	origin("join with a table that is no dataset", `SELECT * FROM orders o JOIN plain p ON p.id = o.id`, KindSelect, ReasonNotAccelerated),
	origin("unresolved", `SELECT * FROM nosuch`, KindSelect, ReasonUnresolved),
	origin("not in the search path", `SELECT * FROM regions`, KindSelect, ReasonUnresolved),
	origin("column not accelerated", `SELECT secret FROM events`, KindSelect, ReasonColumnNotAccelerated),
	origin("sum of a float column", `SELECT sum(weight) FROM orders`, KindSelect, ReasonFloatAggregate),
	accel("float cast to text", `SELECT weight::text FROM orders`,
		`SELECT pgaccel_text(weight, current_setting('TimeZone'))::text FROM ds_orders.main.orders orders`, "orders"),
	accel("scales merged by CASE, tracked", `SELECT CASE WHEN id > 1 THEN 1.5 ELSE 0 END FROM orders`,
		`SELECT pgaccel_numeric_scale(CASE WHEN id > 1 THEN 1.5 ELSE 0 END::text, CASE WHEN id > 1 THEN 1 ELSE 0 END) FROM ds_orders.main.orders orders`, "orders"),
	accel("scales merged by CASE, sorted by the output", `SELECT CASE WHEN id > 1 THEN 1.5 ELSE 0 END AS v FROM orders ORDER BY v`,
		`SELECT pgaccel_numeric_scale(CASE WHEN id > 1 THEN 1.5 ELSE 0 END::text, CASE WHEN id > 1 THEN 1 ELSE 0 END) AS v FROM ds_orders.main.orders orders ORDER BY CASE WHEN id > 1 THEN 1.5 ELSE 0 END NULLS LAST`, "orders"),
	origin("scales merged by CASE, grouped by the output", `SELECT CASE WHEN id > 1 THEN 1.5 ELSE 0 END AS v, count(*) FROM orders GROUP BY 1`, KindSelect, ReasonNumericScale),
	accel("scales merged by CASE in a subquery, passed through", `SELECT v FROM (SELECT CASE WHEN id > 1 THEN 1.5 ELSE 0 END AS v FROM orders) s`,
		"SELECT pgaccel_numeric_scale(v::text, pgaccel_scale_v) FROM (SELECT CASE WHEN id > 1 THEN 1.5 ELSE 0 END AS v, CASE WHEN id > 1 THEN 1 ELSE 0 END AS pgaccel_scale_v FROM ds_orders.main.orders orders) s", "orders"),
	accel("scales merged by CASE in a subquery, compared outside", `SELECT v FROM (SELECT CASE WHEN id > 1 THEN 1.5 ELSE 0 END AS v FROM orders) s WHERE v > 1`,
		"SELECT pgaccel_numeric_scale(v::text, pgaccel_scale_v) FROM (SELECT CASE WHEN id > 1 THEN 1.5 ELSE 0 END AS v, CASE WHEN id > 1 THEN 1 ELSE 0 END AS pgaccel_scale_v FROM ds_orders.main.orders orders) s WHERE v > 1", "orders"),
	accel("scales merged by CASE in a subquery, summed outside", `SELECT sum(v) FROM (SELECT CASE WHEN id > 1 THEN 1.5 ELSE 0 END AS v FROM orders) s`,
		"SELECT pgaccel_numeric_scale(sum(v)::text, max(CASE WHEN v IS NOT NULL THEN pgaccel_scale_v END)) FROM (SELECT CASE WHEN id > 1 THEN 1.5 ELSE 0 END AS v, CASE WHEN id > 1 THEN 1 ELSE 0 END AS pgaccel_scale_v FROM ds_orders.main.orders orders) s", "orders"),
	origin("scales merged by CASE in a subquery, printed outside", `SELECT abs(v) FROM (SELECT CASE WHEN id > 1 THEN 1.5 ELSE 0 END AS v FROM orders) s`, KindSelect, ReasonNumericScale),
	origin("scales merged by CASE in a subquery, averaged outside", `SELECT avg(v) FROM (SELECT CASE WHEN id > 1 THEN 1.5 ELSE 0 END AS v FROM orders) s`, KindSelect, ReasonNumericScale),
	origin("scales merged by CASE in a DISTINCT subquery", `SELECT sum(v) FROM (SELECT DISTINCT CASE WHEN id > 1 THEN 1.5 ELSE 0 END AS v FROM orders) s`, KindSelect, ReasonNumericScale),
	origin("scales merged by CASE, DISTINCT", `SELECT DISTINCT CASE WHEN id > 1 THEN 1.5 ELSE 0 END FROM orders`, KindSelect, ReasonNumericScale),
	origin("scales merged by CASE with a function", `SELECT CASE WHEN id > 1 THEN abs(1.55) ELSE 0 END FROM orders`, KindSelect, ReasonNumericScale),
	origin("division with a numeric literal", `SELECT id FROM orders WHERE id / 1.5 > 2`, KindSelect, ReasonNumericDivision),
	origin("cast to unconstrained numeric", `SELECT id::numeric FROM orders`, KindSelect, ReasonUnsupported),
	accel("cast to varchar", `SELECT CAST(weight AS varchar) FROM orders`,
		`SELECT pgaccel_text(weight, current_setting('TimeZone'))::varchar FROM ds_orders.main.orders orders`, "orders"),
	origin("cast to varchar(n) of a float", `SELECT CAST(weight AS varchar(5)) FROM orders`, KindSelect, ReasonUnsupported),
	accel("cast of a text column to text", `SELECT CAST(status AS text), created_at::varchar FROM orders`,
		`SELECT status::text, created_at::varchar FROM ds_orders.main.orders orders`, "orders"),
	origin("cast to a shorter varchar", `SELECT CAST(status AS varchar(3)) FROM orders`, KindSelect, ReasonUnsupported),
	origin("cast to char", `SELECT CAST(status AS char) FROM orders`, KindSelect, ReasonUnsupported),
	accel("cast to text of a renamed column", `WITH v AS (SELECT weight AS w FROM orders) SELECT w::text FROM v`,
		`WITH v AS (SELECT weight AS w FROM ds_orders.main.orders orders) SELECT pgaccel_text(w, current_setting('TimeZone'))::text FROM v`, "orders"),
	origin("cast to text of a subquery output", `SELECT w::text FROM (SELECT weight * 2 AS w FROM orders) s`, KindSelect, ReasonUnsupported),
	origin("concatenation of a subquery output", `SELECT w || 'x' FROM (SELECT weight * 2 AS w FROM orders) s`, KindSelect, ReasonUnsupported),
	accel("number concatenated", `SELECT 'w=' || weight FROM orders`,
		`SELECT 'w=' || pgaccel_text(weight, current_setting('TimeZone')) FROM ds_orders.main.orders orders`, "orders"),
	origin("number of a subquery concatenated", `SELECT 'w=' || w FROM (SELECT weight * 2 AS w FROM orders) s`, KindSelect, ReasonUnsupported),
	origin("number literal concatenated", `SELECT status || 1.5 FROM orders`, KindSelect, ReasonUnsupported),
	accel("negative substr start", `SELECT substr(status, -1, 2) FROM orders`,
		"SELECT substr(status, GREATEST(-1, 1), CASE WHEN 2 < 0 THEN error('negative substring length not allowed') ELSE GREATEST(-1 + 2, 1) - GREATEST(-1, 1) END) FROM ds_orders.main.orders orders", "orders"),
	accel("computed substr start", `SELECT substring(status, id) FROM orders`,
		`SELECT "substring"(status, GREATEST(id, 1)) FROM ds_orders.main.orders orders`, "orders"),
	origin("windowed avg of a float column", `SELECT sum(o.weight) OVER (ORDER BY id) FROM orders o`, KindSelect, ReasonFloatAggregate),
	origin("avg inside an expression", `SELECT 2 * avg(amount) FROM orders`, KindSelect, ReasonUnsupported),
	accel("avg in HAVING, exact decimal", `SELECT status FROM orders GROUP BY status HAVING avg(amount) > 1`,
		`SELECT status FROM ds_orders.main.orders orders GROUP BY status HAVING pgaccel_numeric_avg_dec(sum(amount)::text, count(amount)) > 1`, "orders"),
	origin("avg in ORDER BY", `SELECT status FROM orders GROUP BY status ORDER BY avg(amount)`, KindSelect, ReasonUnsupported),
	origin("sum of a cast to float", `SELECT sum(amount::float8) FROM orders`, KindSelect, ReasonFloatAggregate),
	origin("avg of double precision cast", `SELECT avg(CAST(amount AS double precision)) FROM orders`, KindSelect, ReasonFloatAggregate),
	origin("column not accelerated qualified", `SELECT e.id FROM events e WHERE e.secret IS NULL`, KindSelect, ReasonColumnNotAccelerated),
	origin("star over a hidden column", `SELECT * FROM events`, KindSelect, ReasonColumnNotAccelerated),
	origin("qualified star over a hidden column", `SELECT e.* FROM events e`, KindSelect, ReasonColumnNotAccelerated),
	origin("star over a join with a hidden column", `SELECT * FROM orders o JOIN events e ON e.id = o.id`, KindSelect, ReasonColumnNotAccelerated),
	origin("natural join over a hidden column", `SELECT id FROM events NATURAL JOIN orders`, KindSelect, ReasonColumnNotAccelerated),
	origin("column aliases over a hidden column", `SELECT a FROM events AS e(a, b)`, KindSelect, ReasonColumnNotAccelerated),
	origin("USING a hidden column", `SELECT e.id FROM events e JOIN events f USING (secret)`, KindSelect, ReasonColumnNotAccelerated),
	origin("star over a refresh_sql subset", `SELECT * FROM subset`, KindSelect, ReasonColumnNotAccelerated),
	origin("resolver error", `SELECT * FROM orders`, KindSelect, ReasonResolveError).
		withSession(func(s *Session) { s.User = "fail-resolver" }),

	// Writes and DDL.
	origin("insert", `INSERT INTO orders (id) VALUES ($1)`, KindInsert, ReasonWrite).writing().withParams(1),
	origin("insert select", `INSERT INTO orders SELECT * FROM orders`, KindInsert, ReasonWrite).writing(),
	origin("update", `UPDATE orders SET status = 'x' WHERE id = 1`, KindUpdate, ReasonWrite).writing(),
	origin("delete", `DELETE FROM orders WHERE id = 1`, KindDelete, ReasonWrite).writing(),
	origin("merge", `MERGE INTO orders o USING customers c ON o.id = c.id WHEN MATCHED THEN DELETE`, KindMerge, ReasonWrite).writing(),
	origin("create table", `CREATE TABLE t (id int)`, KindDDL, ReasonWrite).writing(),
	origin("create temp table", `CREATE TEMP TABLE t (id int)`, KindDDL, ReasonWrite).writing().settingSession(),
	origin("create table as", `CREATE TABLE t AS SELECT * FROM orders`, KindDDL, ReasonWrite).writing(),
	origin("create temp table as", `CREATE TEMPORARY TABLE t AS SELECT 1`, KindDDL, ReasonWrite).writing().settingSession(),
	origin("drop table", `DROP TABLE t`, KindDDL, ReasonWrite).writing().settingSession(),
	origin("create schema", `CREATE SCHEMA app`, KindDDL, ReasonWrite).writing().settingSession(),
	origin("alter table", `ALTER TABLE orders ADD COLUMN x int`, KindDDL, ReasonWrite).writing(),
	origin("create index", `CREATE INDEX ON orders (id)`, KindDDL, ReasonWrite).writing(),
	origin("truncate", `TRUNCATE orders`, KindDDL, ReasonWrite).writing(),
	origin("grant", `GRANT SELECT ON orders TO app`, KindDDL, ReasonWrite).writing(),
	origin("refresh materialized view", `REFRESH MATERIALIZED VIEW mv`, KindDDL, ReasonWrite).writing(),

	// Session settings.
	origin("set", `SET statement_timeout = 0`, KindSet, ReasonSessionSetting),
	origin("set search_path", `SET search_path = sales, public`, KindSet, ReasonSessionSetting).settingSession(),
	origin("set local search_path", `SET LOCAL search_path TO sales`, KindSet, ReasonSessionSetting).settingSession(),
	origin("set schema", `SET SCHEMA 'sales'`, KindSet, ReasonSessionSetting).settingSession(),
	origin("set role", `SET ROLE reader`, KindSet, ReasonSessionSetting).settingSession(),
	origin("set session authorization", `SET SESSION AUTHORIZATION reader`, KindSet, ReasonSessionSetting).settingSession(),
	origin("set timezone", `SET TIME ZONE 'UTC'`, KindSet, ReasonSessionSetting),
	origin("set transaction", `SET TRANSACTION ISOLATION LEVEL SERIALIZABLE`, KindSet, ReasonSessionSetting),
	origin("reset", `RESET TimeZone`, KindReset, ReasonSessionSetting),
	origin("reset role", `RESET ROLE`, KindReset, ReasonSessionSetting).settingSession(),
	origin("reset all", `RESET ALL`, KindReset, ReasonSessionSetting).settingSession(),
	origin("show", `SHOW search_path`, KindShow, ReasonSessionSetting),
	origin("discard all", `DISCARD ALL`, KindDiscard, ReasonSessionSetting).settingSession(),
	origin("discard temp", `DISCARD TEMP`, KindDiscard, ReasonSessionSetting).settingSession(),
	origin("discard plans", `DISCARD PLANS`, KindDiscard, ReasonSessionSetting),

	// Transaction control.
	origin("begin", `BEGIN`, KindBegin, ReasonTransaction),
	origin("start transaction", `START TRANSACTION READ ONLY`, KindBegin, ReasonTransaction),
	origin("commit", `COMMIT`, KindCommit, ReasonTransaction),
	origin("rollback", `ROLLBACK`, KindRollback, ReasonTransaction),
	origin("savepoint", `SAVEPOINT a`, KindSavepoint, ReasonTransaction),
	origin("release", `RELEASE SAVEPOINT a`, KindRelease, ReasonTransaction),
	origin("rollback to", `ROLLBACK TO SAVEPOINT a`, KindRollbackTo, ReasonTransaction),
	origin("prepare transaction", `PREPARE TRANSACTION 'x'`, KindPrepareTransaction, ReasonTransaction),
	origin("commit prepared", `COMMIT PREPARED 'x'`, KindCommitPrepared, ReasonTransaction),

	// Cursors.
	origin("declare", `DECLARE c CURSOR FOR SELECT * FROM orders`, KindDeclare, ReasonCursor),
	origin("declare for update", `DECLARE c CURSOR FOR SELECT * FROM orders FOR UPDATE`, KindDeclare, ReasonCursor).writing(),
	origin("declare with hold", `DECLARE c NO SCROLL CURSOR WITH HOLD FOR SELECT * FROM orders`, KindDeclare, ReasonCursor).holding(),
	origin("declare without hold", `DECLARE "c" BINARY SCROLL CURSOR WITHOUT HOLD FOR SELECT * FROM orders`, KindDeclare, ReasonCursor),
	origin("fetch", `FETCH 10 FROM c`, KindFetch, ReasonCursor),
	origin("move", `MOVE NEXT IN c`, KindMove, ReasonCursor),
	origin("close", `CLOSE c`, KindClose, ReasonCursor),

	// Other utility statements.
	origin("prepare", `PREPARE q AS SELECT * FROM orders WHERE id = $1`, KindPrepare, ReasonUtility).withParams(1),
	origin("execute", `EXECUTE q(1)`, KindExecute, ReasonUtility).writing(),
	origin("deallocate", `DEALLOCATE q`, KindDeallocate, ReasonUtility),
	origin("listen", `LISTEN ch`, KindListen, ReasonUtility),
	origin("notify", `NOTIFY ch, 'x'`, KindNotify, ReasonUtility),
	origin("unlisten", `UNLISTEN *`, KindUnlisten, ReasonUtility),
	origin("copy to", `COPY orders TO STDOUT`, KindCopy, ReasonUtility),
	origin("copy query to", `COPY (SELECT * FROM orders) TO STDOUT`, KindCopy, ReasonUtility),
	origin("copy from", `COPY orders FROM STDIN`, KindCopy, ReasonUtility).writing(),
	origin("explain", `EXPLAIN SELECT * FROM orders`, KindExplain, ReasonUtility),
	origin("explain analyze delete", `EXPLAIN ANALYZE DELETE FROM orders`, KindExplain, ReasonUtility).writing(),
	origin("call", `CALL refresh_all()`, KindCall, ReasonUtility).writing(),
	origin("do", `DO $$ BEGIN END $$`, KindDo, ReasonUtility).writing(),
	origin("lock", `LOCK TABLE orders IN ACCESS EXCLUSIVE MODE`, KindLock, ReasonLocking).writing(),
	origin("vacuum", `VACUUM orders`, KindVacuum, ReasonUtility),
	origin("analyze", `ANALYZE orders`, KindVacuum, ReasonUtility),
	origin("checkpoint", `CHECKPOINT`, KindOther, ReasonUtility),

	// Texts that are not one statement.
	origin("multi-statement", `SELECT * FROM orders; SELECT * FROM customers`, KindMulti, ReasonMultiStatement),
	origin("multi-statement writing", `SELECT 1; DELETE FROM orders`, KindMulti, ReasonMultiStatement).writing(),
	origin("multi-statement setting", `SET search_path = sales; SELECT 1`, KindMulti, ReasonMultiStatement).settingSession(),
	origin("parse error", `SELEC * FROM orders`, KindOther, ReasonParseError),
	origin("unterminated string", `SELECT 'x FROM orders`, KindOther, ReasonParseError),
	origin("empty", ``, KindEmpty, ReasonEmpty),
	origin("only a comment", `-- nothing`, KindEmpty, ReasonEmpty),
}

func TestPlan_Routes(t *testing.T) {
	reg := testRegistry(t)
	res := newFakeResolver()
	failing := newFakeResolver()
	failing.fail = errOriginDown
	// The cases check the full path; the fast path must agree on the
	// route whenever it answers.
	p := New(reg, res, Options{NoFastPath: true})
	pFail := New(reg, failing, Options{NoFastPath: true})
	fast := New(reg, res, Options{})
	for _, c := range planCases {
		t.Run(c.name, func(t *testing.T) {
			s := defaultSession()
			if c.session != nil {
				c.session(s)
			}
			pl := p
			if s.User == "fail-resolver" {
				pl = pFail
			}
			// Twice: the second answer comes from the cache and must agree.
			for pass := range 2 {
				d := pl.Plan(context.Background(), c.sql, s)
				checkDecision(t, c, d, pass)
			}
			if d, ok := fast.quickDecision(c.sql); ok && (c.route != RouteOrigin || c.writes != d.Writes() || c.sets || c.kind != d.Kind ||
				d.Reason != ReasonNoDataset && d.Reason != c.reason) {
				t.Errorf("the fast path decides %+v for %q; the full path says route %v, reason %q, writes %v, sets %v, kind %v",
					d, c.sql, c.route, c.reason, c.writes, c.sets, c.kind)
			}
		})
	}
}

func checkDecision(t *testing.T, c planCase, d Decision, pass int) {
	t.Helper()
	if d.Route != c.route || d.Reason != c.reason {
		t.Fatalf("pass %d: %q: route %v reason %q, want %v %q (SQL %q)", pass, c.sql, d.Route, d.Reason, c.route, c.reason, d.SQL)
	}
	if d.Kind != c.kind {
		t.Errorf("pass %d: kind %v, want %v", pass, d.Kind, c.kind)
	}
	if c.out != "" && d.SQL != c.out {
		t.Errorf("pass %d: SQL\n got %s\nwant %s", pass, d.SQL, c.out)
	}
	if c.route == RouteOrigin && d.SQL != "" {
		t.Errorf("pass %d: SQL %q for an origin route", pass, d.SQL)
	}
	if c.ds != nil && !slices.Equal(d.Datasets, c.ds) {
		t.Errorf("pass %d: datasets %v, want %v", pass, d.Datasets, c.ds)
	}
	if d.Writes() != c.writes {
		t.Errorf("pass %d: Writes() %v, want %v", pass, d.Writes(), c.writes)
	}
	if d.SetsSearchPath != c.sets {
		t.Errorf("pass %d: SetsSearchPath %v, want %v", pass, d.SetsSearchPath, c.sets)
	}
	if d.HoldCursor != c.hold {
		t.Errorf("pass %d: HoldCursor %v, want %v", pass, d.HoldCursor, c.hold)
	}
	if d.ParamCount != c.params {
		t.Errorf("pass %d: ParamCount %d, want %d", pass, d.ParamCount, c.params)
	}
	if c.reason != ReasonParseError && c.reason != ReasonEmpty && d.Fingerprint == 0 {
		t.Errorf("pass %d: no fingerprint", pass)
	}
}

func TestPlan_CaseCount(t *testing.T) {
	if len(planCases) < 80 {
		t.Fatalf("%d cases; the routing rules need at least 80", len(planCases))
	}
}

func TestPlan_TimeLiteralsBecomeDuckDBs(t *testing.T) {
	p := New(testRegistry(t), newFakeResolver(), Options{})
	tests := []struct{ sql, want string }{
		{`SELECT count(*) FROM orders WHERE created_at >= to_timestamp('2024-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')`,
			`SELECT count(*) FROM ds_orders.main.orders orders WHERE created_at >= timezone(current_setting('TimeZone'), make_timestamp(1704067200000000))`},
		{`SELECT count(*) FROM orders WHERE created_at < to_date('2024-02-29', 'YYYY-MM-DD')`,
			`SELECT count(*) FROM ds_orders.main.orders orders WHERE created_at < make_date(2024, 2, 29)`},
		// Not read: left to DuckDB, which has no such function.
		{`SELECT count(*) FROM orders WHERE created_at < to_date('2023-02-29', 'YYYY-MM-DD')`,
			`SELECT count(*) FROM ds_orders.main.orders orders WHERE created_at < to_date('2023-02-29', 'YYYY-MM-DD')`},
		{`SELECT count(*) FROM orders WHERE created_at < to_timestamp('2024-1-1', 'YYYY-MM-DD')`,
			`SELECT count(*) FROM ds_orders.main.orders orders WHERE created_at < to_timestamp('2024-1-1', 'YYYY-MM-DD')`},
	}
	for _, tt := range tests {
		d := p.Plan(context.Background(), tt.sql, defaultSession())
		if d.Route != RouteAccelerate || d.SQL != tt.want {
			t.Errorf("%s:\n got %v %q %s\nwant %s", tt.sql, d.Route, d.Reason, d.SQL, tt.want)
		}
	}
}

// TestPlan_FromSubqueryScoping: a subquery in FROM (not LATERAL) that
// names anything its own FROM items and output names do not define takes
// it from a query around it in Postgres, from the items beside it in
// DuckDB: the origin answers it.
func TestPlan_FromSubqueryScoping(t *testing.T) {
	p := New(testRegistry(t), newFakeResolver(), Options{})
	for _, tc := range []struct {
		sql  string
		want Route
	}{
		{"SELECT (SELECT r FROM (SELECT id AS status) x, (SELECT status AS r) y) FROM orders", RouteOrigin},
		{"SELECT * FROM orders o, (SELECT o.id AS x) s", RouteOrigin},
		{"SELECT (SELECT count(*) FROM (SELECT o.id) s) FROM orders o", RouteOrigin},
		{"SELECT * FROM orders o, LATERAL (SELECT o.id AS x) s", RouteAccelerate},
		{"SELECT s.status, count(*) FROM (SELECT status FROM orders) s GROUP BY 1", RouteAccelerate},
		{"SELECT * FROM (SELECT o.status AS st FROM orders o) s JOIN customers c ON c.name = s.st", RouteAccelerate},
		{"WITH q AS (SELECT * FROM orders) SELECT x.status FROM (SELECT status FROM q) x", RouteAccelerate},
		{"WITH q AS (SELECT id AS k FROM orders) SELECT x.k FROM (SELECT k FROM q) x", RouteAccelerate},
		{"SELECT x.n FROM (SELECT name AS n FROM customers ORDER BY n) x", RouteAccelerate},
		{"SELECT * FROM (SELECT i FROM generate_series(1, 3) g(i)) s, orders", RouteAccelerate},
	} {
		if d := p.Plan(context.Background(), tc.sql, defaultSession()); d.Route != tc.want {
			t.Errorf("%s: route %v (%s: %s), want %v", tc.sql, d.Route, d.Reason, d.Detail, tc.want)
		}
	}
}
