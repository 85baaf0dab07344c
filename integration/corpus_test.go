package integration

// corpusQuery is one read of the differential corpus. route is the route
// the proxy is expected to take: "accelerated", or "fallback"/"origin" for
// statements the acceleration deliberately leaves to the origin. Results
// must be byte-identical to the origin's whichever route serves them.
type corpusQuery struct {
	name  string
	sql   string
	args  []any // for the extended protocol; the simple protocol inlines them
	route string
}

const (
	acc = "accelerated"
	org = "origin"
	fbk = "fallback"
	// anyRoute asserts only that the answer is exact.
	anyRoute = "any"
)

// corpus covers aggregations, joins, window functions, CTEs, DISTINCT ON,
// ordering with NULLS FIRST/LAST, LIMIT/OFFSET, string and date functions,
// casts, and every supported type with NULLs and edge values.
var corpus = []corpusQuery{
	// Every supported type, whole rows and single columns.
	{"all types", "SELECT * FROM acc_types ORDER BY id", nil, acc},
	{"bool", "SELECT id, b FROM acc_types ORDER BY id", nil, acc},
	{"int2", "SELECT id, i2 FROM acc_types ORDER BY id", nil, acc},
	{"int4", "SELECT id, i4 FROM acc_types ORDER BY id", nil, acc},
	{"int8", "SELECT id, i8 FROM acc_types ORDER BY id", nil, acc},
	{"float4", "SELECT id, f4 FROM acc_types ORDER BY id", nil, acc},
	{"float8", "SELECT id, f8 FROM acc_types ORDER BY id", nil, acc},
	{"numeric", "SELECT id, n, n0 FROM acc_types ORDER BY id", nil, acc},
	{"text", "SELECT id, t, vc FROM acc_types ORDER BY id", nil, acc},
	{"char", "SELECT id, c FROM acc_types ORDER BY id", nil, acc},
	{"date", "SELECT id, d FROM acc_types ORDER BY id", nil, acc},
	{"time", "SELECT id, tm FROM acc_types ORDER BY id", nil, acc},
	{"time 24:00 left to the origin", "SELECT id, tm FROM acc_time24 ORDER BY id", nil, org},
	{"other columns of a table with time 24:00", "SELECT id FROM acc_time24 ORDER BY id", nil, acc},
	{"timestamp", "SELECT id, ts FROM acc_types ORDER BY id", nil, acc},
	{"timestamptz", "SELECT id, tstz FROM acc_types ORDER BY id", nil, acc},
	{"interval", "SELECT id, iv FROM acc_types ORDER BY id", nil, acc},
	{"uuid", "SELECT id, u FROM acc_types ORDER BY id", nil, acc},
	{"json", "SELECT id, j, jb FROM acc_types ORDER BY id", nil, acc},
	{"bytea", "SELECT id, by FROM acc_types ORDER BY id", nil, acc},
	{"arrays", "SELECT id, ai, at, an FROM acc_types ORDER BY id", nil, acc},
	{"nulls only", "SELECT * FROM acc_types WHERE id = 7", nil, acc},
	{"point by param", "SELECT * FROM acc_types WHERE id = $1", []any{3}, acc},
	{"text param", "SELECT id FROM acc_types WHERE t = $1", []any{"one"}, acc},
	{"char comparison", "SELECT id, c FROM acc_types WHERE c = 'ab' ORDER BY id", nil, acc},
	{"char length", "SELECT id, length(c), c || '|' AS cat FROM acc_types ORDER BY id", nil, acc},
	{"is null", "SELECT id FROM acc_types WHERE b IS NULL ORDER BY id", nil, acc},
	{"bool filter", "SELECT count(*) FROM acc_types WHERE b", nil, acc},
	{"float compare nan", "SELECT id FROM acc_types WHERE f8 > 1e300 ORDER BY id", nil, acc},

	// Aggregations.
	{"count star", "SELECT count(*) FROM acc_orders", nil, acc},
	{"count column", "SELECT count(status) FROM acc_orders", nil, acc},
	{"group by", "SELECT status, count(*) FROM acc_orders GROUP BY status ORDER BY status", nil, acc},
	{"sum numeric", "SELECT status, sum(amount) FROM acc_orders GROUP BY status ORDER BY status NULLS FIRST", nil, acc},
	{"sum int", "SELECT sum(qty) FROM acc_orders", nil, acc},
	{"min max", "SELECT min(amount), max(amount), min(created_at), max(day) FROM acc_orders", nil, acc},
	{"avg numeric", "SELECT avg(amount) FROM acc_orders", nil, acc},
	{"avg numeric grouped", "SELECT status, avg(amount), avg(qty), count(*) FROM acc_orders GROUP BY status ORDER BY status", nil, acc},
	{"avg edge numerics", "SELECT avg(n), avg(n0), avg(i2), avg(i8) FROM acc_types", nil, acc},
	{"avg small groups", "SELECT id, avg(n) FROM acc_types GROUP BY id ORDER BY id", nil, acc},
	{"avg in an expression", "SELECT 2 * avg(amount) FROM acc_orders", nil, org},
	{"avg in having", "SELECT status FROM acc_orders GROUP BY status HAVING avg(amount) > 500 ORDER BY status", nil, acc},
	{"avg float", "SELECT avg(weight) FROM acc_orders", nil, org},
	{"max float", "SELECT max(weight), min(weight) FROM acc_orders", nil, acc},
	{"having", "SELECT customer_id, count(*) FROM acc_orders GROUP BY customer_id HAVING count(*) > 25 ORDER BY customer_id", nil, acc},
	{"count distinct", "SELECT count(DISTINCT customer_id) FROM acc_orders", nil, acc},
	{"filter clause", "SELECT count(*) FILTER (WHERE status = 'paid') AS paid, count(*) FILTER (WHERE qty > 5) AS big FROM acc_orders", nil, acc},
	{"bool_and", "SELECT bool_and(qty > 0), bool_or(qty > 8) FROM acc_orders", nil, acc},
	{"string_agg", "SELECT string_agg(name, ',' ORDER BY id) FROM acc_customers WHERE id <= 5", nil, acc},

	// Joins.
	{"inner join", "SELECT c.country, count(*) FROM acc_orders o JOIN acc_customers c ON c.id = o.customer_id GROUP BY c.country ORDER BY c.country NULLS LAST", nil, acc},
	{"left join", "SELECT c.id, count(o.id) FROM acc_customers c LEFT JOIN acc_orders o ON o.customer_id = c.id AND o.status = 'new' WHERE c.id <= 10 GROUP BY c.id ORDER BY c.id", nil, acc},
	{"join using", "SELECT o.id, c.name FROM acc_orders o JOIN acc_customers c ON c.id = o.customer_id WHERE o.id < 6 ORDER BY o.id", nil, acc},
	{"semi join", "SELECT count(*) FROM acc_customers c WHERE EXISTS (SELECT 1 FROM acc_orders o WHERE o.customer_id = c.id AND o.qty = 9)", nil, acc},
	{"anti join", "SELECT count(*) FROM acc_customers c WHERE NOT EXISTS (SELECT 1 FROM acc_orders o WHERE o.customer_id = c.id)", nil, acc},
	{"in subquery", "SELECT id FROM acc_customers WHERE id IN (SELECT customer_id FROM acc_orders WHERE amount > 999) ORDER BY id", nil, acc},
	{"scalar subquery", "SELECT id, (SELECT max(amount) FROM acc_orders o WHERE o.customer_id = c.id) FROM acc_customers c ORDER BY id LIMIT 5", nil, acc},
	{"cross join small", "SELECT a.id, b.id FROM acc_types a CROSS JOIN acc_types b WHERE a.id < 3 AND b.id < 3 ORDER BY 1, 2", nil, acc},

	// Window functions.
	{"row_number", "SELECT id, row_number() OVER (PARTITION BY status ORDER BY id) FROM acc_orders WHERE id <= 20 ORDER BY id", nil, acc},
	{"rank", "SELECT id, qty, rank() OVER (ORDER BY qty DESC), dense_rank() OVER (ORDER BY qty DESC) FROM acc_orders WHERE id <= 15 ORDER BY id", nil, acc},
	{"running sum", "SELECT id, sum(qty) OVER (ORDER BY id) FROM acc_orders WHERE id <= 10 ORDER BY id", nil, acc},
	{"lag lead", "SELECT id, lag(amount) OVER (ORDER BY id), lead(amount, 2) OVER (ORDER BY id) FROM acc_orders WHERE id <= 8 ORDER BY id", nil, acc},
	{"frame float", "SELECT id, avg(weight) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM acc_orders WHERE id <= 8 ORDER BY id", nil, org},
	{"frame", "SELECT id, sum(qty) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM acc_orders WHERE id <= 8 ORDER BY id", nil, acc},

	// CTEs, DISTINCT ON, set operations.
	{"cte", "WITH big AS (SELECT * FROM acc_orders WHERE amount > 900) SELECT status, count(*) FROM big GROUP BY status ORDER BY status NULLS FIRST", nil, acc},
	{"cte twice", "WITH c AS (SELECT customer_id, sum(qty) AS q FROM acc_orders GROUP BY customer_id) SELECT max(q), min(q) FROM c", nil, acc},
	{"distinct on", "SELECT DISTINCT ON (customer_id) customer_id, id, amount FROM acc_orders ORDER BY customer_id, amount DESC, id LIMIT 10", nil, acc},
	{"distinct", "SELECT DISTINCT status FROM acc_orders ORDER BY status", nil, acc},
	{"union", "SELECT id FROM acc_types WHERE id < 3 UNION SELECT id FROM acc_customers WHERE id < 5 ORDER BY id", nil, acc},
	{"union all", "SELECT status FROM acc_orders WHERE id < 3 UNION ALL SELECT country FROM acc_customers WHERE id < 3", nil, acc},
	{"except", "SELECT id FROM acc_customers WHERE id < 10 EXCEPT SELECT customer_id FROM acc_orders ORDER BY 1", nil, acc},
	{"table", "TABLE acc_customers ORDER BY id LIMIT 3", nil, acc},

	// Ordering, limits.
	{"nulls first", "SELECT id, status FROM acc_orders WHERE id <= 12 ORDER BY status NULLS FIRST, id", nil, acc},
	{"nulls last desc", "SELECT id, b FROM acc_types ORDER BY b DESC NULLS LAST, id", nil, acc},
	{"default nulls desc", "SELECT id, b FROM acc_types ORDER BY b DESC, id", nil, acc},
	{"limit offset", "SELECT id FROM acc_orders ORDER BY id LIMIT 5 OFFSET 100", nil, acc},
	{"limit param", "SELECT id FROM acc_orders ORDER BY id LIMIT $1", []any{3}, acc},
	{"order by expression", "SELECT id, amount * qty AS total FROM acc_orders ORDER BY amount * qty DESC, id LIMIT 5", nil, acc},
	{"text ordering", "SELECT name FROM acc_customers ORDER BY name LIMIT 5", nil, acc},

	// Strings, dates, casts.
	{"string functions", "SELECT id, length(name), substr(name, 3, 4), replace(name, 'customer', 'c'), left(name, 3), strpos(name, 'm') FROM acc_customers WHERE id <= 3 ORDER BY id", nil, acc},
	{"concat", "SELECT id, name || '-' || country FROM acc_customers WHERE id <= 6 ORDER BY id", nil, acc},
	{"like", "SELECT count(*) FROM acc_customers WHERE name LIKE 'customer 1%'", nil, acc},
	{"trim", "SELECT id, trim(t), rtrim(vc) FROM acc_types ORDER BY id", nil, acc},
	{"date arithmetic", "SELECT id, day + 7 AS next_week, day - date '2024-01-01' AS days FROM acc_orders WHERE id <= 3 ORDER BY id", nil, acc},
	{"date_trunc", "SELECT date_trunc('month', day) AS m, count(*) FROM acc_orders GROUP BY 1 ORDER BY 1", nil, fbk},
	{"keyword names", "SELECT at AS at, id AS \"order\" FROM acc_types ORDER BY \"order\"", nil, acc},
	{"extract", "SELECT extract(year FROM d) FROM acc_types WHERE id IN (1, 6) ORDER BY id", nil, acc},
	{"cast int to text", "SELECT id::text, qty::numeric(5, 1), amount::int FROM acc_orders WHERE id <= 3 ORDER BY id", nil, org},
	{"numeric casts", "SELECT qty::numeric(5, 1), amount::int, amount::numeric(14, 4) FROM acc_orders WHERE id <= 3 ORDER BY id", nil, acc},
	{"cast to float", "SELECT amount::float8 FROM acc_orders WHERE id <= 3 ORDER BY id", nil, acc},
	{"case", "SELECT id, CASE WHEN qty > 5 THEN 'big' WHEN qty > 2 THEN 'mid' ELSE 'small' END FROM acc_orders WHERE id <= 6 ORDER BY id", nil, acc},
	{"coalesce", "SELECT id, coalesce(status, 'none'), nullif(qty, 1) FROM acc_orders WHERE id <= 6 ORDER BY id", nil, acc},
	{"between timestamptz", "SELECT count(*) FROM acc_orders WHERE created_at BETWEEN '2024-01-02 00:00:00+00' AND '2024-01-03 00:00:00+00'", nil, acc},
	{"numeric arithmetic", "SELECT id, amount + 1, amount * 2, amount - 0.5 FROM acc_orders WHERE id <= 4 ORDER BY id", nil, acc},
	{"integer division", "SELECT id, qty / 2, qty % 4 FROM acc_orders WHERE id <= 6 ORDER BY id", nil, org},
	{"integer division without numerics", "SELECT id, id / 7, id % 5, -id / 7 FROM acc_customers WHERE id <= 10 ORDER BY id", nil, acc},
	{"numeric division in a filter", "SELECT count(*) FROM acc_orders WHERE amount / 3 > 100", nil, org},
	{"round", "SELECT id, round(weight::numeric, 2) FROM acc_orders WHERE id <= 4 ORDER BY id", nil, org},
	{"round numeric", "SELECT id, round(amount, 1), round(amount) FROM acc_orders WHERE id <= 4 ORDER BY id", nil, acc},

	// Casts and functions whose output depends on Postgres's own formatting
	// or locale: whichever route serves them, the answer must be exact.
	{"float to text", "SELECT id, f8::text, f4::text FROM acc_types ORDER BY id", nil, anyRoute},
	{"interval to text", "SELECT id, iv::text FROM acc_types ORDER BY id", nil, anyRoute},
	{"timestamptz to text", "SELECT id, tstz::text, ts::text, d::text FROM acc_types ORDER BY id", nil, anyRoute},
	{"numeric to text", "SELECT id, n::text, amount::text FROM acc_types, (SELECT 1.50::numeric(5,2) AS amount) x ORDER BY id", nil, anyRoute},
	{"bool and json to text", "SELECT id, b::text, jb::text, u::text FROM acc_types ORDER BY id", nil, anyRoute},
	{"concat with numbers", "SELECT id, 'v=' || f8, 'n=' || n, 'i=' || i4 FROM acc_types ORDER BY id", nil, anyRoute},
	{"case of non-ascii", "SELECT id, upper(t), lower(t), initcap(t) FROM acc_types ORDER BY id", nil, anyRoute},
	{"text ordering non-ascii", "SELECT t FROM acc_types WHERE t IS NOT NULL ORDER BY t", nil, anyRoute},
	{"to_char", "SELECT to_char(day, 'YYYY-MM-DD') FROM acc_orders WHERE id <= 2 ORDER BY id", nil, anyRoute},
	{"array functions", "SELECT id, array_length(ai, 1), cardinality(at) FROM acc_types ORDER BY id", nil, anyRoute},
	{"json operators", "SELECT id, jb -> 'a', jb ->> 'a' FROM acc_types ORDER BY id", nil, anyRoute},
	{"round half", "SELECT round(2.5::numeric), round(-2.5::numeric), round(0.125::numeric, 2) FROM acc_types WHERE id = 1", nil, anyRoute},
	{"numeric division", "SELECT id, amount / 3 FROM acc_orders WHERE id <= 3 ORDER BY id", nil, acc},
	{"division by zero", "SELECT id / (id - id) FROM acc_types WHERE id = 1", nil, anyRoute},
	{"substr negative", "SELECT substr(name, -1, 4) FROM acc_customers WHERE id = 1", nil, anyRoute},
	{"string_agg distinct", "SELECT string_agg(DISTINCT country, ',' ORDER BY country) FROM acc_customers", nil, anyRoute},

	{"order by a linguistic collation", "SELECT name FROM acc_coll ORDER BY name", nil, org},
	{"order by a C-collated column", "SELECT code FROM acc_coll ORDER BY code", nil, acc},
	{"equality under a linguistic collation", "SELECT id FROM acc_coll WHERE name = 'B'", nil, acc},
	{"upper of non-ascii", "SELECT upper(code), lower(name) FROM acc_coll ORDER BY id", nil, org},

	{"coalesce numeric with zero", "SELECT id, coalesce(n, 0) FROM acc_types ORDER BY id", nil, acc},
	{"case numeric with zero", "SELECT sum(CASE WHEN status = 'paid' THEN amount ELSE 0 END) FROM acc_orders WHERE id < 3", nil, acc},
	{"scale by group", "SELECT status, sum(CASE WHEN qty > 5 THEN amount ELSE 0 END), sum(CASE WHEN qty > 5 THEN amount END), count(*) FROM acc_orders GROUP BY status ORDER BY status", nil, acc},
	{"scale zero in some groups", "SELECT qty, sum(CASE WHEN status = 'paid' AND qty > 5 THEN amount ELSE 0 END) FROM acc_orders GROUP BY qty ORDER BY qty", nil, acc},
	{"scale row by row", "SELECT id, CASE WHEN qty > 3 THEN amount * qty WHEN qty > 1 THEN amount + 0.5 ELSE -1 END FROM acc_orders ORDER BY id LIMIT 20", nil, acc},
	{"coalesce with a wider literal", "SELECT id, coalesce(amount, 0.000) FROM acc_orders ORDER BY id LIMIT 10", nil, acc},
	{"scales combined", "SELECT sum(amount * 2) + sum(CASE WHEN status = 'paid' THEN 1 ELSE 0 END), sum(CASE WHEN qty > 5 THEN amount ELSE 0 END) FILTER (WHERE status = 'new') FROM acc_orders", nil, acc},
	{"scale over a join", "SELECT c.country, sum(CASE WHEN o.qty > 2 THEN o.amount ELSE 0 END) AS big FROM acc_orders o JOIN acc_customers c ON c.id = o.customer_id GROUP BY c.country ORDER BY c.country", nil, acc},
	{"scale with parameters", "SELECT sum(CASE WHEN qty > $1 THEN amount ELSE 0 END) FROM acc_orders WHERE id < $2", []any{5, 4}, acc},
	{"ordered by a merged output", "SELECT CASE WHEN qty > 5 THEN amount ELSE 0 END AS v FROM acc_orders ORDER BY v, id LIMIT 5", nil, org},
	{"grouped by a merged value", "SELECT coalesce(amount, 0), count(*) FROM acc_orders GROUP BY coalesce(amount, 0) ORDER BY 2 DESC LIMIT 3", nil, org},
	{"numeric over integer", "SELECT sum(amount) / sum(qty) FROM acc_orders", nil, acc},
	{"share by group", "SELECT status, sum(CASE WHEN qty > 5 THEN amount ELSE 0 END) / sum(amount) FROM acc_orders GROUP BY status ORDER BY status", nil, acc},
	{"percentage", "SELECT 100.00 * sum(CASE WHEN status = 'paid' THEN amount ELSE 0 END) / sum(amount) AS pct FROM acc_orders", nil, acc},
	{"division row by row", "SELECT id, amount / qty, (amount - 500) / 7, amount / 100000 FROM acc_orders ORDER BY id LIMIT 30", nil, acc},
	{"division by a decimal", "SELECT sum(amount) * 1000 / 0.07 FROM acc_orders", nil, acc},
	{"integer division", "SELECT id, id / 3, qty / 2 FROM acc_orders ORDER BY id LIMIT 10", nil, acc},
	{"numeric division by zero", "SELECT sum(amount) / sum(qty - qty) FROM acc_orders", nil, fbk},
	{"division with parameters", "SELECT sum(amount) / $1 FROM acc_orders WHERE qty > $2", []any{7, 3}, anyRoute},
	{"share over a derived table", "SELECT o_year, sum(CASE WHEN status = 'paid' THEN volume ELSE 0 END) / sum(volume) AS share FROM (SELECT extract(year from day) AS o_year, amount * qty AS volume, status FROM acc_orders) t GROUP BY o_year ORDER BY o_year", nil, acc},
	{"conditional sum over a derived table", "SELECT sum(CASE WHEN s.flag THEN s.v ELSE 0 END), sum(s.v - 1.5) FROM (SELECT amount AS v, qty > 5 AS flag FROM acc_orders WHERE id < 100) s", nil, acc},
	{"BI wrapper with a star", "SELECT virtual_table.status, sum(CASE WHEN virtual_table.qty > 5 THEN virtual_table.amount ELSE 0 END) AS big, sum(virtual_table.amount) / count(*) AS mean FROM (SELECT * FROM acc_orders WHERE id < 500) AS virtual_table GROUP BY virtual_table.status ORDER BY virtual_table.status", nil, acc},
	{"derived table with a merge inside", "SELECT sum(x) FROM (SELECT CASE WHEN qty > 5 THEN amount ELSE 0 END AS x FROM acc_orders) s", nil, org},
	{"compared with an average", "SELECT count(*) FROM acc_orders WHERE amount > (SELECT avg(amount) FROM acc_orders)", nil, acc},
	{"correlated average", "SELECT sum(o.amount) FROM acc_orders o WHERE o.qty < (SELECT 0.2 * avg(i.qty) * 5 FROM acc_orders i WHERE i.customer_id = o.customer_id)", nil, acc},
	{"having an average", "SELECT status, count(*) FROM acc_orders GROUP BY status HAVING avg(amount) > 499.5 ORDER BY status", nil, acc},
	{"average in a join condition", "SELECT count(*) FROM acc_orders o JOIN acc_customers c ON c.id = o.customer_id AND o.amount * 2 > (SELECT avg(amount) FROM acc_orders)", nil, acc},
	{"average printed inside an expression", "SELECT avg(amount) * 2 FROM acc_orders", nil, org},
	{"rounded conditional sums", "SELECT status, round(sum(CASE WHEN qty > 5 THEN amount ELSE 0 END), 1), round(sum(CASE WHEN qty > 50 THEN amount * 1.005 ELSE 0 END)), CAST(sum(CASE WHEN qty > 2 THEN amount * 1.25 ELSE 0 END) AS numeric(14,3)) FROM acc_orders GROUP BY status ORDER BY status", nil, acc},
	{"round to more digits", "SELECT id, round(CASE WHEN qty > 4 THEN amount ELSE -qty END, 4) FROM acc_orders ORDER BY id LIMIT 12", nil, acc},
	{"round of integers", "SELECT id, round(qty, 2), round(CASE WHEN qty > 3 THEN qty ELSE 0 END, 1) FROM acc_orders ORDER BY id LIMIT 5", nil, acc},
	{"round in a subquery output", "SELECT r FROM (SELECT round(qty, 2) AS r FROM acc_orders WHERE id < 4) s ORDER BY r", nil, org},
	{"round to more digits than stored", "SELECT sum(amount) FILTER (WHERE round(amount, 3) > 500), round(sum(amount), 4), count(*) FILTER (WHERE amount > (SELECT avg(amount) FROM acc_orders)) FROM acc_orders", nil, acc},
	{"trunc with digits", "SELECT trunc(amount, 1) FROM acc_orders WHERE id < 4 ORDER BY id", nil, org},
	{"abs of numeric", "SELECT abs(amount - 500) FROM acc_orders ORDER BY id LIMIT 5", nil, anyRoute},
	{"ceil and floor of numeric", "SELECT ceil(amount), floor(amount), ceiling(amount) FROM acc_orders ORDER BY id LIMIT 5", nil, anyRoute},
	{"sign of numeric", "SELECT sign(amount - 500) FROM acc_orders ORDER BY id LIMIT 5", nil, anyRoute},
	{"mod of numeric", "SELECT mod(amount, 7), amount % 7 FROM acc_orders ORDER BY id LIMIT 5", nil, anyRoute},
	{"unary minus and plus", "SELECT -amount, +amount FROM acc_orders ORDER BY id LIMIT 5", nil, anyRoute},
	{"round without digits", "SELECT round(amount), round(n) FROM acc_orders, acc_types WHERE acc_orders.id < 3 ORDER BY acc_orders.id, acc_types.id LIMIT 5", nil, anyRoute},
	{"integer arithmetic", "SELECT qty * 2, qty - 1, qty % 4, -qty, abs(-qty) FROM acc_orders ORDER BY id LIMIT 5", nil, anyRoute},
	{"sums and extremes", "SELECT sum(qty), sum(id), max(amount), min(amount * 2) FROM acc_orders", nil, anyRoute},
	{"numeric arithmetic with literals", "SELECT amount * 1.5, amount * qty, amount + 0.005 FROM acc_orders ORDER BY id LIMIT 5", nil, anyRoute},
	{"greatest and least", "SELECT greatest(amount, 100), least(qty, 3) FROM acc_orders ORDER BY id LIMIT 5", nil, anyRoute},
	{"numeric extremes and sum", "SELECT min(n), max(n), sum(n) FROM acc_types", nil, anyRoute},
	{"trunc without digits", "SELECT trunc(amount) FROM acc_orders ORDER BY id LIMIT 5", nil, anyRoute},
	{"numeric literals", "SELECT 1.50, 2.0 * 3, 10 FROM acc_orders WHERE id = 1", nil, anyRoute},
	{"union numeric scales", "SELECT amount FROM acc_orders WHERE id = 1 UNION ALL SELECT 0", nil, org},
	{"cast to unconstrained numeric", "SELECT (weight * 0.001)::numeric FROM acc_orders WHERE id <= 3 ORDER BY id", nil, org},
	{"integer case", "SELECT sum(CASE WHEN status = 'paid' THEN 1 ELSE 0 END) FROM acc_orders", nil, acc},

	{"subquery column named like a table", "SELECT acc_customers FROM (SELECT name AS acc_customers FROM acc_customers) s ORDER BY 1 LIMIT 3", nil, acc},
	{"whole-row reference", "SELECT c FROM acc_customers c ORDER BY c.id LIMIT 2", nil, org},

	// Left to the origin on purpose.
	{"now is session dependent", "SELECT count(*) FROM acc_orders WHERE created_at < now()", nil, org},
	{"catalog", "SELECT count(*) FROM pg_class WHERE relname = 'acc_orders'", nil, org},
	{"not accelerated", "SELECT * FROM acc_plain", nil, org},
	{"regclass", "SELECT 'acc_orders'::regclass::oid > 0", nil, org},
	{"values only", "VALUES (1, 'a'), (2, 'b')", nil, org},
	{"for update", "SELECT id FROM acc_orders WHERE id = 1 FOR UPDATE", nil, org},
}
