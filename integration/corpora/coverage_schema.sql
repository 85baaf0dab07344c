-- Origin tables of the coverage corpus (coverage.sql): a small retail star
-- schema (customers, products, orders, order items), a clickstream, an
-- employee tree and one table holding every supported type with NULLs and
-- edge values. Deterministic: generate_series and arithmetic only.
DROP TABLE IF EXISTS cov_order_items, cov_orders, cov_events, cov_products, cov_customers, cov_employees, cov_typed CASCADE;

CREATE TABLE cov_customers (
    id           int PRIMARY KEY,
    name         text NOT NULL,
    email        text,
    country      text,
    city         text,
    segment      text NOT NULL,
    created_at   timestamptz NOT NULL,
    birth_date   date,
    is_active    bool,
    score        float8,
    loyalty_tier int NOT NULL,
    credit_limit numeric(12, 2),
    referred_by  int
);
INSERT INTO cov_customers
SELECT g,
       f.first || ' ' || l.last,
       CASE WHEN g % 37 = 0 THEN NULL
            ELSE lower(f.first) || '.' || lower(l.last) || g || '@' || (ARRAY['example.com', 'mail.test', 'corp.example', 'shop.test'])[1 + g % 4] END,
       CASE WHEN g % 41 = 0 THEN NULL ELSE (ARRAY['US', 'CA', 'GB', 'DE', 'FR', 'BR', 'JP', 'AU', 'IN', 'MX'])[1 + g % 10] END,
       CASE WHEN g % 41 = 0 THEN NULL ELSE (ARRAY[
           'New York', 'Chicago', 'Seattle',
           'Toronto', 'Vancouver', 'Montreal',
           'London', 'Manchester', 'Edinburgh',
           'Berlin', 'Munich', 'Hamburg',
           'Paris', 'Lyon', 'Marseille',
           'Sao Paulo', 'Rio de Janeiro', 'Curitiba',
           'Tokyo', 'Osaka', 'Kyoto',
           'Sydney', 'Melbourne', 'Brisbane',
           'Mumbai', 'Delhi', 'Bangalore',
           'Mexico City', 'Guadalajara', 'Monterrey'])[1 + (g % 10) * 3 + (g / 10) % 3] END,
       (ARRAY['consumer', 'corporate', 'home office', 'small business'])[1 + (g * 7) % 4],
       timestamptz '2021-01-01 08:00:00+00' + g * interval '2 days 3 hours 17 minutes 11 seconds',
       CASE WHEN g % 23 = 0 THEN NULL ELSE date '1950-01-01' + (g * 137) % 18000 END,
       CASE WHEN g % 50 = 0 THEN NULL ELSE g % 9 <> 0 END,
       CASE WHEN g % 29 = 0 THEN NULL ELSE ((g * 37) % 1000) / 10.0 + (g % 3) * 0.25 END,
       g % 5,
       CASE WHEN g % 31 = 0 THEN NULL ELSE 500 + (g * 137) % 9500 + (g % 100) / 100.0 END,
       CASE WHEN g > 10 AND g % 4 = 0 THEN 1 + (g * 7) % (g - 1) END
FROM generate_series(1, 300) g,
     LATERAL (SELECT (ARRAY['Ava', 'Ben', 'Chloe', 'Dan', 'Emma', 'Felix', 'Grace', 'Hugo', 'Iris', 'Jack',
                            'Kira', 'Liam', 'Maya', 'Noah', 'Olga', 'Paul', 'Quinn', 'Rosa', 'Sam', 'Tara'])[1 + g % 20] AS first) f,
     LATERAL (SELECT (ARRAY['Smith', 'Jones', 'Garcia', 'Muller', 'Martin', 'Silva', 'Tanaka', 'Brown', 'Patel',
                            'Lopez', 'Wilson', 'Dubois', 'Schmidt', 'Kim', 'Novak', 'Rossi', 'Young'])[1 + (g * 3) % 17] AS last) l;

CREATE TABLE cov_products (
    id           int PRIMARY KEY,
    sku          text NOT NULL UNIQUE,
    name         text NOT NULL,
    category     text NOT NULL,
    subcategory  text NOT NULL,
    brand        text,
    price        numeric(10, 2) NOT NULL,
    cost         numeric(10, 2) NOT NULL,
    weight_kg    float4,
    launched     date NOT NULL,
    discontinued bool NOT NULL,
    rating       numeric(3, 2),
    tags         text[]
);
INSERT INTO cov_products
SELECT g,
       'SKU-' || lpad(g::text, 5, '0'),
       (ARRAY['basic', 'classic', 'deluxe', 'eco', 'pro', 'ultra', 'mini', 'smart'])[1 + (g * 5) % 8] || ' ' || s.sub || ' ' || g,
       c.cat,
       s.sub,
       CASE WHEN g % 13 = 0 THEN NULL ELSE (ARRAY['acme', 'globex', 'initech', 'umbrella', 'stark'])[1 + (g * 3) % 5] END,
       p.price,
       round(p.price * (0.45 + (g % 5) * 0.07), 2),
       CASE WHEN g % 17 = 0 THEN NULL ELSE ((g * 13) % 250) / 10.0 + 0.25 END,
       date '2018-01-01' + g * 23,
       g % 11 = 0,
       CASE WHEN g % 7 = 0 THEN NULL ELSE 2.5 + ((g * 19) % 250) / 100.0 END,
       CASE g % 5 WHEN 0 THEN ARRAY['new', 'featured'] WHEN 1 THEN ARRAY['sale'] WHEN 2 THEN '{}'::text[]
                  WHEN 3 THEN NULL ELSE ARRAY['featured', 'bestseller', 'sale'] END
FROM generate_series(1, 60) g,
     LATERAL (SELECT (ARRAY['electronics', 'furniture', 'office', 'clothing', 'grocery', 'toys'])[1 + g % 6] AS cat) c,
     LATERAL (SELECT (ARRAY['phones', 'chairs', 'paper', 'shirts', 'coffee', 'puzzles',
                            'laptops', 'desks', 'pens', 'jackets', 'snacks', 'games',
                            'cables', 'shelves', 'binders', 'shoes', 'tea', 'dolls'])[1 + g % 6 + 6 * ((g / 6) % 3)] AS sub) s,
     LATERAL (SELECT round(4.99 + ((g * 7919) % 50000) / 100.0, 2) AS price) p;

CREATE TABLE cov_orders (
    id            bigint PRIMARY KEY,
    customer_id   int NOT NULL REFERENCES cov_customers (id),
    order_date    date NOT NULL,
    ordered_at    timestamptz NOT NULL,
    shipped_at    timestamp,
    status        text NOT NULL,
    channel       text,
    currency      text NOT NULL,
    shipping_cost numeric(8, 2),
    amount        numeric(12, 2),
    tags          text[],
    attrs         jsonb
);
INSERT INTO cov_orders
SELECT g,
       1 + (g * 37) % (120 + (g % 7) * 26),
       (t.ts AT TIME ZONE 'UTC')::date,
       t.ts,
       CASE WHEN s.status IN ('pending', 'cancelled') THEN NULL
            ELSE (t.ts AT TIME ZONE 'UTC') + (g % 5) * interval '1 day' + (g % 11) * interval '1 hour 7 minutes' END,
       s.status,
       CASE WHEN g % 53 = 0 THEN NULL ELSE (ARRAY['web', 'mobile', 'store', 'phone'])[1 + (g * 3 + g / 7) % 4] END,
       CASE WHEN g % 7 = 0 THEN 'EUR' ELSE 'USD' END,
       CASE WHEN g % 19 = 0 THEN NULL ELSE (g % 4) * 2.5 + 0.99 END,
       NULL,
       CASE g % 6 WHEN 0 THEN ARRAY['gift', 'promo'] WHEN 1 THEN '{}'::text[] WHEN 2 THEN ARRAY['promo']
                  WHEN 3 THEN NULL WHEN 4 THEN ARRAY['vip', 'gift', 'rush'] ELSE ARRAY['rush'] END,
       CASE WHEN g % 17 = 0 THEN NULL ELSE
           jsonb_build_object(
               'source', (ARRAY['google', 'newsletter', 'direct', 'facebook', 'partner'])[1 + g % 5],
               'device', (ARRAY['desktop', 'ios', 'android'])[1 + (g / 3) % 3],
               'gift_wrap', g % 9 = 0,
               'priority', g % 4,
               'utm', jsonb_build_object('campaign', 'c' || (g % 12), 'medium', (ARRAY['cpc', 'email', 'social'])[1 + g % 3]))
           || CASE WHEN g % 3 = 0 THEN jsonb_build_object('coupon', 'SAVE' || (5 + g % 4 * 5)) ELSE '{}'::jsonb END
           || CASE WHEN g % 10 = 0 THEN jsonb_build_object('notes', jsonb_build_array('fragile', g % 2 = 0, g)) ELSE '{}'::jsonb END
       END
FROM generate_series(1, 1200) g,
     LATERAL (SELECT timestamptz '2023-01-01 00:00:00+00' + ((g * 7) % 730) * interval '1 day'
                     + ((g * 3607) % 86400) * interval '1 second' AS ts) t,
     LATERAL (SELECT CASE WHEN g % 20 < 7 THEN 'delivered' WHEN g % 20 < 11 THEN 'shipped' WHEN g % 20 < 15 THEN 'paid'
                          WHEN g % 20 < 17 THEN 'pending' WHEN g % 20 < 19 THEN 'cancelled' ELSE 'refunded' END AS status) s;

CREATE TABLE cov_order_items (
    id         bigint PRIMARY KEY,
    order_id   bigint NOT NULL REFERENCES cov_orders (id),
    line_no    int NOT NULL,
    product_id int NOT NULL REFERENCES cov_products (id),
    quantity   int NOT NULL,
    unit_price numeric(10, 2) NOT NULL,
    discount   numeric(4, 3),
    UNIQUE (order_id, line_no)
);
INSERT INTO cov_order_items
SELECT row_number() OVER (ORDER BY o.g, l.line), o.g, l.line, p.id,
       1 + (o.g + l.line * 3) % 7,
       CASE WHEN (o.g + l.line) % 13 = 0 THEN round(p.price * 0.9, 2) ELSE p.price END,
       CASE WHEN (o.g + l.line) % 23 = 0 THEN NULL
            ELSE (ARRAY[0, 0, 0.05, 0, 0.1, 0, 0.15, 0.025])[1 + (o.g * 3 + l.line) % 8] END
FROM generate_series(1, 1200) o(g)
CROSS JOIN LATERAL generate_series(1, 1 + o.g % 4) l(line)
JOIN cov_products p ON p.id = 1 + (o.g * 31 + l.line * 17) % 60;

UPDATE cov_orders o
SET amount = s.amount
FROM (SELECT order_id, round(sum(quantity * unit_price * (1 - coalesce(discount, 0))), 2) AS amount
      FROM cov_order_items GROUP BY order_id) s
WHERE s.order_id = o.id AND o.id % 97 <> 0;

CREATE TABLE cov_events (
    id          bigint PRIMARY KEY,
    user_id     int,
    session_id  uuid NOT NULL,
    event_type  text NOT NULL,
    occurred_at timestamptz NOT NULL,
    duration    interval,
    page        text,
    referrer    text,
    revenue     numeric(10, 2),
    payload     json,
    properties  jsonb
);
INSERT INTO cov_events
SELECT g,
       CASE WHEN g % 43 = 0 THEN NULL ELSE 1 + (g / 5 * 53) % 300 END,
       md5('session-' || (g / 5))::uuid,
       e.et,
       timestamptz '2024-01-01 00:00:00+00' + (g / 5) * interval '10 hours 57 minutes' + (g % 5) * interval '1 minute 13.25 seconds',
       CASE WHEN g % 11 = 0 THEN NULL ELSE ((g * 17) % 600) * interval '1 second' + (g % 4) * interval '250 milliseconds' END,
       (ARRAY['/', '/products', '/products/detail', '/cart', '/checkout', '/account', '/blog/post'])[1 + g % 7],
       CASE WHEN g % 5 <> 0 THEN NULL ELSE (ARRAY['https://google.com/search', 'https://news.example/a', 'https://t.co/x'])[1 + g % 3] END,
       CASE WHEN e.et = 'purchase' THEN 10 + ((g * 7919) % 40000) / 100.0 END,
       CASE WHEN g % 13 = 0 THEN NULL
            ELSE json_build_object('page', '/p/' || (g % 40), 'ab', (ARRAY['control', 'variant_a', 'variant_b'])[1 + g % 3], 'ms', (g * 31) % 2000) END,
       CASE WHEN g % 19 = 0 THEN NULL ELSE
           jsonb_build_object(
               'browser', (ARRAY['chrome', 'firefox', 'safari', 'edge'])[1 + (g / 5) % 4],
               'os', (ARRAY['windows', 'macos', 'linux', 'ios', 'android'])[1 + (g / 5) % 5],
               'screen', jsonb_build_object('w', (ARRAY[1920, 1440, 390, 1280])[1 + (g / 5) % 4], 'h', (ARRAY[1080, 900, 844, 720])[1 + (g / 5) % 4]),
               'items', CASE WHEN e.et IN ('add_to_cart', 'checkout', 'purchase')
                             THEN jsonb_build_array(1 + g % 60, 1 + (g * 7) % 60) ELSE '[]'::jsonb END,
               'logged_in', g % 43 <> 0)
           || CASE WHEN e.et = 'purchase' THEN jsonb_build_object('amount', 10 + ((g * 7919) % 40000) / 100.0, 'currency', 'USD') ELSE '{}'::jsonb END
       END
FROM generate_series(1, 2000) g,
     LATERAL (SELECT (ARRAY['page_view', 'page_view', 'click', 'page_view', 'add_to_cart', 'click', 'checkout',
                            'page_view', 'purchase', 'signup', 'logout'])[1 + (g * 7 + g / 5) % 11] AS et) e;

CREATE TABLE cov_employees (
    id         int PRIMARY KEY,
    manager_id int REFERENCES cov_employees (id),
    name       text NOT NULL,
    title      text NOT NULL,
    dept       text NOT NULL,
    salary     numeric(12, 2) NOT NULL,
    hired      date NOT NULL,
    is_remote  bool NOT NULL
);
INSERT INTO cov_employees
SELECT g,
       CASE WHEN g = 1 THEN NULL WHEN g <= 5 THEN 1 WHEN g <= 15 THEN 2 + (g - 6) % 4 ELSE 6 + (g - 16) % 10 END,
       'emp_' || lpad(g::text, 3, '0'),
       CASE WHEN g = 1 THEN 'ceo' WHEN g <= 5 THEN 'vp' WHEN g <= 15 THEN 'manager' ELSE 'engineer' END,
       CASE WHEN g = 1 THEN 'executive'
            ELSE (ARRAY['sales', 'engineering', 'finance', 'marketing'])[1 + (CASE WHEN g <= 5 THEN g - 2 WHEN g <= 15 THEN (g - 6) % 4 ELSE ((g - 16) % 10) % 4 END)] END,
       CASE WHEN g = 1 THEN 250000 WHEN g <= 5 THEN 180000 + g * 1500 WHEN g <= 15 THEN 120000 + g * 975.5 ELSE 70000 + (g * 1733) % 40000 + 0.5 * (g % 2) END,
       date '2015-03-01' + g * 61,
       g % 3 = 0
FROM generate_series(1, 40) g;

CREATE TABLE cov_typed (
    id   int PRIMARY KEY,
    b    bool,
    i2   int2,
    i4   int4,
    i8   int8,
    f4   float4,
    f8   float8,
    n    numeric(14, 4),
    nu   numeric,
    t    text,
    vc   varchar(20),
    ch   char(8),
    d    date,
    tm   time,
    ts   timestamp,
    tstz timestamptz,
    iv   interval,
    u    uuid,
    j    json,
    jb   jsonb,
    by   bytea,
    ai   int4[],
    at   text[],
    an   numeric(8, 2)[],
    af   float8[],
    ad   date[]
);
INSERT INTO cov_typed VALUES
 (1, true, 1, 1, 1, 1.5, 1.5, 1.2345, 1.5, 'hello', 'hello', 'abc', '2024-01-15', '12:34:56', '2024-01-15 12:34:56', '2024-01-15 12:34:56+00', '1 day',
  '00000000-0000-0000-0000-000000000001', '{"a": 1, "b": "x"}', '{"a": 1, "b": "x"}', '\x0102', '{1,2,3}', '{a,b}', '{1.50,2.25}', '{1.5,2.5}', '{2024-01-01,2024-12-31}'),
 (2, false, 0, 0, 0, 0, 0, 0, 0, '', '', '', '1970-01-01', '00:00:00', '1970-01-01 00:00:00', '1970-01-01 00:00:00+00', '0 seconds',
  '00000000-0000-0000-0000-000000000000', '[]', '[]', '\x', '{}', '{}', '{}', '{}', '{}'),
 (3, false, -32768, -2147483648, -9223372036854775808, '-Infinity', '-Infinity', -9999999999.9999, -0.0001, 'it''s "quoted"', 'back\slash', 'x', '-infinity', '00:00:00.000001', '-infinity', '-infinity',
  '-1 year -2 mons -3 days -04:05:06.789', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '{"nested": {"deep": [true, false, null]}}', '{"nested": {"deep": [true, false, null]}}', '\x00ff', '{-2147483648,0,2147483647}', '{"a,b","c\"d","{e}",NULL,"NULL",""}', '{-999999.99,0.01}', '{-Infinity,-1e-300}', '{-infinity,1970-01-01}'),
 (4, true, 32767, 2147483647, 9223372036854775807, 'Infinity', 'Infinity', 9999999999.9999, 123456789012345678901234567890.123456789, 'unicode: héllo wörld ✓ 日本', 'trailing   ', 'full8chr', 'infinity', '23:59:59.999999', 'infinity', 'infinity',
  '100 years 11 mons 29 days 23:59:59.999999', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"k": "ü", "n": 1.0e+2}', '{"k": "ü", "n": 1.0e+2}', '\xdeadbeef', '{NULL,1,NULL}', '{"with space","back\\slash","quote''s"}', '{NULL,999999.99}', '{Infinity,NaN}', '{infinity,NULL}'),
 (5, true, 5, 5, 5, 'NaN', 'NaN', 0.0001, 0.00000000000000000001, E'line1\nline2\ttab', 'tab	in', 'ab', '0001-01-01', '00:00:00', '0001-01-01 00:00:00', '0001-01-01 00:00:00+00', '1 mon 2 days 00:00:00.000001',
  '11111111-2222-3333-4444-555555555555', 'null', 'null', '\x5c27', '{5,5,5}', '{NULL}', '{0.00}', '{NaN}', '{0001-01-01}'),
 (6, false, -1, -1, -1, '-0', '-0', -0.0001, -12345678901234567890, 'BC era', 'bc', 'bc', '4713-01-01 BC', '01:02:03', '0500-06-15 10:00:00 BC', '0044-03-15 12:00:00+00 BC', '-00:00:01',
  '12345678-1234-1234-1234-123456789012', '"just a string"', '"just a string"', '\x27', '{-1}', '{x}', '{-0.01}', '{-0}', '{0044-03-15 BC}'),
 (7, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (8, true, 100, 100000, 10000000000, 1e-38, 1e-300, 0.5, 1e-30, 'tiny', 'tiny', 'tiny', '9999-12-31', '23:59:59', '9999-12-31 23:59:59.999999', '9999-12-31 23:59:59.999999+00', '-1 mon 1 day -00:00:00.000001',
  '22222222-2222-2222-2222-222222222222', '1', '1', '\x00', '{0}', '{""}', '{1.00}', '{1e-300}', '{9999-12-31}'),
 (9, false, 7, 70000, 7000000000000, 3.4028235e38, 1.7976931348623157e308, 42.4200, 1e30, 'huge', 'huge', 'huge', '2000-02-29', '04:05:06.789', '2000-02-29 23:59:59.123456', '2024-03-10 02:30:00.5-08', '3 days 04:05:06',
  '33333333-3333-3333-3333-333333333333', '{ "k" : [1, 2, {"x": null}] }', '{"b": {"c": [1, 2.50, "x"]}, "a": null}', '\x61', '{7,8,9}', '{q,r}', '{5.50,6.60}', '{1.7976931348623157e308}', '{2000-02-29,2000-03-01}'),
 (10, true, -7, -42, -4200000000, -123.456, -123.456, -0.5, -3.14159265358979323846264338327950288, '  padded  ', 'hello world', 'HELLO', '1999-12-31', '23:00:00', '1999-12-31 23:59:59', '1999-12-31 23:59:59-05', '-3 days 02:00:00',
  '44444444-4444-4444-4444-444444444444', '{"a":"b"}', '{"a":"b"}', '\x7a7a', '{10,20}', '{"{braces}","comma,here"}', '{10.10,20.20}', '{-0.5,0.25}', '{1999-12-31}'),
 (11, true, 11, 1100, 110000, 2.5, 3.141592653589793, 3.1416, 3.14159265358979323846264338327950288, 'Hello World', 'hello', 'hi', '2024-02-29', '12:00:00', '2024-02-29 12:00:00', '2024-02-29 12:00:00+01', '1 year 2 mons',
  'c0ffee00-0000-4000-8000-000000000011', '[1, "two", 3.0]', '[1, "two", 3.0]', '\x010203', '{11}', '{hello,world}', '{1.10}', '{2.5}', '{2024-02-29}'),
 (12, NULL, 12, 12, 12, 0.1, 0.1, 0.1000, 0.1, 'NULL', 'null', 'null', '2024-12-31', '18:30:00', '2024-12-31 18:30:00', '2024-12-31 18:30:00+00', '36 hours',
  'c0ffee00-0000-4000-8000-000000000012', '{}', '{}', '\x', '{1,2}', '{NULL,NULL}', '{0.10,0.20}', '{0.1,0.2}', '{NULL}');

GRANT SELECT ON cov_customers, cov_products, cov_orders, cov_order_items, cov_events, cov_employees, cov_typed TO PUBLIC;
ANALYZE cov_customers, cov_products, cov_orders, cov_order_items, cov_events, cov_employees, cov_typed;
