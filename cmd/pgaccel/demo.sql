-- Sample data for `pgaccel demo` and docker-compose: a small shop.
CREATE TABLE IF NOT EXISTS customers (
    id         int PRIMARY KEY,
    name       text NOT NULL,
    country    text NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS orders (
    id          bigint PRIMARY KEY,
    customer_id int NOT NULL REFERENCES customers (id),
    status      text NOT NULL,
    amount      numeric(12, 2) NOT NULL,
    created_at  timestamptz NOT NULL
);
INSERT INTO customers
SELECT g,
       'customer ' || g,
       (ARRAY['DE', 'FR', 'US', 'JP', 'BR'])[1 + g % 5],
       timestamptz '2024-01-01 00:00:00+00' + g * interval '1 hour'
FROM generate_series(1, 1000) g
ON CONFLICT DO NOTHING;
INSERT INTO orders
SELECT g,
       1 + (g::bigint * 7919) % 1000,
       (ARRAY['new', 'paid', 'shipped', 'cancelled'])[1 + g % 4],
       round(((g::bigint * 104729) % 100000) / 100.0, 2),
       timestamptz '2024-01-01 00:00:00+00' + g * interval '1 minute'
FROM generate_series(1, 200000) g
ON CONFLICT DO NOTHING;
ANALYZE customers;
ANALYZE orders;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO PUBLIC;
