-- Minimal statements for the classes of wrong answers TestGenerated found
-- (see /work/notes/gen-findings.md). Run them with
--   go test ./integration -run 'TestGenerated$' -count=1 -args -gen.file gen/testdata/findings.sql -gen.report
-- Each that still differs is reported with both answers.

-- name: F01 constant-folded error (zero rows)
SELECT 1 / 0 FROM gen_t WHERE false;

-- name: F01 constant-folded error (int overflow in a key lookup)
SELECT (SELECT c_int4 FROM gen_t s WHERE s.id = (-2147483648) * (-2147483648)) AS x FROM gen_w ORDER BY 1;

-- name: F02 mod() by zero
SELECT mod(c_int8, 0::int8) FROM gen_t;

-- name: F02b mod() by a zero column
SELECT mod(3::int8, c_int8) AS m FROM gen_t ORDER BY 1;

-- name: F03 ^ overflow
SELECT c_float8 ^ 1e200::float8 FROM gen_t;

-- name: F03b ^ of a negative number to a fraction
SELECT (-2.5::float8) ^ c_float8 FROM gen_u;

-- name: F04 nth_value(x, 0)
SELECT nth_value(c_int4, 0) OVER (ORDER BY id) FROM gen_t;

-- name: F04b negative frame offset on an empty table
SELECT sum(k) OVER (ORDER BY id ROWS -1 PRECEDING) FROM gen_e;

-- name: F05 interval typmod year
SELECT id, c_interval::interval year AS y FROM gen_t ORDER BY 1, 2;

-- name: F05b interval typmod day to minute
SELECT id, c_interval::interval day to minute AS y FROM gen_t ORDER BY 1, 2;

-- name: F06 timestamptz - timestamptz across a DST change
-- settings: TimeZone=Australia/Sydney
SELECT '1919-07-01 00:00:00+00'::timestamptz - '2024-11-03 08:30:00+00'::timestamptz FROM gen_w;

-- name: F06b timestamptz - interval of days across a DST change
-- settings: TimeZone=America/Los_Angeles
SELECT id, c_tstz - '1.5 days'::interval AS x FROM gen_u ORDER BY 1;

-- name: F07 count(t.*) of NULL-extended rows
SELECT count(u.*) FROM gen_t t LEFT JOIN gen_u u ON t.k = u.k;

-- name: F08 scoping of FROM subqueries (DuckDB's implicit LATERAL)
SELECT id, (SELECT r FROM (SELECT t.c_int4 AS k) x, (SELECT k AS r) y) AS r FROM gen_t t ORDER BY 1, 2;

-- name: F09 lead with a default of a wider type
SELECT id, lead(c_int4, 1, -1.4) OVER (ORDER BY id) AS l FROM gen_t ORDER BY 1, 2;

-- name: F10 FULL JOIN on a condition Postgres cannot merge or hash
SELECT count(*) FROM gen_t t FULL JOIN gen_u u ON t.c_bool;

-- name: F11 make_date with year 0
SELECT make_date(0, 1, 1) FROM gen_w;

-- name: F11b make_date with a negative year
SELECT make_date(-44, 3, 15) FROM gen_w;

-- name: F11c BC date literal
SELECT '0044-03-15 BC'::date AS d FROM gen_w;

-- name: F12 bytea hex literal
SELECT '\xdeadbeef'::bytea FROM gen_w;

-- name: F12b bytea hex literal in a comparison
SELECT id FROM gen_t WHERE c_bytea = '\xdeadbeef'::bytea;

-- name: F13 -0 sorted
SELECT id, '-0'::float4 AS z FROM gen_w ORDER BY 1, 2;

-- name: F13b -0 in a sorted float array
SELECT c_float8arr FROM gen_t ORDER BY 1;

-- name: F13c -0 kept by DISTINCT ON
SELECT DISTINCT ON (1) c_float8 FROM gen_u ORDER BY 1 DESC;

-- name: F14 max of char(n)
SELECT max('ab'::char(5)) FROM gen_w;

-- name: F14b GREATEST of char(n)
SELECT GREATEST(''::char(2), grp) AS g FROM gen_u ORDER BY 1;

-- name: F14c length of a bpchar literal
SELECT length('x  '::bpchar) FROM gen_w;

-- name: F14d varchar = char(n)
SELECT id FROM gen_t WHERE 'a  '::varchar = c_char ORDER BY 1;

-- name: F15 interval in a correlated scalar subquery
SELECT id, (SELECT t.c_interval) AS i FROM gen_t t ORDER BY 1;

-- name: F16 ORDER BY an exact avg
SELECT c_num, avg(c_int2) AS a FROM gen_t GROUP BY c_num ORDER BY 2, 1;

-- name: F17 string_agg with a NULL delimiter
SELECT string_agg(c_text, NULL ORDER BY c_text) FROM gen_t;

-- name: F18 ORDER BY jsonb
SELECT id, c_jsonb FROM gen_t ORDER BY 2, 1;

-- name: F18b jsonb comparison
SELECT a.id, b.id FROM gen_t a, gen_t b WHERE a.c_jsonb < b.c_jsonb ORDER BY 1, 2;

-- name: F18c jsonb || jsonb
SELECT id, c_jsonb || c_jsonb FROM gen_t ORDER BY 1;

-- name: F19 numeric array literal of mixed scales
SELECT ARRAY[1.5, 2] FROM gen_w;

-- name: F20 negative array subscript
SELECT id, c_int4arr[-1] FROM gen_t ORDER BY 1;

-- name: F21 date_trunc century and millennium
SELECT id, date_trunc('century', c_ts) AS c, date_trunc('millennium', c_ts) AS m FROM gen_t ORDER BY 1;

-- name: F22 timestamp(0) of infinity
SELECT id, c_ts::timestamp(0) FROM gen_t ORDER BY 1;

-- name: F23 extract of infinity
SELECT id, extract(isoyear from c_ts) AS y, extract(millennium from c_tstz) AS m FROM gen_t ORDER BY 1;

-- name: F24 string_to_array with NULL and empty delimiters
SELECT c_text, string_to_array(c_text, NULL) AS a, string_to_array(c_text, '') AS b FROM gen_u ORDER BY 1;

-- name: F25 concat of non-text values
SELECT id, concat(c_bool, c_float8, c_interval) FROM gen_t ORDER BY 1;

-- name: F26 make_time(24, 0, 0)
SELECT make_time(24, 0, 0) FROM gen_w;

-- name: F27 array_cat of NULL arrays
SELECT id, array_cat(c_int4arr, c_int4arr) FROM gen_t ORDER BY 1;

-- name: F28 ORDER BY interval
SELECT '-3 days 04:00:00'::interval + c_interval AS x FROM gen_t ORDER BY 1;

-- name: F29 int8 minus float4
SELECT 1000000000000::int8 - '2.5'::float4 FROM gen_w;

-- name: F30 percentile_cont over infinities
SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY c_float8) FROM gen_t WHERE c_float8 = 'Infinity';

-- name: F31 shift by a negative count
SELECT c_int2 >> -1 FROM gen_t;

-- name: F32 jsonb -> negative index
SELECT id, c_jsonb -> -1 AS e FROM gen_t ORDER BY 1;

-- name: F33 jsonb ->> 0
SELECT id, c_jsonb ->> 0 AS e FROM gen_t ORDER BY 1;

-- name: F35 extract(hour from date)
SELECT extract(hour from c_date) FROM gen_t;

-- name: F36 age of infinite timestamps
SELECT age(c_ts, c_ts) FROM gen_t;

-- name: F37 jsonb cast to int of a string
SELECT (c_jsonb -> 0)::int4 FROM gen_u;

-- name: F39 array containment with NULL elements
SELECT id, c_int4arr <@ c_int4arr AS c FROM gen_t ORDER BY 1;

-- name: F40 typmod of a CASE Postgres simplifies
SELECT CASE WHEN true THEN 'a'::char(3) ELSE 'x'::bpchar END FROM gen_w;

-- name: F40b typmod of a COALESCE Postgres simplifies
SELECT COALESCE(NULL::varchar, c_varchar) FROM gen_t;

-- name: F41 split_part field 0
SELECT split_part(c_text, 'a', 0) FROM gen_t;

-- name: F42 row comparison with NULLs
SELECT id FROM gen_u WHERE (k, c_text) < (c_int4, '42'::text) ORDER BY 1;

-- name: F43 float4 times a bigint
SELECT id, '-3.4e38'::float4 * c_int8 AS x FROM gen_t ORDER BY 1;

-- name: F44 bpchar || text
SELECT 'x  '::bpchar || v FROM gen_w;


-- name: F48 binary array header: the has-nulls flag of a slice
-- extended
SELECT id, c_int4arr[2:2] AS s FROM gen_t ORDER BY 1;

-- name: F49 degrees overflow
SELECT degrees(c_float8) FROM gen_t;

-- name: F49b radians underflow
SELECT radians(c_float8) FROM gen_t;

-- name: F53 chr(0)
SELECT chr(0) FROM gen_w;

-- name: F14e char(n) LIKE with trailing spaces
SELECT id FROM gen_t WHERE c_char LIKE '%  ' ORDER BY 1;

-- name: F42b row equality with NULLs
SELECT count(*) FROM gen_t WHERE (c_num0, c_date) = (c_num0, c_date);

-- name: F14f text = bpchar
SELECT count(*) FROM gen_t WHERE c_text = c_text::bpchar;

-- name: F06d timestamptz - timestamptz over historic offsets
-- settings: TimeZone=America/Los_Angeles
SELECT '1919-07-01 00:00:00+00'::timestamptz - '1900-01-01 00:00:00+00'::timestamptz FROM gen_w;

-- name: F55 NULLIF of varchars (planner.Describe says varchar(10); the run's summary counts it)
SELECT NULLIF(c_varchar, grp::varchar) AS o2 FROM gen_t ORDER BY 1;

-- name: F56 decode(text, format) is another function in DuckDB
SELECT length(decode('3q2+7w==', 'base64')) AS n, length(decode('deadbeef', 'hex')) AS m FROM gen_w;

-- name: F58 narrowing casts inside comparisons do not overflow
SELECT id FROM gen_w WHERE n::int4 > 0 ORDER BY 1;

-- name: F51 int4 arithmetic of length() does not overflow (DuckDB's length is a bigint)
SELECT sum(length(c_text) - c_int4) FROM gen_t;

-- name: F59 interval literals under IntervalStyle sql_standard
-- settings: TimeZone=UTC; IntervalStyle=sql_standard
SELECT '-3 days 04:00:00'::interval AS i, c_ts + '-3 days 04:00:00'::interval AS x FROM gen_t WHERE id = 1;

-- name: F60 the deparser drops the parentheses of (a IS NOT DISTINCT FROM b) NOT IN (...)
SELECT DISTINCT (SELECT 1.5) FROM gen_t AS t1 WHERE ((c_num38 IS NOT DISTINCT FROM t1.c_num38) NOT IN (isfinite(t1.c_tstz), CASE c_tstz WHEN t1.c_tstz THEN t1.c_bool ELSE t1.c_bool END)) GROUP BY id;

-- name: F61 infinite dates subtracted through COALESCE
SELECT (COALESCE(t1.c_date, t1.c_date, c_date) - c_date) FROM gen_t AS t1 ORDER BY 1 ASC NULLS LAST LIMIT 1;
