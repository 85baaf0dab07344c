-- Origin tables for the acceleration tests: every supported type, with
-- NULLs and edge values, plus a small star schema for joins.
DROP TABLE IF EXISTS acc_special, acc_coll, acc_time24, acc_types, acc_orders, acc_customers, acc_plain, acc_secret, acc_rls CASCADE;
DROP SCHEMA IF EXISTS other CASCADE;

CREATE TABLE acc_types (
    id      int PRIMARY KEY,
    b       bool,
    i2      int2,
    i4      int4,
    i8      int8,
    f4      float4,
    f8      float8,
    n       numeric(20, 4),
    n0      numeric(10, 0),
    t       text,
    vc      varchar(20),
    c       char(6),
    d       date,
    tm      time,
    ts      timestamp,
    tstz    timestamptz,
    iv      interval,
    u       uuid,
    j       json,
    jb      jsonb,
    by      bytea,
    ai      int4[],
    at      text[],
    an      numeric(8, 2)[]
);
INSERT INTO acc_types VALUES
 (1, true, 1, 1, 1, 1.5, 1.5, 1.5, 1, 'one', 'one', 'one', '2024-01-01', '00:00:01', '2024-01-01 00:00:00', '2024-01-01 00:00:00+00', '1 day', '00000000-0000-0000-0000-000000000001', '{"a": 1}', '{"a": 1, "b": [1, 2]}', '\x00', '{1,2,3}', '{a,b}', '{1.50,2.25}'),
 (2, false, -32768, -2147483648, -9223372036854775808, -3.4e38, -1.7976931348623157e308, -9999999999999999.9999, -9999999999, '', '', '', '0001-01-01', '23:59:59.999999', '0001-01-01 00:00:00', '0001-01-01 00:00:00+00', '-1 year -2 months -3 days -04:05:06.789', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '[]', '[]', '\x', '{}', '{}', '{}'),
 (3, NULL, 32767, 2147483647, 9223372036854775807, 'NaN', 'NaN', 9999999999999999.9999, 9999999999, 'quote '' and "double" and \ back', 'tab	and newline
x', 'ab', '9999-12-31', '12:34:56.5', '9999-12-31 23:59:59.999999', '9999-12-31 23:59:59.999999+00', '178000000 years', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"nested": {"x": [true, false, null]}, "s": "ü"}', '{"b": 2, "a": 1, "a": 3}', '\xdeadbeef', '{NULL,1,NULL}', '{"with space","",NULL,"NULL","{braces}","quote\"","back\\slash"}', '{NULL}'),
 (4, true, 0, 0, 0, 'Infinity', 'Infinity', 0, 0, 'unicode: 日本語 ✓ €', 'x', 'abcdef', 'infinity', '00:00:00', 'infinity', 'infinity', '00:00:00', '12345678-1234-1234-1234-123456789012', 'null', 'null', '\x0001027f80ff', '{-1}', '{x}', '{0.00}'),
 (5, false, 7, 7, 7, '-Infinity', '-Infinity', 0.0001, 7, 'trailing spaces   ', 'trailing  ', 'a', '-infinity', '23:00:00', '-infinity', '-infinity', '1 mon 2 days 00:00:00.000001', NULL, '"string"', '"string"', NULL, NULL, NULL, NULL),
 (6, true, 42, 42, 42, -0.0, -0.0, -0.0001, -7, 'x', 'y', 'zz', '2000-02-29', '01:02:03', '2000-02-29 01:02:03.5', '2000-02-29 01:02:03.456789+05:30', '0.5 seconds', NULL, '{"k": 1.0e+2}', '{"k": 1.0e+2}', '\x5c', '{2147483647,-2147483648}', '{"a,b"}', '{-999999.99}'),
 (7, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (8, true, 100, 100000, 10000000000, 3.14159, 2.718281828459045, 123.4560, 12345, 'BC', 'bc', 'bc', '0044-03-15 BC', '13:00:00', '1999-12-31 23:59:59', '1970-01-01 00:00:00+00', '-00:00:01', '00000000-0000-0000-0000-000000000000', '1', '1', '\x27', '{0}', '{""}', '{1.00}'),
 (9, false, -1, -1, -1, 1e-10, 1e-300, 1e-4, -1, 'a', 'b', 'c', '1999-01-08', '04:05:06.789', '1999-01-08 04:05:06', '1999-01-08 04:05:06-08', '3 days 04:05:06', '11111111-2222-3333-4444-555555555555', '{"a":"b"}', '{"a":"b"}', '\x61', '{5,5}', '{q}', '{5.5}'),
 (10, true, 2, 123456789, 1234567890123456789, 1e30, 1e15, 0.5, 2, 'z', 'z', 'zzzzzz', '2024-03-10', '02:30:00', '2024-03-10 02:30:00', '2024-03-10 07:30:00+00', '1 year', '22222222-2222-2222-2222-222222222222', '{"z":0}', '{"z":0}', '\x7a', '{9}', '{z}', '{9.99}');

CREATE TABLE acc_customers (
    id      int PRIMARY KEY,
    name    text NOT NULL,
    country text,
    signup  date
);
INSERT INTO acc_customers
SELECT g, 'customer ' || g, (ARRAY['DE', 'FR', 'US', NULL, 'JP'])[1 + g % 5], date '2023-01-01' + g
FROM generate_series(1, 200) g;

CREATE TABLE acc_orders (
    id          bigint PRIMARY KEY,
    customer_id int REFERENCES acc_customers (id),
    status      text,
    amount      numeric(12, 2),
    qty         int,
    weight      float8,
    created_at  timestamptz,
    day         date
);
INSERT INTO acc_orders
SELECT g,
       1 + (g * 37) % 200,
       (ARRAY['new', 'paid', 'shipped', 'cancelled', NULL])[1 + g % 5],
       round(((g::bigint * 7919) % 100000) / 100.0, 2),
       1 + g % 9,
       ((g * 13) % 1000) / 7.0,
       timestamptz '2024-01-01 00:00:00+00' + g * interval '37 minutes',
       date '2024-01-01' + (g % 90)
FROM generate_series(1, 5000) g;

-- time 24:00:00 is kept by DuckDB but read back as 00:00:00: the column is
-- left to the origin.
CREATE TABLE acc_time24 (id int PRIMARY KEY, tm time);
INSERT INTO acc_time24 VALUES (1, '24:00:00'), (2, '12:00:00');

-- Values Postgres holds that the columns' DuckDB types cannot: numeric NaN
-- (also inside arrays), a two-dimensional array, an array not starting at
-- 1. The load leaves those columns out (reads of them go to the origin);
-- the rest, with ±infinity inside arrays and extreme intervals, is
-- accelerated.
CREATE TABLE acc_special (
    id      int PRIMARY KEY,
    amount  numeric(12, 2),
    price   numeric(8, 3),
    amounts numeric(6, 2)[],
    grid    int[],
    zero    int[],
    ds      date[],
    tss     timestamp[],
    tstzs   timestamptz[],
    f8s     float8[],
    iv      interval,
    ivs     interval[],
    big     numeric(38, 10)
);
INSERT INTO acc_special VALUES
 (1, 10.50, 1.250, '{1.25,2.50}', '{1,2}', '{1}', '{2024-01-01,infinity,-infinity}', '{infinity,-infinity,2024-01-01 00:00:00}', '{infinity,-infinity}', '{NaN,Infinity,-Infinity,-0}', '178000000 years', '{"-178000000 years","2147483647 days"}', 9999999999999999999999999999.9999999999),
 (2, 'NaN', 2.500, '{3.75}', '{{1,2},{3,4}}', '{2}', '{}', NULL, '{2000-01-01 00:00:00+00}', '{}', '-2147483648 days -2562047788:00:54.775807', '{"2147483647 mons 2147483647 days 2562047788:00:54.775807"}', -9999999999999999999999999999.9999999999),
 (3, 20.00, NULL, '{NaN,1.00}', '{3}', '[0:1]={5,6}', '{0001-01-01 BC,4714-11-24 BC,5874897-12-31}', '{4713-01-01 00:00:00 BC,4714-11-24 00:00:00 BC,294246-12-31 23:59:59.999999}', '{294246-12-31 23:59:59.999999+00}', '{1e308}', '-178000000 years', '{}', 0.0000000001),
 (4, NULL, 4.000, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (5, 'NaN', 5.125, '{}', '{}', '{}', '{infinity}', '{-infinity}', '{-infinity}', '{-1e-308}', '1 mon -1 days 00:00:00.000001', '{"-1 mons +1 days -00:00:00.000001"}', 1);

-- A linguistic collation: ordering by it differs from DuckDB's bytewise one.
CREATE TABLE acc_coll (id int PRIMARY KEY, name text COLLATE "en-x-icu", code text);
INSERT INTO acc_coll VALUES (1, 'b', 'b'), (2, 'B', 'B'), (3, 'a', 'a'), (4, 'É', 'É'), (5, 'e', 'e');

-- Not accelerated: reads of it go to the origin.
CREATE TABLE acc_plain (id int PRIMARY KEY, v text);
INSERT INTO acc_plain VALUES (1, 'plain');

-- Accelerated, but user noaccess has no SELECT on it.
CREATE TABLE acc_secret (id int PRIMARY KEY, v text);
INSERT INTO acc_secret VALUES (1, 'secret');

-- Accelerated, with row level security.
CREATE TABLE acc_rls (id int PRIMARY KEY, owner text, v text);
INSERT INTO acc_rls VALUES (1, 'app', 'mine'), (2, 'someone', 'theirs');
ALTER TABLE acc_rls ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON acc_rls USING (owner = current_user);

-- A second schema with its own "acc_orders" for search_path tests.
CREATE SCHEMA other;
CREATE TABLE other.acc_orders (id bigint PRIMARY KEY, note text);
INSERT INTO other.acc_orders VALUES (1, 'from schema other');

GRANT USAGE ON SCHEMA other TO PUBLIC;
GRANT SELECT ON acc_types, acc_customers, acc_orders, acc_plain, acc_rls, acc_time24, acc_coll, acc_special, other.acc_orders TO app;
GRANT SELECT ON acc_types, acc_customers, acc_orders, acc_plain TO noaccess;
GRANT ALL ON acc_plain TO app;
GRANT UPDATE ON acc_orders TO app;
GRANT SELECT ON acc_types, acc_customers, acc_orders TO trustuser;
GRANT UPDATE ON acc_orders TO trustuser;
GRANT SELECT ON acc_secret TO app;
ANALYZE;
