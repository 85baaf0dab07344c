-- Coverage corpus: read statements over the cov_* tables of coverage_schema.sql,
-- written the way Metabase, Superset, Looker, Tableau, dbt models and
-- hand-written dashboards write them. Each block starts with a name line,
-- then a style line, an optional point line (a read pinning a primary key)
-- and an optional args line (a JSON array of the parameters $1..$n; the
-- simple protocol inlines them, strings quoted and numbers bare), then one
-- statement ending in a semicolon.
-- Every statement is deterministic and, when it can return more than one
-- row, totally ordered, so answers compare byte for byte in row order.

-- name: metabase: orders by status
-- style: metabase
SELECT "public"."cov_orders"."status" AS "status", count(*) AS "count"
FROM "public"."cov_orders"
GROUP BY "public"."cov_orders"."status"
ORDER BY "public"."cov_orders"."status" ASC;

-- name: metabase: revenue by month
-- style: metabase
SELECT CAST(date_trunc('month', "public"."cov_orders"."ordered_at") AS timestamp) AS "ordered_at", sum("public"."cov_orders"."amount") AS "sum"
FROM "public"."cov_orders"
WHERE "public"."cov_orders"."status" <> 'cancelled'
GROUP BY CAST(date_trunc('month', "public"."cov_orders"."ordered_at") AS timestamp)
ORDER BY CAST(date_trunc('month', "public"."cov_orders"."ordered_at") AS timestamp) ASC;

-- name: metabase: orders table view
-- style: metabase
SELECT "public"."cov_orders"."id" AS "id", "public"."cov_orders"."customer_id" AS "customer_id", "public"."cov_orders"."order_date" AS "order_date", "public"."cov_orders"."ordered_at" AS "ordered_at", "public"."cov_orders"."shipped_at" AS "shipped_at", "public"."cov_orders"."status" AS "status", "public"."cov_orders"."channel" AS "channel", "public"."cov_orders"."currency" AS "currency", "public"."cov_orders"."shipping_cost" AS "shipping_cost", "public"."cov_orders"."amount" AS "amount", "public"."cov_orders"."tags" AS "tags", "public"."cov_orders"."attrs" AS "attrs"
FROM "public"."cov_orders"
ORDER BY "public"."cov_orders"."id" ASC
LIMIT 2000;

-- name: metabase: orders by week
-- style: metabase
SELECT CAST((CAST(date_trunc('week', CAST(("public"."cov_orders"."ordered_at" + INTERVAL '1 day') AS timestamp)) AS timestamp) + INTERVAL '-1 day') AS date) AS "ordered_at", count(*) AS "count"
FROM "public"."cov_orders"
WHERE ("public"."cov_orders"."ordered_at" >= timestamp with time zone '2024-01-01 00:00:00.000Z'
   AND "public"."cov_orders"."ordered_at" < timestamp with time zone '2024-04-01 00:00:00.000Z')
GROUP BY CAST((CAST(date_trunc('week', CAST(("public"."cov_orders"."ordered_at" + INTERVAL '1 day') AS timestamp)) AS timestamp) + INTERVAL '-1 day') AS date)
ORDER BY CAST((CAST(date_trunc('week', CAST(("public"."cov_orders"."ordered_at" + INTERVAL '1 day') AS timestamp)) AS timestamp) + INTERVAL '-1 day') AS date) ASC;

-- name: metabase: orders by day of week
-- style: metabase
SELECT (CAST(extract(dow from "public"."cov_orders"."ordered_at") AS integer) + 1) AS "ordered_at", count(*) AS "count"
FROM "public"."cov_orders"
GROUP BY (CAST(extract(dow from "public"."cov_orders"."ordered_at") AS integer) + 1)
ORDER BY (CAST(extract(dow from "public"."cov_orders"."ordered_at") AS integer) + 1) ASC;

-- name: metabase: revenue by product category
-- style: metabase
SELECT "Cov Products - Product"."category" AS "Cov Products - Product__category", sum(("public"."cov_order_items"."quantity" * "public"."cov_order_items"."unit_price")) AS "sum"
FROM "public"."cov_order_items"
LEFT JOIN "public"."cov_products" AS "Cov Products - Product" ON "public"."cov_order_items"."product_id" = "Cov Products - Product"."id"
GROUP BY "Cov Products - Product"."category"
ORDER BY "Cov Products - Product"."category" ASC;

-- name: metabase: customers by country
-- style: metabase
SELECT "public"."cov_customers"."country" AS "country", count(distinct "public"."cov_customers"."id") AS "count"
FROM "public"."cov_customers"
GROUP BY "public"."cov_customers"."country"
ORDER BY "count" DESC, "public"."cov_customers"."country" ASC;

-- name: metabase: orders by channel in a date range
-- style: metabase
-- args: ["2024-01-01", "2024-03-31"]
SELECT "public"."cov_orders"."channel" AS "channel", count(*) AS "count", sum("public"."cov_orders"."amount") AS "sum"
FROM "public"."cov_orders"
WHERE CAST("public"."cov_orders"."ordered_at" AS date) BETWEEN $1 AND $2
GROUP BY "public"."cov_orders"."channel"
ORDER BY "public"."cov_orders"."channel" ASC;

-- name: metabase: filtered orders with parameters
-- style: metabase
-- args: ["paid", "2024-06-01 00:00:00Z"]
SELECT "public"."cov_orders"."id" AS "id", "public"."cov_orders"."ordered_at" AS "ordered_at", "public"."cov_orders"."amount" AS "amount"
FROM "public"."cov_orders"
WHERE ("public"."cov_orders"."status" = $1
   AND "public"."cov_orders"."ordered_at" >= $2)
ORDER BY "public"."cov_orders"."ordered_at" DESC, "public"."cov_orders"."id" DESC
LIMIT 2000;

-- name: metabase: category revenue from a source query
-- style: metabase
SELECT "source"."category" AS "category", sum("source"."line_total") AS "sum", count(*) AS "count"
FROM (SELECT "public"."cov_order_items"."id" AS "id", "public"."cov_order_items"."quantity" AS "quantity", ("public"."cov_order_items"."quantity" * "public"."cov_order_items"."unit_price") AS "line_total", "Cov Products - Product"."category" AS "category"
      FROM "public"."cov_order_items"
      LEFT JOIN "public"."cov_products" AS "Cov Products - Product" ON "public"."cov_order_items"."product_id" = "Cov Products - Product"."id") AS "source"
GROUP BY "source"."category"
ORDER BY "sum" DESC, "source"."category" ASC;

-- name: metabase: order amount histogram
-- style: metabase
SELECT (floor(("public"."cov_orders"."amount" / 500.0)) * 500.0) AS "amount", count(*) AS "count"
FROM "public"."cov_orders"
GROUP BY (floor(("public"."cov_orders"."amount" / 500.0)) * 500.0)
ORDER BY (floor(("public"."cov_orders"."amount" / 500.0)) * 500.0) ASC;

-- name: metabase: channel filter values
-- style: metabase
SELECT "public"."cov_orders"."channel" AS "channel"
FROM "public"."cov_orders"
GROUP BY "public"."cov_orders"."channel"
ORDER BY "public"."cov_orders"."channel" ASC
LIMIT 1000;

-- name: metabase: average order value by segment
-- style: metabase
SELECT "Cov Customers - Customer"."segment" AS "Cov Customers - Customer__segment", avg("public"."cov_orders"."amount") AS "avg"
FROM "public"."cov_orders"
LEFT JOIN "public"."cov_customers" AS "Cov Customers - Customer" ON "public"."cov_orders"."customer_id" = "Cov Customers - Customer"."id"
GROUP BY "Cov Customers - Customer"."segment"
ORDER BY "Cov Customers - Customer"."segment" ASC;

-- name: metabase: distinct customers by month
-- style: metabase
SELECT CAST(date_trunc('month', "public"."cov_orders"."ordered_at") AS timestamp) AS "ordered_at", count(distinct "public"."cov_orders"."customer_id") AS "count"
FROM "public"."cov_orders"
GROUP BY CAST(date_trunc('month', "public"."cov_orders"."ordered_at") AS timestamp)
ORDER BY CAST(date_trunc('month', "public"."cov_orders"."ordered_at") AS timestamp) ASC;

-- name: metabase: orders by quarter and channel
-- style: metabase
SELECT CAST(date_trunc('quarter', "public"."cov_orders"."ordered_at") AS timestamp) AS "ordered_at", "public"."cov_orders"."channel" AS "channel", count(*) AS "count"
FROM "public"."cov_orders"
GROUP BY CAST(date_trunc('quarter', "public"."cov_orders"."ordered_at") AS timestamp), "public"."cov_orders"."channel"
ORDER BY CAST(date_trunc('quarter', "public"."cov_orders"."ordered_at") AS timestamp) ASC, "public"."cov_orders"."channel" ASC;

-- name: metabase: orders by hour of day
-- style: metabase
SELECT CAST(extract(hour from "public"."cov_orders"."ordered_at") AS integer) AS "ordered_at", count(*) AS "count"
FROM "public"."cov_orders"
GROUP BY CAST(extract(hour from "public"."cov_orders"."ordered_at") AS integer)
ORDER BY CAST(extract(hour from "public"."cov_orders"."ordered_at") AS integer) ASC;

-- name: metabase: top customers by revenue
-- style: metabase
SELECT "public"."cov_orders"."customer_id" AS "customer_id", "Cov Customers - Customer"."name" AS "Cov Customers - Customer__name", sum("public"."cov_orders"."amount") AS "sum"
FROM "public"."cov_orders"
LEFT JOIN "public"."cov_customers" AS "Cov Customers - Customer" ON "public"."cov_orders"."customer_id" = "Cov Customers - Customer"."id"
GROUP BY "public"."cov_orders"."customer_id", "Cov Customers - Customer"."name"
ORDER BY "sum" DESC, "public"."cov_orders"."customer_id" ASC
LIMIT 10;

-- name: metabase: events by type in february
-- style: metabase
SELECT "public"."cov_events"."event_type" AS "event_type", count(*) AS "count"
FROM "public"."cov_events"
WHERE ("public"."cov_events"."occurred_at" >= timestamp with time zone '2024-02-01 00:00:00.000Z'
   AND "public"."cov_events"."occurred_at" < timestamp with time zone '2024-03-01 00:00:00.000Z')
GROUP BY "public"."cov_events"."event_type"
ORDER BY "public"."cov_events"."event_type" ASC;

-- name: metabase: products table view
-- style: metabase
SELECT "public"."cov_products"."id" AS "id", "public"."cov_products"."sku" AS "sku", "public"."cov_products"."name" AS "name", "public"."cov_products"."category" AS "category", "public"."cov_products"."subcategory" AS "subcategory", "public"."cov_products"."brand" AS "brand", "public"."cov_products"."price" AS "price", "public"."cov_products"."cost" AS "cost", "public"."cov_products"."weight_kg" AS "weight_kg", "public"."cov_products"."launched" AS "launched", "public"."cov_products"."discontinued" AS "discontinued", "public"."cov_products"."rating" AS "rating", "public"."cov_products"."tags" AS "tags"
FROM "public"."cov_products"
ORDER BY "public"."cov_products"."id" ASC
LIMIT 2000;

-- name: metabase: customer object detail
-- style: metabase
-- point: true
SELECT "public"."cov_customers"."id" AS "id", "public"."cov_customers"."name" AS "name", "public"."cov_customers"."email" AS "email", "public"."cov_customers"."country" AS "country", "public"."cov_customers"."city" AS "city", "public"."cov_customers"."segment" AS "segment", "public"."cov_customers"."created_at" AS "created_at", "public"."cov_customers"."birth_date" AS "birth_date", "public"."cov_customers"."is_active" AS "is_active", "public"."cov_customers"."score" AS "score", "public"."cov_customers"."loyalty_tier" AS "loyalty_tier", "public"."cov_customers"."credit_limit" AS "credit_limit", "public"."cov_customers"."referred_by" AS "referred_by"
FROM "public"."cov_customers"
WHERE "public"."cov_customers"."id" = 42
LIMIT 1;

-- name: metabase: order object detail by parameter
-- style: metabase
-- point: true
-- args: [777]
SELECT "public"."cov_orders"."id" AS "id", "public"."cov_orders"."customer_id" AS "customer_id", "public"."cov_orders"."ordered_at" AS "ordered_at", "public"."cov_orders"."shipped_at" AS "shipped_at", "public"."cov_orders"."status" AS "status", "public"."cov_orders"."amount" AS "amount", "public"."cov_orders"."tags" AS "tags", "public"."cov_orders"."attrs" AS "attrs"
FROM "public"."cov_orders"
WHERE "public"."cov_orders"."id" = $1
LIMIT 1;

-- name: metabase: customers with email containing
-- style: metabase
-- args: ["%example%"]
SELECT "public"."cov_customers"."segment" AS "segment", count(*) AS "count"
FROM "public"."cov_customers"
WHERE lower("public"."cov_customers"."email") LIKE $1
GROUP BY "public"."cov_customers"."segment"
ORDER BY "public"."cov_customers"."segment" ASC;

-- name: metabase: customers with empty email
-- style: metabase
SELECT count(*) AS "count"
FROM "public"."cov_customers"
WHERE ("public"."cov_customers"."email" IS NULL OR "public"."cov_customers"."email" = '');

-- name: metabase: open orders not cancelled or refunded
-- style: metabase
SELECT "public"."cov_orders"."status" AS "status", "public"."cov_orders"."currency" AS "currency", count(*) AS "count", sum("public"."cov_orders"."amount") AS "sum"
FROM "public"."cov_orders"
WHERE (("public"."cov_orders"."status" <> 'cancelled' OR "public"."cov_orders"."status" IS NULL)
   AND ("public"."cov_orders"."status" <> 'refunded' OR "public"."cov_orders"."status" IS NULL))
GROUP BY "public"."cov_orders"."status", "public"."cov_orders"."currency"
ORDER BY "public"."cov_orders"."status" ASC, "public"."cov_orders"."currency" ASC;

-- name: metabase: cumulative orders by month
-- style: metabase
SELECT CAST(date_trunc('month', "public"."cov_orders"."ordered_at") AS timestamp) AS "ordered_at", SUM(COUNT(*)) OVER (ORDER BY CAST(date_trunc('month', "public"."cov_orders"."ordered_at") AS timestamp) ASC ROWS UNBOUNDED PRECEDING) AS "count"
FROM "public"."cov_orders"
GROUP BY CAST(date_trunc('month', "public"."cov_orders"."ordered_at") AS timestamp)
ORDER BY CAST(date_trunc('month', "public"."cov_orders"."ordered_at") AS timestamp) ASC;

-- name: metabase: orders by year of order date
-- style: metabase
SELECT CAST(date_trunc('year', CAST("public"."cov_orders"."order_date" AS timestamp)) AS date) AS "order_date", count(*) AS "count", sum("public"."cov_orders"."shipping_cost") AS "sum"
FROM "public"."cov_orders"
GROUP BY CAST(date_trunc('year', CAST("public"."cov_orders"."order_date" AS timestamp)) AS date)
ORDER BY CAST(date_trunc('year', CAST("public"."cov_orders"."order_date" AS timestamp)) AS date) ASC;

-- name: metabase: amount summary by channel
-- style: metabase
SELECT "public"."cov_orders"."channel" AS "channel", count(*) AS "count", sum("public"."cov_orders"."amount") AS "sum", avg("public"."cov_orders"."amount") AS "avg", min("public"."cov_orders"."amount") AS "min", max("public"."cov_orders"."amount") AS "max"
FROM "public"."cov_orders"
GROUP BY "public"."cov_orders"."channel"
ORDER BY "public"."cov_orders"."channel" ASC;

-- name: metabase: distinct sessions by day
-- style: metabase
SELECT CAST(date_trunc('day', "public"."cov_events"."occurred_at") AS timestamp) AS "occurred_at", count(distinct "public"."cov_events"."session_id") AS "count"
FROM "public"."cov_events"
WHERE "public"."cov_events"."occurred_at" < timestamp with time zone '2024-01-15 00:00:00.000Z'
GROUP BY CAST(date_trunc('day', "public"."cov_events"."occurred_at") AS timestamp)
ORDER BY CAST(date_trunc('day', "public"."cov_events"."occurred_at") AS timestamp) ASC;

-- name: metabase: units by month and category
-- style: metabase
SELECT CAST(date_trunc('month', "Cov Orders - Order"."ordered_at") AS timestamp) AS "Cov Orders - Order__ordered_at", "Cov Products - Product"."category" AS "Cov Products - Product__category", sum("public"."cov_order_items"."quantity") AS "sum"
FROM "public"."cov_order_items"
LEFT JOIN "public"."cov_orders" AS "Cov Orders - Order" ON "public"."cov_order_items"."order_id" = "Cov Orders - Order"."id"
LEFT JOIN "public"."cov_products" AS "Cov Products - Product" ON "public"."cov_order_items"."product_id" = "Cov Products - Product"."id"
WHERE "Cov Orders - Order"."ordered_at" >= timestamp with time zone '2024-07-01 00:00:00.000Z'
GROUP BY CAST(date_trunc('month', "Cov Orders - Order"."ordered_at") AS timestamp), "Cov Products - Product"."category"
ORDER BY CAST(date_trunc('month', "Cov Orders - Order"."ordered_at") AS timestamp) ASC, "Cov Products - Product"."category" ASC;

-- name: metabase: german customer orders
-- style: metabase
-- args: ["DE"]
SELECT "public"."cov_orders"."status" AS "status", count(*) AS "count"
FROM "public"."cov_orders"
LEFT JOIN "public"."cov_customers" AS "Cov Customers - Customer" ON "public"."cov_orders"."customer_id" = "Cov Customers - Customer"."id"
WHERE "Cov Customers - Customer"."country" = $1
GROUP BY "public"."cov_orders"."status"
ORDER BY "public"."cov_orders"."status" ASC;

-- name: metabase: order size custom column
-- style: metabase
SELECT "source"."Size" AS "Size", count(*) AS "count"
FROM (SELECT "public"."cov_orders"."id" AS "id", CASE WHEN "public"."cov_orders"."amount" > 3000 THEN 'large' WHEN "public"."cov_orders"."amount" > 1000 THEN 'medium' ELSE 'small' END AS "Size"
      FROM "public"."cov_orders") AS "source"
GROUP BY "source"."Size"
ORDER BY "source"."Size" ASC;

-- name: metabase: median order amount by status
-- style: metabase
SELECT "public"."cov_orders"."status" AS "status", percentile_cont(0.5) WITHIN GROUP (ORDER BY "public"."cov_orders"."amount") AS "median"
FROM "public"."cov_orders"
GROUP BY "public"."cov_orders"."status"
ORDER BY "public"."cov_orders"."status" ASC;

-- name: metabase: standard deviation of amount
-- style: metabase
SELECT "public"."cov_orders"."currency" AS "currency", stddev_pop("public"."cov_orders"."amount") AS "stddev", var_pop("public"."cov_orders"."amount") AS "var"
FROM "public"."cov_orders"
GROUP BY "public"."cov_orders"."currency"
ORDER BY "public"."cov_orders"."currency" ASC;

-- name: metabase: share of delivered orders
-- style: metabase
SELECT "public"."cov_orders"."channel" AS "channel", CAST(sum(CASE WHEN "public"."cov_orders"."status" = 'delivered' THEN 1 ELSE 0.0 END) AS float) / CASE WHEN count(*) = 0 THEN NULL ELSE count(*) END AS "share"
FROM "public"."cov_orders"
GROUP BY "public"."cov_orders"."channel"
ORDER BY "public"."cov_orders"."channel" ASC;

-- name: metabase: count and sum where
-- style: metabase
SELECT CAST(date_trunc('quarter', "public"."cov_orders"."ordered_at") AS timestamp) AS "ordered_at", sum(CASE WHEN "public"."cov_orders"."channel" = 'mobile' THEN 1 ELSE 0.0 END) AS "mobile_orders", sum(CASE WHEN "public"."cov_orders"."channel" = 'mobile' THEN "public"."cov_orders"."amount" ELSE 0.0 END) AS "mobile_revenue"
FROM "public"."cov_orders"
GROUP BY CAST(date_trunc('quarter', "public"."cov_orders"."ordered_at") AS timestamp)
ORDER BY CAST(date_trunc('quarter', "public"."cov_orders"."ordered_at") AS timestamp) ASC;

-- name: metabase: last quarter of 2024 by day
-- style: metabase
SELECT CAST(date_trunc('day', "public"."cov_orders"."ordered_at") AS timestamp) AS "ordered_at", count(*) AS "count"
FROM "public"."cov_orders"
WHERE ("public"."cov_orders"."ordered_at" >= timestamp with time zone '2024-10-01 00:00:00.000Z'
   AND "public"."cov_orders"."ordered_at" < timestamp with time zone '2025-01-01 00:00:00.000Z')
GROUP BY CAST(date_trunc('day', "public"."cov_orders"."ordered_at") AS timestamp)
ORDER BY CAST(date_trunc('day', "public"."cov_orders"."ordered_at") AS timestamp) ASC;

-- name: metabase: employees with manager
-- style: metabase
SELECT "public"."cov_employees"."id" AS "id", "public"."cov_employees"."name" AS "name", "public"."cov_employees"."dept" AS "dept", "public"."cov_employees"."salary" AS "salary", "Cov Employees - Manager"."name" AS "Cov Employees - Manager__name"
FROM "public"."cov_employees"
LEFT JOIN "public"."cov_employees" AS "Cov Employees - Manager" ON "public"."cov_employees"."manager_id" = "Cov Employees - Manager"."id"
ORDER BY "public"."cov_employees"."id" ASC
LIMIT 2000;

-- name: metabase: orders by unfolded json source
-- style: metabase
SELECT ("public"."cov_orders"."attrs"#>> array['source']::text[])::text AS "attrs → source", count(*) AS "count"
FROM "public"."cov_orders"
GROUP BY ("public"."cov_orders"."attrs"#>> array['source']::text[])::text
ORDER BY ("public"."cov_orders"."attrs"#>> array['source']::text[])::text ASC;

-- name: metabase: orders by unfolded json campaign
-- style: metabase
SELECT ("public"."cov_orders"."attrs"#>> array['utm', 'campaign']::text[])::text AS "attrs → utm → campaign", ("public"."cov_orders"."attrs"#>> array['utm', 'medium']::text[])::text AS "attrs → utm → medium", count(*) AS "count"
FROM "public"."cov_orders"
WHERE ("public"."cov_orders"."attrs"#>> array['utm', 'medium']::text[])::text = 'email'
GROUP BY ("public"."cov_orders"."attrs"#>> array['utm', 'campaign']::text[])::text, ("public"."cov_orders"."attrs"#>> array['utm', 'medium']::text[])::text
ORDER BY ("public"."cov_orders"."attrs"#>> array['utm', 'campaign']::text[])::text ASC, ("public"."cov_orders"."attrs"#>> array['utm', 'medium']::text[])::text ASC;

-- name: metabase: orders per day in new york time
-- style: metabase
SELECT CAST(date_trunc('day', ("public"."cov_orders"."ordered_at" AT TIME ZONE 'America/New_York')) AS timestamp) AS "ordered_at", count(*) AS "count"
FROM "public"."cov_orders"
WHERE ("public"."cov_orders"."ordered_at" >= timestamp with time zone '2024-03-01 00:00:00.000-05:00'
   AND "public"."cov_orders"."ordered_at" < timestamp with time zone '2024-04-01 00:00:00.000-04:00')
GROUP BY CAST(date_trunc('day', ("public"."cov_orders"."ordered_at" AT TIME ZONE 'America/New_York')) AS timestamp)
ORDER BY CAST(date_trunc('day', ("public"."cov_orders"."ordered_at" AT TIME ZONE 'America/New_York')) AS timestamp) ASC;

-- name: metabase: typed table view
-- style: metabase
SELECT "public"."cov_typed"."id" AS "id", "public"."cov_typed"."b" AS "b", "public"."cov_typed"."i2" AS "i2", "public"."cov_typed"."i4" AS "i4", "public"."cov_typed"."i8" AS "i8", "public"."cov_typed"."f4" AS "f4", "public"."cov_typed"."f8" AS "f8", "public"."cov_typed"."n" AS "n", "public"."cov_typed"."nu" AS "nu", "public"."cov_typed"."t" AS "t", "public"."cov_typed"."vc" AS "vc", "public"."cov_typed"."ch" AS "ch", "public"."cov_typed"."d" AS "d", "public"."cov_typed"."tm" AS "tm", "public"."cov_typed"."ts" AS "ts", "public"."cov_typed"."tstz" AS "tstz", "public"."cov_typed"."iv" AS "iv", "public"."cov_typed"."u" AS "u", "public"."cov_typed"."j" AS "j", "public"."cov_typed"."jb" AS "jb", "public"."cov_typed"."by" AS "by", "public"."cov_typed"."ai" AS "ai", "public"."cov_typed"."at" AS "at", "public"."cov_typed"."an" AS "an", "public"."cov_typed"."af" AS "af", "public"."cov_typed"."ad" AS "ad"
FROM "public"."cov_typed"
ORDER BY "public"."cov_typed"."id" ASC
LIMIT 2000;

-- name: metabase: typed date ranges
-- style: metabase
SELECT min("public"."cov_typed"."d") AS "min", max("public"."cov_typed"."d") AS "max", min("public"."cov_typed"."ts") AS "min_2", max("public"."cov_typed"."ts") AS "max_2", min("public"."cov_typed"."tstz") AS "min_3", max("public"."cov_typed"."tstz") AS "max_3", min("public"."cov_typed"."tm") AS "min_4", max("public"."cov_typed"."tm") AS "max_4"
FROM "public"."cov_typed";

-- name: metabase: typed float filter
-- style: metabase
-- args: ["1e300"]
SELECT "public"."cov_typed"."id" AS "id", "public"."cov_typed"."f8" AS "f8", "public"."cov_typed"."f4" AS "f4"
FROM "public"."cov_typed"
WHERE "public"."cov_typed"."f8" > $1
ORDER BY "public"."cov_typed"."id" ASC;

-- name: metabase: typed text not empty
-- style: metabase
SELECT count(*) AS "count"
FROM "public"."cov_typed"
WHERE ("public"."cov_typed"."t" IS NOT NULL AND "public"."cov_typed"."t" <> '');

-- name: metabase: orders by month of year
-- style: metabase
SELECT CAST(extract(month from "public"."cov_orders"."ordered_at") AS integer) AS "ordered_at", count(*) AS "count", sum("public"."cov_orders"."amount") AS "sum"
FROM "public"."cov_orders"
GROUP BY CAST(extract(month from "public"."cov_orders"."ordered_at") AS integer)
ORDER BY CAST(extract(month from "public"."cov_orders"."ordered_at") AS integer) ASC;

-- name: metabase: orders per customer distribution
-- style: metabase
SELECT "source"."count" AS "count", count(*) AS "count_2"
FROM (SELECT "public"."cov_orders"."customer_id" AS "customer_id", count(*) AS "count"
      FROM "public"."cov_orders"
      GROUP BY "public"."cov_orders"."customer_id"
      ORDER BY "public"."cov_orders"."customer_id" ASC) AS "source"
GROUP BY "source"."count"
ORDER BY "source"."count" ASC;

-- name: metabase: active customers by signup year
-- style: metabase
SELECT CAST(date_trunc('year', "public"."cov_customers"."created_at") AS timestamp) AS "created_at", "public"."cov_customers"."is_active" AS "is_active", count(*) AS "count"
FROM "public"."cov_customers"
GROUP BY CAST(date_trunc('year', "public"."cov_customers"."created_at") AS timestamp), "public"."cov_customers"."is_active"
ORDER BY CAST(date_trunc('year', "public"."cov_customers"."created_at") AS timestamp) ASC, "public"."cov_customers"."is_active" ASC;

-- name: metabase: products filtered by category parameter
-- style: metabase
-- args: ["electronics", "100.00"]
SELECT "public"."cov_products"."id" AS "id", "public"."cov_products"."name" AS "name", "public"."cov_products"."price" AS "price"
FROM "public"."cov_products"
WHERE ("public"."cov_products"."category" = $1
   AND "public"."cov_products"."price" >= $2)
ORDER BY "public"."cov_products"."price" DESC, "public"."cov_products"."id" ASC
LIMIT 2000;

-- name: metabase: revenue by customer city
-- style: metabase
SELECT "Cov Customers - Customer"."country" AS "Cov Customers - Customer__country", "Cov Customers - Customer"."city" AS "Cov Customers - Customer__city", sum("public"."cov_orders"."amount") AS "sum"
FROM "public"."cov_orders"
LEFT JOIN "public"."cov_customers" AS "Cov Customers - Customer" ON "public"."cov_orders"."customer_id" = "Cov Customers - Customer"."id"
WHERE "Cov Customers - Customer"."country" IN ('US', 'CA', 'MX')
GROUP BY "Cov Customers - Customer"."country", "Cov Customers - Customer"."city"
ORDER BY "Cov Customers - Customer"."country" ASC, "Cov Customers - Customer"."city" ASC;

-- name: superset: revenue by status bar chart
-- style: superset
SELECT status AS status,
       sum(amount) AS "SUM(amount)"
FROM public.cov_orders
GROUP BY status
ORDER BY "SUM(amount)" DESC
LIMIT 10000;

-- name: superset: daily orders time series
-- style: superset
SELECT DATE_TRUNC('day', ordered_at) AS __timestamp,
       COUNT(*) AS count
FROM public.cov_orders
WHERE ordered_at >= TO_TIMESTAMP('2024-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')
  AND ordered_at < TO_TIMESTAMP('2024-02-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')
GROUP BY DATE_TRUNC('day', ordered_at)
ORDER BY __timestamp
LIMIT 50000;

-- name: superset: weekly revenue by channel
-- style: superset
SELECT DATE_TRUNC('week', ordered_at) AS __timestamp,
       channel AS channel,
       sum(amount) AS "SUM(amount)"
FROM public.cov_orders
WHERE ordered_at >= TO_TIMESTAMP('2024-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')
  AND ordered_at < TO_TIMESTAMP('2024-04-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')
  AND channel IN ('web', 'mobile')
GROUP BY DATE_TRUNC('week', ordered_at), channel
ORDER BY __timestamp, channel
LIMIT 10000;

-- name: superset: virtual dataset line revenue
-- style: superset
SELECT category AS category,
       sum(line_total) AS "SUM(line_total)",
       count(*) AS "COUNT(*)"
FROM
  (SELECT oi.id, oi.quantity, oi.unit_price, oi.quantity * oi.unit_price AS line_total, p.category, p.subcategory
   FROM cov_order_items oi
   JOIN cov_products p ON p.id = oi.product_id) AS virtual_table
GROUP BY category
ORDER BY "SUM(line_total)" DESC
LIMIT 10000;

-- name: superset: pie of orders by channel
-- style: superset
SELECT channel AS channel,
       count(*) AS "COUNT(*)"
FROM public.cov_orders
GROUP BY channel
ORDER BY "COUNT(*)" DESC, channel
LIMIT 100;

-- name: superset: big number total revenue
-- style: superset
SELECT sum(amount) AS "SUM(amount)"
FROM public.cov_orders
WHERE ordered_at >= TO_TIMESTAMP('2024-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')
  AND ordered_at < TO_TIMESTAMP('2025-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')
LIMIT 50000;

-- name: superset: big number with trendline
-- style: superset
SELECT DATE_TRUNC('month', ordered_at) AS __timestamp,
       count(DISTINCT customer_id) AS "COUNT_DISTINCT(customer_id)"
FROM public.cov_orders
GROUP BY DATE_TRUNC('month', ordered_at)
ORDER BY __timestamp
LIMIT 50000;

-- name: superset: series limit subquery
-- style: superset
SELECT DATE_TRUNC('month', ordered_at) AS __timestamp,
       status AS status,
       sum(amount) AS "SUM(amount)"
FROM public.cov_orders
JOIN
  (SELECT status AS status__,
          sum(amount) AS mme_inner__
   FROM public.cov_orders
   GROUP BY status
   ORDER BY mme_inner__ DESC
   LIMIT 3) AS series_limit ON status = status__
WHERE ordered_at >= TO_TIMESTAMP('2024-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')
GROUP BY DATE_TRUNC('month', ordered_at), status
ORDER BY __timestamp, status
LIMIT 10000;

-- name: superset: table chart raw records
-- style: superset
SELECT id AS id,
       order_date AS order_date,
       status AS status,
       channel AS channel,
       amount AS amount
FROM public.cov_orders
WHERE status != 'cancelled'
ORDER BY id DESC
LIMIT 1000;

-- name: superset: table chart aggregate with having
-- style: superset
SELECT customer_id AS customer_id,
       count(*) AS "COUNT(*)",
       sum(amount) AS "SUM(amount)"
FROM public.cov_orders
GROUP BY customer_id
HAVING sum(amount) > 12000
ORDER BY "SUM(amount)" DESC, customer_id
LIMIT 1000;

-- name: superset: pivot table status by channel
-- style: superset
SELECT status AS status,
       channel AS channel,
       count(*) AS "COUNT(*)",
       avg(amount) AS "AVG(amount)"
FROM public.cov_orders
GROUP BY status, channel
ORDER BY status, channel
LIMIT 10000;

-- name: superset: filter box values
-- style: superset
SELECT event_type AS event_type
FROM public.cov_events
GROUP BY event_type
ORDER BY event_type ASC
LIMIT 1000;

-- name: superset: custom sql metric net revenue
-- style: superset
SELECT p.category AS category,
       SUM(oi.quantity * oi.unit_price * (1 - COALESCE(oi.discount, 0))) AS net_revenue
FROM public.cov_order_items AS oi
JOIN public.cov_products AS p ON p.id = oi.product_id
GROUP BY p.category
ORDER BY net_revenue DESC
LIMIT 10000;

-- name: superset: ilike filter on customers
-- style: superset
SELECT segment AS segment,
       count(*) AS "COUNT(*)"
FROM public.cov_customers
WHERE name ILIKE '%son%' OR name ILIKE '%mit%'
GROUP BY segment
ORDER BY "COUNT(*)" DESC, segment
LIMIT 10000;

-- name: superset: is null filter
-- style: superset
SELECT status AS status,
       count(*) AS "COUNT(*)"
FROM public.cov_orders
WHERE channel IS NULL
GROUP BY status
ORDER BY status
LIMIT 10000;

-- name: superset: quarterly time grain
-- style: superset
SELECT DATE_TRUNC('quarter', order_date) AS __timestamp,
       sum(amount) AS "SUM(amount)",
       max(amount) AS "MAX(amount)",
       min(amount) AS "MIN(amount)"
FROM public.cov_orders
GROUP BY DATE_TRUNC('quarter', order_date)
ORDER BY __timestamp
LIMIT 50000;

-- name: superset: week starting sunday grain
-- style: superset
SELECT DATE_TRUNC('week', ordered_at + INTERVAL '1 day') - INTERVAL '1 day' AS __timestamp,
       count(*) AS count
FROM public.cov_orders
WHERE ordered_at >= TO_TIMESTAMP('2024-05-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')
  AND ordered_at < TO_TIMESTAMP('2024-07-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')
GROUP BY DATE_TRUNC('week', ordered_at + INTERVAL '1 day') - INTERVAL '1 day'
ORDER BY __timestamp
LIMIT 50000;

-- name: superset: sql lab wrapped query
-- style: superset
SELECT *
FROM
  (SELECT c.country, c.segment, count(o.id) AS orders, sum(o.amount) AS revenue
   FROM cov_customers c
   LEFT JOIN cov_orders o ON o.customer_id = c.id
   GROUP BY c.country, c.segment
   ORDER BY c.country, c.segment) AS inner_qry
ORDER BY country, segment
LIMIT 1001;

-- name: superset: sql lab cte
-- style: superset
WITH monthly AS (
  SELECT date_trunc('month', order_date)::date AS month, sum(amount) AS revenue, count(*) AS orders
  FROM cov_orders
  WHERE status IN ('paid', 'shipped', 'delivered')
  GROUP BY 1
)
SELECT month, revenue, orders, round(revenue / orders, 2) AS aov,
       revenue - lag(revenue) OVER (ORDER BY month) AS mom_change
FROM monthly
ORDER BY month
LIMIT 1001;

-- name: superset: dashboard native filter time range
-- style: superset
-- args: ["2024-03-01", "2024-06-01"]
SELECT channel AS channel,
       count(*) AS "COUNT(*)",
       sum(shipping_cost) AS "SUM(shipping_cost)"
FROM public.cov_orders
WHERE order_date >= $1
  AND order_date < $2
GROUP BY channel
ORDER BY "COUNT(*)" DESC, channel
LIMIT 10000;

-- name: superset: count distinct sessions by browser
-- style: superset
SELECT properties ->> 'browser' AS browser,
       count(DISTINCT session_id) AS "COUNT_DISTINCT(session_id)"
FROM public.cov_events
GROUP BY properties ->> 'browser'
ORDER BY "COUNT_DISTINCT(session_id)" DESC, browser
LIMIT 10000;

-- name: superset: heatmap hour by weekday
-- style: superset
SELECT EXTRACT(DOW FROM occurred_at) AS dow,
       EXTRACT(HOUR FROM occurred_at) AS hour,
       count(*) AS "COUNT(*)"
FROM public.cov_events
GROUP BY EXTRACT(DOW FROM occurred_at), EXTRACT(HOUR FROM occurred_at)
ORDER BY dow, hour
LIMIT 10000;

-- name: superset: histogram raw amounts
-- style: superset
SELECT amount AS amount
FROM public.cov_orders
WHERE amount IS NOT NULL AND currency = 'EUR'
ORDER BY amount, id
LIMIT 10000;

-- name: superset: box plot quantiles
-- style: superset
SELECT category AS category,
       percentile_disc(0.25) WITHIN GROUP (ORDER BY price) AS q1,
       percentile_disc(0.5) WITHIN GROUP (ORDER BY price) AS median,
       percentile_disc(0.75) WITHIN GROUP (ORDER BY price) AS q3
FROM public.cov_products
GROUP BY category
ORDER BY category
LIMIT 10000;

-- name: superset: time comparison offset query
-- style: superset
SELECT DATE_TRUNC('month', ordered_at) + INTERVAL '1 year' AS __timestamp,
       sum(amount) AS "SUM(amount)"
FROM public.cov_orders
WHERE ordered_at >= TO_TIMESTAMP('2023-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')
  AND ordered_at < TO_TIMESTAMP('2024-01-01 00:00:00.000000', 'YYYY-MM-DD HH24:MI:SS.US')
GROUP BY DATE_TRUNC('month', ordered_at) + INTERVAL '1 year'
ORDER BY __timestamp
LIMIT 50000;

-- name: superset: world map by country
-- style: superset
SELECT c.country AS country,
       sum(o.amount) AS "SUM(amount)"
FROM public.cov_orders AS o
JOIN public.cov_customers AS c ON c.id = o.customer_id
WHERE c.country IS NOT NULL
GROUP BY c.country
ORDER BY "SUM(amount)" DESC
LIMIT 10000;

-- name: superset: treemap category subcategory
-- style: superset
SELECT category AS category,
       subcategory AS subcategory,
       sum(quantity) AS "SUM(quantity)"
FROM
  (SELECT p.category, p.subcategory, oi.quantity
   FROM cov_order_items oi
   JOIN cov_products p ON p.id = oi.product_id) AS virtual_table
GROUP BY category, subcategory
ORDER BY "SUM(quantity)" DESC, category, subcategory
LIMIT 10000;

-- name: superset: funnel of event types
-- style: superset
SELECT event_type AS event_type,
       count(DISTINCT user_id) AS "COUNT_DISTINCT(user_id)"
FROM public.cov_events
WHERE event_type IN ('page_view', 'add_to_cart', 'checkout', 'purchase')
GROUP BY event_type
ORDER BY "COUNT_DISTINCT(user_id)" DESC, event_type
LIMIT 10000;

-- name: superset: event revenue rolling source
-- style: superset
SELECT DATE_TRUNC('day', occurred_at) AS __timestamp,
       sum(revenue) AS "SUM(revenue)"
FROM public.cov_events
WHERE event_type = 'purchase'
GROUP BY DATE_TRUNC('day', occurred_at)
ORDER BY __timestamp
LIMIT 50000;

-- name: superset: not in filter
-- style: superset
SELECT country AS country,
       count(*) AS "COUNT(*)"
FROM public.cov_customers
WHERE country NOT IN ('US', 'GB')
GROUP BY country
ORDER BY country
LIMIT 10000;

-- name: superset: product table with search
-- style: superset
-- args: ["%pro%"]
SELECT id AS id,
       sku AS sku,
       name AS name,
       price AS price,
       cost AS cost
FROM public.cov_products
WHERE name LIKE $1
ORDER BY id
LIMIT 1000;

-- name: superset: margin metric
-- style: superset
SELECT category AS category,
       sum(price - cost) / NULLIF(sum(price), 0) AS margin
FROM public.cov_products
GROUP BY category
ORDER BY margin DESC, category
LIMIT 10000;

-- name: superset: yearly cohort virtual table
-- style: superset
SELECT cohort AS cohort,
       count(*) AS "COUNT(*)",
       sum(lifetime_value) AS "SUM(lifetime_value)"
FROM
  (SELECT c.id, EXTRACT(YEAR FROM c.created_at)::int AS cohort, coalesce(sum(o.amount), 0) AS lifetime_value
   FROM cov_customers c
   LEFT JOIN cov_orders o ON o.customer_id = c.id
   GROUP BY c.id, EXTRACT(YEAR FROM c.created_at)) AS virtual_table
GROUP BY cohort
ORDER BY cohort
LIMIT 10000;

-- name: superset: mixed chart second query
-- style: superset
SELECT DATE_TRUNC('month', order_date) AS __timestamp,
       avg(amount) AS "AVG(amount)",
       count(*) AS "COUNT(*)"
FROM public.cov_orders
WHERE order_date BETWEEN '2024-01-01' AND '2024-12-31'
GROUP BY DATE_TRUNC('month', order_date)
ORDER BY __timestamp
LIMIT 10000;

-- name: superset: jsonb filter in where
-- style: superset
SELECT attrs ->> 'device' AS device,
       count(*) AS "COUNT(*)"
FROM public.cov_orders
WHERE attrs @> '{"utm": {"medium": "email"}}'
GROUP BY attrs ->> 'device'
ORDER BY device
LIMIT 10000;

-- name: superset: orders with coupon key
-- style: superset
SELECT attrs ->> 'coupon' AS coupon,
       count(*) AS "COUNT(*)",
       sum(amount) AS "SUM(amount)"
FROM public.cov_orders
WHERE attrs ? 'coupon'
GROUP BY attrs ->> 'coupon'
ORDER BY coupon
LIMIT 10000;

-- name: superset: employee salary by department
-- style: superset
SELECT dept AS dept,
       count(*) AS "COUNT(*)",
       avg(salary) AS "AVG(salary)",
       max(salary) AS "MAX(salary)"
FROM public.cov_employees
GROUP BY dept
ORDER BY "AVG(salary)" DESC
LIMIT 10000;

-- name: superset: delivery time in hours
-- style: superset
SELECT channel AS channel,
       avg(EXTRACT(EPOCH FROM (shipped_at - ordered_at AT TIME ZONE 'UTC')) / 3600) AS avg_hours_to_ship
FROM public.cov_orders
WHERE shipped_at IS NOT NULL
GROUP BY channel
ORDER BY channel
LIMIT 10000;

-- name: superset: top products by units
-- style: superset
SELECT p.name AS name,
       sum(oi.quantity) AS "SUM(quantity)"
FROM public.cov_order_items AS oi
JOIN public.cov_products AS p ON p.id = oi.product_id
GROUP BY p.id, p.name
ORDER BY "SUM(quantity)" DESC, p.id
LIMIT 10;

-- name: superset: sankey channel to status
-- style: superset
SELECT channel AS source,
       status AS target,
       count(*) AS value
FROM public.cov_orders
WHERE channel IS NOT NULL
GROUP BY channel, status
ORDER BY source, target
LIMIT 10000;

-- name: superset: sql lab string functions
-- style: superset
SELECT split_part(email, '@', 2) AS domain,
       count(*) AS customers,
       min(length(email)) AS shortest,
       max(length(email)) AS longest
FROM cov_customers
WHERE email IS NOT NULL
GROUP BY split_part(email, '@', 2)
ORDER BY domain
LIMIT 1001;

-- name: superset: event types by os
-- style: superset
SELECT properties ->> 'os' AS os,
       event_type AS event_type,
       count(*) AS "COUNT(*)"
FROM public.cov_events
WHERE properties IS NOT NULL
GROUP BY properties ->> 'os', event_type
ORDER BY os, event_type
LIMIT 10000;

-- name: superset: typed dataset preview
-- style: superset
SELECT id AS id,
       b AS b,
       i2 AS i2,
       i4 AS i4,
       i8 AS i8,
       n AS n,
       nu AS nu,
       d AS d,
       tstz AS tstz
FROM public.cov_typed
ORDER BY id
LIMIT 100;

-- name: superset: typed dataset metrics
-- style: superset
SELECT count(*) AS "COUNT(*)",
       count(b) AS "COUNT(b)",
       count(DISTINCT i4) AS "COUNT_DISTINCT(i4)",
       sum(i8) AS "SUM(i8)",
       sum(n) AS "SUM(n)",
       max(nu) AS "MAX(nu)",
       min(nu) AS "MIN(nu)"
FROM public.cov_typed
LIMIT 50000;

-- name: superset: typed time grain on timestamp
-- style: superset
SELECT DATE_TRUNC('year', ts) AS __timestamp,
       count(*) AS count
FROM public.cov_typed
WHERE ts IS NOT NULL
GROUP BY DATE_TRUNC('year', ts)
ORDER BY __timestamp
LIMIT 50000;

-- name: superset: customer point lookup
-- style: superset
-- point: true
-- args: [150]
SELECT id AS id,
       name AS name,
       email AS email,
       segment AS segment,
       credit_limit AS credit_limit
FROM public.cov_customers
WHERE id = $1;

-- name: superset: monthly active users
-- style: superset
SELECT DATE_TRUNC('month', occurred_at) AS __timestamp,
       count(DISTINCT user_id) AS "COUNT_DISTINCT(user_id)",
       count(*) AS "COUNT(*)"
FROM public.cov_events
GROUP BY DATE_TRUNC('month', occurred_at)
ORDER BY __timestamp
LIMIT 50000;

-- name: superset: sql lab string functions on products
-- style: superset
SELECT id, sku,
       upper(category) AS cat_upper,
       initcap(name) AS title,
       left(sku, 3) AS prefix,
       right(sku, 5) AS digits,
       reverse(subcategory) AS rev,
       translate(sku, '-', '_') AS sku_underscored,
       regexp_replace(name, '[0-9]+$', '#') AS name_masked,
       split_part(name, ' ', 2) AS noun,
       position('o' IN name) AS first_o,
       substring(name FROM 1 FOR 6) AS name6,
       starts_with(name, 'pro') AS is_pro,
       md5(sku) AS sku_hash,
       lpad(id::text, 6, '0') AS padded,
       concat(category, ':', price) AS cat_price,
       concat_ws(' / ', category, subcategory, brand) AS breadcrumb,
       format('%s-%s', category, id) AS formatted
FROM cov_products
WHERE id <= 20
ORDER BY id
LIMIT 1001;

-- name: superset: sql lab ranking windows
-- style: superset
SELECT id, category, price,
       ntile(4) OVER (ORDER BY price, id) AS quartile,
       percent_rank() OVER (PARTITION BY category ORDER BY price) AS pct_rank,
       cume_dist() OVER (PARTITION BY category ORDER BY price) AS cume,
       rank() OVER (PARTITION BY category ORDER BY price DESC) AS rnk,
       dense_rank() OVER (ORDER BY category) AS cat_rank
FROM cov_products
ORDER BY id
LIMIT 1001;

-- name: looker: orders count by status
-- style: looker
SELECT
    orders.status  AS "orders.status",
    COUNT(*) AS "orders.count"
FROM public.cov_orders  AS orders
GROUP BY
    1
ORDER BY
    2 DESC, 1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: revenue by created month
-- style: looker
SELECT
    (TO_CHAR(DATE_TRUNC('month', orders.ordered_at ), 'YYYY-MM')) AS "orders.created_month",
    COALESCE(SUM(orders.amount ), 0) AS "orders.total_revenue"
FROM public.cov_orders  AS orders
GROUP BY
    (DATE_TRUNC('month', orders.ordered_at ))
ORDER BY
    1 DESC
FETCH NEXT 500 ROWS ONLY;

-- name: looker: orders with customers explore
-- style: looker
SELECT
    customers.country  AS "customers.country",
    customers.segment  AS "customers.segment",
    COUNT(DISTINCT orders.id ) AS "orders.count",
    COUNT(DISTINCT customers.id ) AS "customers.count",
    COALESCE(SUM(orders.amount ), 0) AS "orders.total_revenue"
FROM public.cov_orders  AS orders
LEFT JOIN public.cov_customers  AS customers ON orders.customer_id = customers.id
GROUP BY
    1,
    2
ORDER BY
    1,
    2
FETCH NEXT 500 ROWS ONLY;

-- name: looker: created date dimension
-- style: looker
SELECT
    (DATE(orders.ordered_at )) AS "orders.created_date",
    COUNT(*) AS "orders.count"
FROM public.cov_orders  AS orders
WHERE ((( orders.ordered_at  ) >= ((TIMESTAMP '2024-11-01')) AND ( orders.ordered_at  ) < ((TIMESTAMP '2024-11-01' + (30 || ' day')::INTERVAL))))
GROUP BY
    1
ORDER BY
    1 DESC
FETCH NEXT 500 ROWS ONLY;

-- name: looker: created week dimension
-- style: looker
SELECT
    (TO_CHAR(DATE_TRUNC('week', orders.ordered_at ), 'YYYY-MM-DD')) AS "orders.created_week",
    COUNT(*) AS "orders.count",
    COALESCE(SUM(orders.shipping_cost ), 0) AS "orders.total_shipping"
FROM public.cov_orders  AS orders
WHERE ((( orders.ordered_at  ) >= ((TIMESTAMP '2024-01-01')) AND ( orders.ordered_at  ) < ((TIMESTAMP '2024-01-01' + (12 || ' week')::INTERVAL))))
GROUP BY
    (DATE_TRUNC('week', orders.ordered_at ))
ORDER BY
    1 DESC
FETCH NEXT 500 ROWS ONLY;

-- name: looker: created year and day of week
-- style: looker
SELECT
    (EXTRACT(YEAR FROM orders.ordered_at )::integer) AS "orders.created_year",
    (EXTRACT(DOW FROM orders.ordered_at )::integer) AS "orders.created_day_of_week_index",
    (TO_CHAR(orders.ordered_at , 'FMDay')) AS "orders.created_day_of_week",
    COUNT(*) AS "orders.count"
FROM public.cov_orders  AS orders
GROUP BY
    1,
    2,
    3
ORDER BY
    1,
    2
FETCH NEXT 500 ROWS ONLY;

-- name: looker: amount tiers
-- style: looker
SELECT
    CASE
WHEN orders.amount  < 500.0 THEN '0'
WHEN orders.amount  >= 500.0 AND orders.amount  < 1000.0 THEN '1'
WHEN orders.amount  >= 1000.0 AND orders.amount  < 2500.0 THEN '2'
WHEN orders.amount  >= 2500.0 AND orders.amount  < 5000.0 THEN '3'
WHEN orders.amount  >= 5000.0 THEN '4'
ELSE '5'
END AS "orders.amount_tier__sort_",
    CASE
WHEN orders.amount  < 500.0 THEN 'Below 500'
WHEN orders.amount  >= 500.0 AND orders.amount  < 1000.0 THEN '500 to 999'
WHEN orders.amount  >= 1000.0 AND orders.amount  < 2500.0 THEN '1000 to 2499'
WHEN orders.amount  >= 2500.0 AND orders.amount  < 5000.0 THEN '2500 to 4999'
WHEN orders.amount  >= 5000.0 THEN '5000 or Above'
ELSE 'Undefined'
END AS "orders.amount_tier",
    COUNT(*) AS "orders.count"
FROM public.cov_orders  AS orders
GROUP BY
    1,
    2
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: is shipped yesno
-- style: looker
SELECT
    (CASE WHEN orders.shipped_at IS NOT NULL  THEN 'Yes' ELSE 'No' END) AS "orders.is_shipped",
    COUNT(*) AS "orders.count"
FROM public.cov_orders  AS orders
GROUP BY
    1
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: filtered by status and date
-- style: looker
SELECT
    orders.channel  AS "orders.channel",
    COUNT(*) AS "orders.count",
    COALESCE(SUM(orders.amount ), 0) AS "orders.total_revenue",
    AVG(orders.amount ) AS "orders.average_amount"
FROM public.cov_orders  AS orders
WHERE ((( orders.ordered_at  ) >= ((TIMESTAMP '2024-01-01')) AND ( orders.ordered_at  ) < ((TIMESTAMP '2024-01-01' + (12 || ' month')::INTERVAL)))) AND (orders.status ) = 'delivered'
GROUP BY
    1
ORDER BY
    3 DESC
FETCH NEXT 500 ROWS ONLY;

-- name: looker: symmetric aggregate over items join
-- style: looker
SELECT
    products.category  AS "products.category",
    COALESCE(CAST( ( SUM(DISTINCT (CAST(FLOOR(COALESCE( orders.amount  ,0)*(1000000*1.0)) AS DECIMAL(65,0))) + ('x' || MD5(orders.id ::varchar))::bit(64)::bigint::DECIMAL(65,0)  *18446744073709551616 + ('x' || SUBSTR(MD5(orders.id ::varchar),17))::bit(64)::bigint::DECIMAL(65,0) ) - SUM(DISTINCT ('x' || MD5(orders.id ::varchar))::bit(64)::bigint::DECIMAL(65,0)  *18446744073709551616 + ('x' || SUBSTR(MD5(orders.id ::varchar),17))::bit(64)::bigint::DECIMAL(65,0)) )  AS DOUBLE PRECISION) / CAST((1000000*1.0) AS DOUBLE PRECISION), 0) AS "orders.total_revenue",
    COUNT(DISTINCT orders.id ) AS "orders.count",
    COALESCE(SUM(order_items.quantity ), 0) AS "order_items.total_quantity"
FROM public.cov_orders  AS orders
LEFT JOIN public.cov_order_items  AS order_items ON orders.id = order_items.order_id
LEFT JOIN public.cov_products  AS products ON order_items.product_id = products.id
GROUP BY
    1
ORDER BY
    2 DESC
FETCH NEXT 500 ROWS ONLY;

-- name: looker: symmetric average over customers join
-- style: looker
SELECT
    orders.status  AS "orders.status",
    CASE WHEN SUM(DISTINCT customers.credit_limit) IS NOT NULL THEN COALESCE(CAST( ( SUM(DISTINCT (CAST(FLOOR(COALESCE( customers.credit_limit  ,0)*(1000000*1.0)) AS DECIMAL(65,0))) + ('x' || MD5(customers.id ::varchar))::bit(64)::bigint::DECIMAL(65,0)  *18446744073709551616 + ('x' || SUBSTR(MD5(customers.id ::varchar),17))::bit(64)::bigint::DECIMAL(65,0) ) - SUM(DISTINCT ('x' || MD5(customers.id ::varchar))::bit(64)::bigint::DECIMAL(65,0)  *18446744073709551616 + ('x' || SUBSTR(MD5(customers.id ::varchar),17))::bit(64)::bigint::DECIMAL(65,0)) )  AS DOUBLE PRECISION) / CAST((1000000*1.0) AS DOUBLE PRECISION), 0) / NULLIF(COUNT(DISTINCT CASE WHEN customers.credit_limit IS NOT NULL THEN customers.id ELSE NULL END), 0) ELSE NULL END AS "customers.average_credit_limit"
FROM public.cov_orders  AS orders
LEFT JOIN public.cov_customers  AS customers ON orders.customer_id = customers.id
GROUP BY
    1
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: totals row
-- style: looker
SELECT
    COUNT(*) AS "orders.count",
    COALESCE(SUM(orders.amount ), 0) AS "orders.total_revenue",
    COUNT(DISTINCT orders.customer_id ) AS "orders.count_customers"
FROM public.cov_orders  AS orders
WHERE (orders.status ) <> 'cancelled' OR (orders.status ) IS NULL
FETCH NEXT 1 ROWS ONLY;

-- name: looker: customer facts derived table
-- style: looker
WITH customer_facts AS (SELECT
        customer_id,
        COUNT(*) AS lifetime_orders,
        SUM(amount) AS lifetime_revenue,
        MIN(ordered_at) AS first_order_at,
        MAX(ordered_at) AS latest_order_at
      FROM public.cov_orders
      GROUP BY customer_id
      )
SELECT
    CASE
WHEN customer_facts.lifetime_orders  < 3 THEN '0'
WHEN customer_facts.lifetime_orders  >= 3 AND customer_facts.lifetime_orders  < 5 THEN '1'
WHEN customer_facts.lifetime_orders  >= 5 THEN '2'
ELSE '3'
END AS "customer_facts.lifetime_orders_tier__sort_",
    COUNT(DISTINCT customers.id ) AS "customers.count",
    COALESCE(SUM(customer_facts.lifetime_revenue ), 0) AS "customer_facts.total_lifetime_revenue"
FROM public.cov_customers  AS customers
LEFT JOIN customer_facts ON customers.id = customer_facts.customer_id
GROUP BY
    1
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: days to ship duration
-- style: looker
SELECT
    (DATE_PART('day', orders.shipped_at - (orders.ordered_at AT TIME ZONE 'UTC'))) AS "orders.days_to_ship",
    COUNT(*) AS "orders.count"
FROM public.cov_orders  AS orders
WHERE orders.shipped_at IS NOT NULL
GROUP BY
    1
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: pivot status by channel
-- style: looker
WITH looker_pivot AS (SELECT
        orders.channel  AS "orders.channel",
        orders.status  AS "orders.status",
        COUNT(*) AS "orders.count"
    FROM public.cov_orders  AS orders
    WHERE (orders.status ) IN ('delivered', 'paid', 'shipped')
    GROUP BY
        1,
        2)
SELECT
    "orders.channel",
    "orders.status",
    "orders.count",
    DENSE_RANK() OVER (ORDER BY "orders.status" ) AS z___pivot_row_rank,
    COUNT(*) OVER (PARTITION BY "orders.status") AS z___pivot_row_count
FROM looker_pivot
ORDER BY
    "orders.status",
    "orders.channel" NULLS LAST
FETCH NEXT 500 ROWS ONLY;

-- name: looker: products by brand with nulls
-- style: looker
SELECT
    products.brand  AS "products.brand",
    COUNT(*) AS "products.count",
    AVG(products.price ) AS "products.average_price",
    MIN(products.launched ) AS "products.first_launch"
FROM public.cov_products  AS products
GROUP BY
    1
ORDER BY
    1 NULLS FIRST
FETCH NEXT 500 ROWS ONLY;

-- name: looker: customer lookup by id
-- style: looker
-- point: true
-- args: [17]
SELECT
    customers.id  AS "customers.id",
    customers.name  AS "customers.name",
    customers.email  AS "customers.email",
    customers.city  AS "customers.city",
    (DATE(customers.created_at )) AS "customers.created_date"
FROM public.cov_customers  AS customers
WHERE (customers.id ) = $1
GROUP BY
    1,
    2,
    3,
    4,
    5
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: order items by product explore
-- style: looker
SELECT
    products.sku  AS "products.sku",
    products.name  AS "products.name",
    COALESCE(SUM(order_items.quantity ), 0) AS "order_items.total_quantity",
    COALESCE(SUM(order_items.quantity * order_items.unit_price ), 0) AS "order_items.gross_revenue"
FROM public.cov_order_items  AS order_items
LEFT JOIN public.cov_products  AS products ON order_items.product_id = products.id
WHERE (products.category ) = 'electronics'
GROUP BY
    1,
    2
ORDER BY
    3 DESC, 1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: customer age tiers
-- style: looker
SELECT
    CASE
WHEN (DATE_PART('year', AGE(DATE '2025-01-01', customers.birth_date))) < 30 THEN '0'
WHEN (DATE_PART('year', AGE(DATE '2025-01-01', customers.birth_date))) >= 30 AND (DATE_PART('year', AGE(DATE '2025-01-01', customers.birth_date))) < 50 THEN '1'
WHEN (DATE_PART('year', AGE(DATE '2025-01-01', customers.birth_date))) >= 50 THEN '2'
ELSE '3'
END AS "customers.age_tier__sort_",
    COUNT(*) AS "customers.count"
FROM public.cov_customers  AS customers
GROUP BY
    1
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: month over month with parameters
-- style: looker
-- args: ["2024-01-01", "web"]
SELECT
    (TO_CHAR(DATE_TRUNC('month', orders.order_date ), 'YYYY-MM')) AS "orders.order_month",
    COUNT(*) AS "orders.count",
    COALESCE(SUM(orders.amount ), 0) AS "orders.total_revenue"
FROM public.cov_orders  AS orders
WHERE (orders.order_date ) >= $1::date AND (orders.channel ) = $2
GROUP BY
    (DATE_TRUNC('month', orders.order_date ))
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: events sessions explore
-- style: looker
SELECT
    events.event_type  AS "events.event_type",
    COUNT(*) AS "events.count",
    COUNT(DISTINCT events.session_id ) AS "events.count_sessions",
    COUNT(DISTINCT events.user_id ) AS "events.count_users"
FROM public.cov_events  AS events
WHERE ((( events.occurred_at  ) >= ((TIMESTAMP '2024-03-01')) AND ( events.occurred_at  ) < ((TIMESTAMP '2024-03-01' + (1 || ' month')::INTERVAL))))
GROUP BY
    1
ORDER BY
    2 DESC, 1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: sessions derived table
-- style: looker
WITH sessions AS (SELECT
        session_id,
        MIN(user_id) AS user_id,
        MIN(occurred_at) AS session_start,
        MAX(occurred_at) AS session_end,
        COUNT(*) AS events,
        SUM(CASE WHEN event_type = 'purchase' THEN 1 ELSE 0 END) AS purchases
      FROM public.cov_events
      GROUP BY session_id
      )
SELECT
    (TO_CHAR(DATE_TRUNC('week', sessions.session_start ), 'YYYY-MM-DD')) AS "sessions.session_start_week",
    COUNT(*) AS "sessions.count",
    COALESCE(SUM(sessions.purchases ), 0) AS "sessions.total_purchases",
    AVG(sessions.events ) AS "sessions.average_events"
FROM sessions
GROUP BY
    (DATE_TRUNC('week', sessions.session_start ))
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: session duration minutes
-- style: looker
WITH sessions AS (SELECT
        session_id,
        MIN(occurred_at) AS session_start,
        MAX(occurred_at) AS session_end
      FROM public.cov_events
      GROUP BY session_id
      )
SELECT
    (FLOOR(EXTRACT(EPOCH FROM sessions.session_end - sessions.session_start) / 60)) AS "sessions.duration_minutes",
    COUNT(*) AS "sessions.count"
FROM sessions
GROUP BY
    1
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: customers filter suggestions
-- style: looker
SELECT
    customers.city  AS "customers.city"
FROM public.cov_customers  AS customers
WHERE (customers.city ) ILIKE '%an%'
GROUP BY
    1
ORDER BY
    1
FETCH NEXT 50 ROWS ONLY;

-- name: looker: repeat customers yesno
-- style: looker
WITH customer_facts AS (SELECT
        customer_id,
        COUNT(*) AS lifetime_orders
      FROM public.cov_orders
      GROUP BY customer_id
      )
SELECT
    (CASE WHEN customer_facts.lifetime_orders > 4  THEN 'Yes' ELSE 'No' END) AS "customer_facts.is_repeat",
    customers.segment  AS "customers.segment",
    COUNT(DISTINCT customers.id ) AS "customers.count"
FROM public.cov_customers  AS customers
INNER JOIN customer_facts ON customers.id = customer_facts.customer_id
GROUP BY
    1,
    2
ORDER BY
    1,
    2
FETCH NEXT 500 ROWS ONLY;

-- name: looker: employees with manager explore
-- style: looker
SELECT
    employees.dept  AS "employees.dept",
    managers.name  AS "managers.name",
    COUNT(*) AS "employees.count",
    COALESCE(SUM(employees.salary ), 0) AS "employees.total_salary"
FROM public.cov_employees  AS employees
LEFT JOIN public.cov_employees  AS managers ON employees.manager_id = managers.id
GROUP BY
    1,
    2
ORDER BY
    1,
    2 NULLS FIRST
FETCH NEXT 500 ROWS ONLY;

-- name: looker: tenure in years
-- style: looker
SELECT
    employees.title  AS "employees.title",
    AVG((DATE_PART('year', AGE(DATE '2025-01-01', employees.hired)))) AS "employees.average_tenure_years",
    MIN(employees.hired ) AS "employees.earliest_hire"
FROM public.cov_employees  AS employees
GROUP BY
    1
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: discount share percent
-- style: looker
SELECT
    (TO_CHAR(DATE_TRUNC('quarter', orders.ordered_at ), 'YYYY-MM')) AS "orders.created_quarter",
    COALESCE(SUM(order_items.quantity * order_items.unit_price * COALESCE(order_items.discount, 0)), 0) AS "order_items.total_discount",
    100.0 * COALESCE(SUM(order_items.quantity * order_items.unit_price * COALESCE(order_items.discount, 0)), 0) / NULLIF(SUM(order_items.quantity * order_items.unit_price), 0) AS "order_items.discount_percent"
FROM public.cov_order_items  AS order_items
LEFT JOIN public.cov_orders  AS orders ON order_items.order_id = orders.id
GROUP BY
    (DATE_TRUNC('quarter', orders.ordered_at ))
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: first order date per customer
-- style: looker
SELECT
    customers.id  AS "customers.id",
    (DATE(MIN(orders.ordered_at ))) AS "orders.first_order_date",
    (DATE(MAX(orders.ordered_at ))) AS "orders.latest_order_date",
    COUNT(DISTINCT orders.id ) AS "orders.count"
FROM public.cov_customers  AS customers
LEFT JOIN public.cov_orders  AS orders ON customers.id = orders.customer_id
WHERE (customers.country ) = 'JP'
GROUP BY
    1
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: tags yesno contains
-- style: looker
SELECT
    (CASE WHEN orders.tags @> ARRAY['gift']::text[]  THEN 'Yes' ELSE 'No' END) AS "orders.is_gift",
    COUNT(*) AS "orders.count",
    COALESCE(SUM(orders.amount ), 0) AS "orders.total_revenue"
FROM public.cov_orders  AS orders
GROUP BY
    1
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: product price tiers
-- style: looker
SELECT
    CASE
WHEN products.price  < 50.0 THEN '0'
WHEN products.price  >= 50.0 AND products.price  < 200.0 THEN '1'
WHEN products.price  >= 200.0 THEN '2'
ELSE '3'
END AS "products.price_tier__sort_",
    products.category  AS "products.category",
    COUNT(*) AS "products.count",
    COALESCE(SUM(products.price - products.cost ), 0) AS "products.total_margin"
FROM public.cov_products  AS products
GROUP BY
    1,
    2
ORDER BY
    1,
    2
FETCH NEXT 500 ROWS ONLY;

-- name: looker: order detail drill
-- style: looker
SELECT
    orders.id  AS "orders.id",
    (TO_CHAR(orders.ordered_at , 'YYYY-MM-DD HH24:MI:SS')) AS "orders.created_time",
    orders.status  AS "orders.status",
    customers.name  AS "customers.name",
    orders.amount  AS "orders.amount"
FROM public.cov_orders  AS orders
LEFT JOIN public.cov_customers  AS customers ON orders.customer_id = customers.id
WHERE (customers.segment ) = 'corporate' AND (orders.amount ) > 4000
GROUP BY
    1,
    2,
    3,
    4,
    5
ORDER BY
    2 DESC, 1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: purchase revenue from json
-- style: looker
SELECT
    (events.properties ->> 'browser') AS "events.browser",
    COALESCE(SUM((events.properties ->> 'amount')::numeric ), 0) AS "events.total_purchase_amount",
    COUNT(*) AS "events.count"
FROM public.cov_events  AS events
WHERE (events.event_type ) = 'purchase'
GROUP BY
    1
ORDER BY
    2 DESC
FETCH NEXT 500 ROWS ONLY;

-- name: looker: sql runner month spine
-- style: looker
SELECT
    months.month::date AS "months.month",
    COALESCE(SUM(orders.amount ), 0) AS "orders.total_revenue"
FROM generate_series(TIMESTAMP '2024-01-01', TIMESTAMP '2024-12-01', INTERVAL '1 month') AS months(month)
LEFT JOIN public.cov_orders  AS orders ON DATE_TRUNC('month', orders.order_date::timestamp) = months.month
GROUP BY
    1
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: limit style orders
-- style: looker
SELECT
    orders.currency  AS "orders.currency",
    (TO_CHAR(DATE_TRUNC('year', orders.order_date ), 'YYYY')) AS "orders.order_year",
    COUNT(*) AS "orders.count"
FROM public.cov_orders  AS orders
GROUP BY
    1,
    (DATE_TRUNC('year', orders.order_date ))
ORDER BY
    1,
    2
LIMIT 500;

-- name: looker: customers never ordered
-- style: looker
SELECT
    customers.id  AS "customers.id",
    customers.segment  AS "customers.segment"
FROM public.cov_customers  AS customers
LEFT JOIN public.cov_orders  AS orders ON customers.id = orders.customer_id
WHERE orders.id IS NULL
GROUP BY
    1,
    2
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: event hour of day
-- style: looker
SELECT
    (EXTRACT(HOUR FROM events.occurred_at )::integer) AS "events.occurred_hour_of_day",
    COUNT(*) AS "events.count"
FROM public.cov_events  AS events
GROUP BY
    1
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: percent of total via window
-- style: looker
SELECT
    orders.channel  AS "orders.channel",
    COALESCE(SUM(orders.amount ), 0) AS "orders.total_revenue",
    100.0 * COALESCE(SUM(orders.amount ), 0) / SUM(COALESCE(SUM(orders.amount ), 0)) OVER () AS "orders.percent_of_total"
FROM public.cov_orders  AS orders
GROUP BY
    1
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: running total of orders
-- style: looker
SELECT
    (TO_CHAR(DATE_TRUNC('month', orders.ordered_at ), 'YYYY-MM')) AS "orders.created_month",
    COUNT(*) AS "orders.count",
    SUM(COUNT(*)) OVER (ORDER BY (TO_CHAR(DATE_TRUNC('month', orders.ordered_at ), 'YYYY-MM')) ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS "orders.running_count"
FROM public.cov_orders  AS orders
GROUP BY
    (DATE_TRUNC('month', orders.ordered_at ))
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: rank of products by revenue
-- style: looker
SELECT
    products.id  AS "products.id",
    COALESCE(SUM(order_items.quantity * order_items.unit_price ), 0) AS "order_items.gross_revenue",
    RANK() OVER (ORDER BY COALESCE(SUM(order_items.quantity * order_items.unit_price ), 0) DESC) AS "order_items.revenue_rank"
FROM public.cov_order_items  AS order_items
LEFT JOIN public.cov_products  AS products ON order_items.product_id = products.id
GROUP BY
    1
ORDER BY
    3, 1
FETCH NEXT 20 ROWS ONLY;

-- name: looker: typed table explore
-- style: looker
SELECT
    typed.id  AS "typed.id",
    typed.b  AS "typed.b",
    typed.vc  AS "typed.vc",
    typed.ch  AS "typed.ch",
    (DATE(typed.tstz )) AS "typed.tstz_date",
    typed.u  AS "typed.u"
FROM public.cov_typed  AS typed
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: typed yesno counts
-- style: looker
SELECT
    (CASE WHEN typed.b  THEN 'Yes' ELSE 'No' END) AS "typed.b",
    COUNT(*) AS "typed.count",
    COALESCE(SUM(typed.i4 ), 0) AS "typed.total_i4",
    COALESCE(SUM(typed.n ), 0) AS "typed.total_n"
FROM public.cov_typed  AS typed
GROUP BY
    1
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: typed interval and time dimensions
-- style: looker
SELECT
    typed.id  AS "typed.id",
    typed.iv  AS "typed.iv",
    (EXTRACT(EPOCH FROM typed.iv )) AS "typed.iv_seconds",
    typed.tm  AS "typed.tm",
    (EXTRACT(HOUR FROM typed.tm )::integer) AS "typed.tm_hour"
FROM public.cov_typed  AS typed
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: order point lookup
-- style: looker
-- point: true
SELECT
    orders.id  AS "orders.id",
    orders.status  AS "orders.status",
    orders.amount  AS "orders.amount",
    orders.ordered_at  AS "orders.ordered_at"
FROM public.cov_orders  AS orders
WHERE (orders.id ) = 1001
FETCH NEXT 1 ROWS ONLY;

-- name: looker: segment by loyalty tier pivot input
-- style: looker
SELECT
    customers.segment  AS "customers.segment",
    customers.loyalty_tier  AS "customers.loyalty_tier",
    COUNT(*) AS "customers.count",
    AVG(customers.credit_limit ) AS "customers.average_credit_limit"
FROM public.cov_customers  AS customers
WHERE (customers.is_active )
GROUP BY
    1,
    2
ORDER BY
    1,
    2
FETCH NEXT 500 ROWS ONLY;

-- name: looker: customer value tier derived table
-- style: looker
WITH customer_totals AS (SELECT
        customer_id,
        total,
        CASE WHEN total >= 10000 THEN 'high' WHEN total >= 5000 THEN 'mid' ELSE 'low' END AS tier
      FROM (
        SELECT customer_id, SUM(amount) AS total
        FROM public.cov_orders
        WHERE amount IS NOT NULL
        GROUP BY customer_id
      ) per_customer
      )
SELECT
    customer_totals.tier  AS "customer_totals.tier",
    COUNT(*) AS "customer_totals.count",
    AVG(customer_totals.total ) AS "customer_totals.average_total"
FROM customer_totals
GROUP BY
    1
ORDER BY
    1
FETCH NEXT 500 ROWS ONLY;

-- name: looker: customers with refunds yesno
-- style: looker
SELECT
    customers.segment  AS "customers.segment",
    (CASE WHEN EXISTS (SELECT 1 FROM public.cov_orders AS o WHERE o.customer_id = customers.id AND o.status = 'refunded')  THEN 'Yes' ELSE 'No' END) AS "customers.has_refund",
    (CASE WHEN NOT EXISTS (SELECT 1 FROM public.cov_orders AS o WHERE o.customer_id = customers.id)  THEN 'Yes' ELSE 'No' END) AS "customers.never_ordered",
    COUNT(*) AS "customers.count"
FROM public.cov_customers  AS customers
GROUP BY
    1,
    2,
    3
ORDER BY
    1,
    2,
    3
FETCH NEXT 500 ROWS ONLY;

-- name: tableau: quantity by status
-- style: tableau
SELECT CAST("cov_orders"."status" AS TEXT) AS "status",
  SUM(CAST("cov_order_items"."quantity" AS BIGINT)) AS "sum:quantity:ok"
FROM "public"."cov_orders" "cov_orders"
  INNER JOIN "public"."cov_order_items" "cov_order_items" ON ("cov_orders"."id" = "cov_order_items"."order_id")
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: revenue by year
-- style: tableau
SELECT CAST(EXTRACT(YEAR FROM "cov_orders"."order_date") AS INTEGER) AS "yr:order_date:ok",
  SUM("cov_orders"."amount") AS "sum:amount:ok"
FROM "public"."cov_orders" "cov_orders"
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: month truncated order date
-- style: tableau
SELECT CAST(DATE_TRUNC('MONTH', CAST("cov_orders"."order_date" AS DATE)) AS DATE) AS "tmn:order_date:ok",
  SUM("cov_orders"."amount") AS "sum:amount:ok",
  COUNT(DISTINCT "cov_orders"."customer_id") AS "ctd:customer_id:ok"
FROM "public"."cov_orders" "cov_orders"
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: number of records by channel
-- style: tableau
SELECT "cov_orders"."channel" AS "channel",
  SUM(1) AS "sum:Number of Records:ok"
FROM "public"."cov_orders" "cov_orders"
GROUP BY 1
ORDER BY 1 ASC NULLS FIRST;

-- name: tableau: case calculated field
-- style: tableau
SELECT (CASE WHEN ("cov_orders"."status" IN ('delivered', 'shipped')) THEN 'Fulfilled' WHEN ("cov_orders"."status" = 'paid') THEN 'Awaiting' ELSE NULL END) AS "Calculation_0123456789",
  SUM("cov_orders"."amount") AS "sum:amount:ok",
  COUNT(1) AS "cnt:Number of Records:ok"
FROM "public"."cov_orders" "cov_orders"
GROUP BY 1
ORDER BY 1 ASC NULLS FIRST;

-- name: tableau: date range filter
-- style: tableau
SELECT CAST("cov_orders"."currency" AS TEXT) AS "currency",
  SUM("cov_orders"."shipping_cost") AS "sum:shipping_cost:ok"
FROM "public"."cov_orders" "cov_orders"
WHERE (("cov_orders"."order_date" >= (DATE '2024-01-01')) AND ("cov_orders"."order_date" <= (DATE '2024-06-30')))
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: in list filter
-- style: tableau
SELECT CAST("cov_orders"."channel" AS TEXT) AS "channel",
  AVG(CAST("cov_order_items"."quantity" AS DOUBLE PRECISION)) AS "avg:quantity:ok"
FROM "public"."cov_orders" "cov_orders"
  INNER JOIN "public"."cov_order_items" "cov_order_items" ON ("cov_orders"."id" = "cov_order_items"."order_id")
WHERE ("cov_orders"."status" IN ('paid', 'shipped'))
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: top n countries join
-- style: tableau
SELECT "cov_customers"."country" AS "country",
  SUM("cov_orders"."amount") AS "sum:amount:ok"
FROM "public"."cov_orders" "cov_orders"
  INNER JOIN "public"."cov_customers" "cov_customers" ON ("cov_orders"."customer_id" = "cov_customers"."id")
  INNER JOIN (
  SELECT "cov_customers"."country" AS "country",
    SUM("cov_orders"."amount") AS "$__alias__0"
  FROM "public"."cov_orders" "cov_orders"
    INNER JOIN "public"."cov_customers" "cov_customers" ON ("cov_orders"."customer_id" = "cov_customers"."id")
  GROUP BY 1
  ORDER BY 2 DESC
  LIMIT 5
) "t0" ON ("cov_customers"."country" IS NOT DISTINCT FROM "t0"."country")
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: fixed lod expression
-- style: tableau
SELECT "t0"."first_year" AS "Calculation_first_order_year",
  COUNT(DISTINCT "cov_orders"."customer_id") AS "ctd:customer_id:ok",
  SUM("cov_orders"."amount") AS "sum:amount:ok"
FROM "public"."cov_orders" "cov_orders"
  INNER JOIN (
  SELECT "cov_orders"."customer_id" AS "customer_id",
    MIN(CAST(EXTRACT(YEAR FROM "cov_orders"."order_date") AS INTEGER)) AS "first_year"
  FROM "public"."cov_orders" "cov_orders"
  GROUP BY 1
) "t0" ON ("cov_orders"."customer_id" IS NOT DISTINCT FROM "t0"."customer_id")
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: cast to timestamp day
-- style: tableau
SELECT CAST(CAST("cov_events"."occurred_at" AS DATE) AS TIMESTAMP) AS "tdy:occurred_at:ok",
  COUNT(DISTINCT "cov_events"."session_id") AS "ctd:session_id:ok"
FROM "public"."cov_events" "cov_events"
WHERE ("cov_events"."occurred_at" < (TIMESTAMP '2024-01-20 00:00:00'))
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: weekday with date part
-- style: tableau
SELECT CAST(DATE_PART('dow', "cov_orders"."order_date") AS BIGINT) + 1 AS "wd:order_date:ok",
  COUNT(DISTINCT "cov_orders"."id") AS "ctd:id:ok"
FROM "public"."cov_orders" "cov_orders"
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: price bins
-- style: tableau
SELECT CAST(FLOOR(CAST("cov_products"."price" AS DOUBLE PRECISION) / 100) AS BIGINT) AS "price (bin)",
  COUNT(1) AS "cnt:Number of Records:ok"
FROM "public"."cov_products" "cov_products"
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: string calculations
-- style: tableau
SELECT LOWER(CAST("cov_customers"."segment" AS TEXT)) AS "Calculation_segment_lower",
  SUBSTRING(CAST("cov_customers"."email" AS TEXT), (STRPOS(CAST("cov_customers"."email" AS TEXT), '@') + 1)) AS "Calculation_domain",
  COUNT(1) AS "cnt:Number of Records:ok"
FROM "public"."cov_customers" "cov_customers"
WHERE (NOT ("cov_customers"."email" IS NULL))
GROUP BY 1, 2
ORDER BY 1 ASC, 2 ASC;

-- name: tableau: domain query for filter
-- style: tableau
SELECT "cov_products"."category" AS "category"
FROM "public"."cov_products" "cov_products"
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: date range for axis
-- style: tableau
SELECT MIN("cov_orders"."order_date") AS "tmn:order_date:ok",
  MAX("cov_orders"."order_date") AS "tmx:order_date:ok",
  MIN("cov_orders"."ordered_at") AS "min:ordered_at:ok",
  MAX("cov_orders"."ordered_at") AS "max:ordered_at:ok"
FROM "public"."cov_orders" "cov_orders";

-- name: tableau: count distinct with case
-- style: tableau
SELECT CAST("cov_events"."event_type" AS TEXT) AS "event_type",
  COUNT(DISTINCT (CASE WHEN ("cov_events"."user_id" IS NOT NULL) THEN "cov_events"."user_id" ELSE NULL END)) AS "ctd:Calculation_known_users:ok",
  SUM((CASE WHEN ("cov_events"."referrer" IS NULL) THEN 0 ELSE 1 END)) AS "sum:Calculation_referred:ok"
FROM "public"."cov_events" "cov_events"
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: trunc of numeric
-- style: tableau
SELECT TRUNC("cov_customers"."credit_limit", -3) AS "Calculation_credit_band",
  COUNT(1) AS "cnt:Number of Records:ok",
  MIN("cov_customers"."credit_limit") AS "min:credit_limit:ok",
  MAX("cov_customers"."credit_limit") AS "max:credit_limit:ok"
FROM "public"."cov_customers" "cov_customers"
GROUP BY 1
ORDER BY 1 ASC NULLS FIRST;

-- name: tableau: quarter and year
-- style: tableau
SELECT CAST(EXTRACT(YEAR FROM "cov_orders"."order_date") AS INTEGER) AS "yr:order_date:ok",
  CAST(EXTRACT(QUARTER FROM "cov_orders"."order_date") AS INTEGER) AS "qr:order_date:ok",
  SUM("cov_orders"."amount") AS "sum:amount:ok"
FROM "public"."cov_orders" "cov_orders"
GROUP BY 1, 2
ORDER BY 1 ASC, 2 ASC;

-- name: tableau: double precision measure
-- style: tableau
SELECT CAST("cov_products"."category" AS TEXT) AS "category",
  MIN(CAST("cov_products"."weight_kg" AS DOUBLE PRECISION)) AS "min:weight_kg:ok",
  MAX(CAST("cov_products"."weight_kg" AS DOUBLE PRECISION)) AS "max:weight_kg:ok",
  COUNT("cov_products"."weight_kg") AS "cnt:weight_kg:ok"
FROM "public"."cov_products" "cov_products"
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: discount ratio calculation
-- style: tableau
SELECT CAST("cov_products"."category" AS TEXT) AS "category",
  (CASE WHEN SUM(("cov_order_items"."quantity" * "cov_order_items"."unit_price")) = 0 THEN NULL ELSE SUM((("cov_order_items"."quantity" * "cov_order_items"."unit_price") * "cov_order_items"."discount")) / SUM(("cov_order_items"."quantity" * "cov_order_items"."unit_price")) END) AS "usr:Calculation_discount_ratio:ok"
FROM "public"."cov_order_items" "cov_order_items"
  INNER JOIN "public"."cov_products" "cov_products" ON ("cov_order_items"."product_id" = "cov_products"."id")
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: datediff days
-- style: tableau
SELECT CAST("cov_orders"."status" AS TEXT) AS "status",
  SUM(CAST((CAST("cov_orders"."shipped_at" AS DATE) - CAST("cov_orders"."order_date" AS DATE)) AS BIGINT)) AS "sum:Calculation_days_to_ship:ok",
  COUNT("cov_orders"."shipped_at") AS "cnt:shipped_at:ok"
FROM "public"."cov_orders" "cov_orders"
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: context filter on joined dimension
-- style: tableau
SELECT CAST("cov_products"."subcategory" AS TEXT) AS "subcategory",
  SUM(CAST("cov_order_items"."quantity" AS BIGINT)) AS "sum:quantity:ok",
  SUM(("cov_order_items"."quantity" * "cov_order_items"."unit_price")) AS "sum:Calculation_sales:ok"
FROM "public"."cov_order_items" "cov_order_items"
  INNER JOIN "public"."cov_products" "cov_products" ON ("cov_order_items"."product_id" = "cov_products"."id")
  INNER JOIN "public"."cov_orders" "cov_orders" ON ("cov_order_items"."order_id" = "cov_orders"."id")
WHERE (("cov_products"."category" = 'furniture') AND ("cov_orders"."status" <> 'cancelled'))
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: extract refresh full table
-- style: tableau
SELECT "cov_order_items"."id" AS "id",
  "cov_order_items"."order_id" AS "order_id",
  "cov_order_items"."line_no" AS "line_no",
  "cov_order_items"."product_id" AS "product_id",
  "cov_order_items"."quantity" AS "quantity",
  "cov_order_items"."unit_price" AS "unit_price",
  "cov_order_items"."discount" AS "discount"
FROM "public"."cov_order_items" "cov_order_items"
ORDER BY 1 ASC;

-- name: tableau: parameterized threshold
-- style: tableau
-- args: ["2500.00"]
SELECT CAST("cov_orders"."channel" AS TEXT) AS "channel",
  SUM((CASE WHEN ("cov_orders"."amount" >= $1) THEN 1 ELSE 0 END)) AS "sum:Calculation_big_orders:ok",
  COUNT(1) AS "cnt:Number of Records:ok"
FROM "public"."cov_orders" "cov_orders"
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: minute level timestamp
-- style: tableau
SELECT DATE_TRUNC('HOUR', CAST("cov_events"."occurred_at" AS TIMESTAMP WITHOUT TIME ZONE)) AS "thr:occurred_at:ok",
  COUNT(1) AS "cnt:Number of Records:ok"
FROM "public"."cov_events" "cov_events"
WHERE ("cov_events"."occurred_at" >= (TIMESTAMP '2024-02-01 00:00:00')) AND ("cov_events"."occurred_at" < (TIMESTAMP '2024-02-03 00:00:00'))
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: boolean dimension
-- style: tableau
SELECT "cov_customers"."is_active" AS "is_active",
  COUNT(1) AS "cnt:Number of Records:ok",
  AVG(CAST("cov_customers"."loyalty_tier" AS DOUBLE PRECISION)) AS "avg:loyalty_tier:ok"
FROM "public"."cov_customers" "cov_customers"
GROUP BY 1
ORDER BY 1 ASC NULLS FIRST;

-- name: tableau: set membership
-- style: tableau
SELECT (CASE WHEN ("cov_customers"."country" IN ('DE', 'FR', 'GB')) THEN 'In' ELSE 'Out' END) AS "io:Europe:nk",
  COUNT(DISTINCT "cov_orders"."id") AS "ctd:id:ok",
  SUM("cov_orders"."amount") AS "sum:amount:ok"
FROM "public"."cov_orders" "cov_orders"
  LEFT JOIN "public"."cov_customers" "cov_customers" ON ("cov_orders"."customer_id" = "cov_customers"."id")
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: group calculated field
-- style: tableau
SELECT (CASE WHEN ("cov_products"."subcategory" IN ('phones', 'laptops', 'cables')) THEN 'Tech' WHEN ("cov_products"."subcategory" IN ('chairs', 'desks', 'shelves')) THEN 'Home' ELSE 'Other' END) AS "subcategory (group)",
  COUNT(1) AS "cnt:Number of Records:ok"
FROM "public"."cov_products" "cov_products"
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: table calc source running sum
-- style: tableau
SELECT CAST(DATE_TRUNC('MONTH', CAST("cov_orders"."order_date" AS DATE)) AS DATE) AS "tmn:order_date:ok",
  CAST("cov_orders"."channel" AS TEXT) AS "channel",
  SUM("cov_orders"."amount") AS "sum:amount:ok"
FROM "public"."cov_orders" "cov_orders"
WHERE ("cov_orders"."order_date" >= (DATE '2024-07-01'))
GROUP BY 1, 2
ORDER BY 1 ASC, 2 ASC NULLS LAST;

-- name: tableau: employees salary extract
-- style: tableau
SELECT CAST("cov_employees"."dept" AS TEXT) AS "dept",
  CAST("cov_employees"."title" AS TEXT) AS "title",
  SUM("cov_employees"."salary") AS "sum:salary:ok",
  MIN("cov_employees"."hired") AS "min:hired:ok",
  COUNT(1) AS "cnt:Number of Records:ok"
FROM "public"."cov_employees" "cov_employees"
GROUP BY 1, 2
ORDER BY 1 ASC, 2 ASC;

-- name: tableau: customer attribute join
-- style: tableau
SELECT CAST("cov_customers"."segment" AS TEXT) AS "segment",
  CAST(EXTRACT(YEAR FROM "cov_customers"."created_at") AS INTEGER) AS "yr:created_at:ok",
  COUNT(DISTINCT "cov_customers"."id") AS "ctd:id:ok"
FROM "public"."cov_customers" "cov_customers"
GROUP BY 1, 2
ORDER BY 1 ASC, 2 ASC;

-- name: tableau: percent of total subquery
-- style: tableau
SELECT CAST("cov_orders"."status" AS TEXT) AS "status",
  SUM("cov_orders"."amount") / MAX("t0"."total") AS "pcto:sum:amount:ok"
FROM "public"."cov_orders" "cov_orders"
  CROSS JOIN (SELECT SUM("cov_orders"."amount") AS "total" FROM "public"."cov_orders" "cov_orders") "t0"
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: top n with ties by subcategory
-- style: tableau
SELECT CAST("cov_products"."subcategory" AS TEXT) AS "subcategory",
  SUM(("cov_order_items"."quantity" * "cov_order_items"."unit_price")) AS "sum:Calculation_sales:ok"
FROM "public"."cov_order_items" "cov_order_items"
  INNER JOIN "public"."cov_products" "cov_products" ON ("cov_order_items"."product_id" = "cov_products"."id")
GROUP BY 1
ORDER BY 2 DESC, 1 ASC
LIMIT 5;

-- name: tableau: json field as text
-- style: tableau
SELECT CAST(("cov_orders"."attrs" ->> 'device') AS TEXT) AS "Calculation_device",
  CAST(("cov_orders"."attrs" ->> 'priority') AS INTEGER) AS "Calculation_priority",
  COUNT(1) AS "cnt:Number of Records:ok"
FROM "public"."cov_orders" "cov_orders"
GROUP BY 1, 2
ORDER BY 1 ASC NULLS FIRST, 2 ASC NULLS FIRST;

-- name: tableau: order lookup by id
-- style: tableau
-- point: true
-- args: [42]
SELECT "cov_orders"."id" AS "id",
  CAST("cov_orders"."status" AS TEXT) AS "status",
  "cov_orders"."amount" AS "amount",
  "cov_orders"."order_date" AS "order_date"
FROM "public"."cov_orders" "cov_orders"
WHERE ("cov_orders"."id" = $1);

-- name: tableau: product lookup by id
-- style: tableau
-- point: true
SELECT "cov_products"."id" AS "id",
  "cov_products"."sku" AS "sku",
  "cov_products"."price" AS "price",
  "cov_products"."weight_kg" AS "weight_kg",
  "cov_products"."tags" AS "tags"
FROM "public"."cov_products" "cov_products"
WHERE ("cov_products"."id" = 7);

-- name: tableau: typed columns cast to text
-- style: tableau
SELECT "cov_typed"."id" AS "id",
  CAST("cov_typed"."b" AS TEXT) AS "b",
  CAST("cov_typed"."i8" AS TEXT) AS "i8",
  CAST("cov_typed"."f4" AS TEXT) AS "f4",
  CAST("cov_typed"."f8" AS TEXT) AS "f8",
  CAST("cov_typed"."n" AS TEXT) AS "n",
  CAST("cov_typed"."d" AS TEXT) AS "d",
  CAST("cov_typed"."ts" AS TEXT) AS "ts",
  CAST("cov_typed"."tstz" AS TEXT) AS "tstz",
  CAST("cov_typed"."iv" AS TEXT) AS "iv",
  CAST("cov_typed"."u" AS TEXT) AS "u"
FROM "public"."cov_typed" "cov_typed"
ORDER BY 1 ASC;

-- name: tableau: typed double precision casts
-- style: tableau
SELECT "cov_typed"."id" AS "id",
  CAST("cov_typed"."i2" AS DOUBLE PRECISION) AS "i2",
  CAST("cov_typed"."i8" AS DOUBLE PRECISION) AS "i8",
  CAST("cov_typed"."f4" AS DOUBLE PRECISION) AS "f4",
  CAST("cov_typed"."n" AS DOUBLE PRECISION) AS "n",
  CAST("cov_typed"."nu" AS DOUBLE PRECISION) AS "nu"
FROM "public"."cov_typed" "cov_typed"
ORDER BY 1 ASC;

-- name: tableau: typed extract year
-- style: tableau
SELECT "cov_typed"."id" AS "id",
  CAST(EXTRACT(YEAR FROM "cov_typed"."d") AS INTEGER) AS "yr:d:ok",
  CAST(EXTRACT(MONTH FROM "cov_typed"."ts") AS INTEGER) AS "mn:ts:ok",
  CAST(DATE_TRUNC('DAY', "cov_typed"."ts") AS TIMESTAMP) AS "tdy:ts:ok"
FROM "public"."cov_typed" "cov_typed"
WHERE ("cov_typed"."d" BETWEEN (DATE '0001-01-01') AND (DATE '9999-12-31'))
ORDER BY 1 ASC;

-- name: tableau: typed minmax measures
-- style: tableau
SELECT MIN("cov_typed"."i2") AS "min:i2:ok",
  MAX("cov_typed"."i2") AS "max:i2:ok",
  MIN("cov_typed"."i8") AS "min:i8:ok",
  MAX("cov_typed"."i8") AS "max:i8:ok",
  MIN("cov_typed"."f8") AS "min:f8:ok",
  MAX("cov_typed"."f8") AS "max:f8:ok",
  MIN("cov_typed"."f4") AS "min:f4:ok",
  MAX("cov_typed"."f4") AS "max:f4:ok",
  MIN("cov_typed"."n") AS "min:n:ok",
  MAX("cov_typed"."n") AS "max:n:ok",
  MIN("cov_typed"."vc") AS "min:vc:ok",
  MAX("cov_typed"."ch") AS "max:ch:ok"
FROM "public"."cov_typed" "cov_typed";

-- name: tableau: typed count nulls
-- style: tableau
SELECT COUNT("cov_typed"."b") AS "cnt:b:ok",
  COUNT("cov_typed"."f8") AS "cnt:f8:ok",
  COUNT("cov_typed"."t") AS "cnt:t:ok",
  COUNT("cov_typed"."j") AS "cnt:j:ok",
  COUNT("cov_typed"."by") AS "cnt:by:ok",
  COUNT("cov_typed"."ai") AS "cnt:ai:ok",
  COUNT(DISTINCT "cov_typed"."ch") AS "ctd:ch:ok",
  SUM(1) AS "sum:Number of Records:ok"
FROM "public"."cov_typed" "cov_typed";

-- name: tableau: events by page and type
-- style: tableau
SELECT CAST("cov_events"."page" AS TEXT) AS "page",
  CAST("cov_events"."event_type" AS TEXT) AS "event_type",
  COUNT(1) AS "cnt:Number of Records:ok",
  SUM("cov_events"."revenue") AS "sum:revenue:ok"
FROM "public"."cov_events" "cov_events"
GROUP BY 1, 2
ORDER BY 1 ASC, 2 ASC;

-- name: tableau: level of detail exclude
-- style: tableau
SELECT CAST("cov_products"."category" AS TEXT) AS "category",
  CAST("cov_products"."brand" AS TEXT) AS "brand",
  SUM("cov_products"."price") AS "sum:price:ok",
  MAX("t0"."category_total") AS "max:Calculation_category_total:ok"
FROM "public"."cov_products" "cov_products"
  INNER JOIN (
  SELECT "cov_products"."category" AS "category",
    SUM("cov_products"."price") AS "category_total"
  FROM "public"."cov_products" "cov_products"
  GROUP BY 1
) "t0" ON ("cov_products"."category" IS NOT DISTINCT FROM "t0"."category")
GROUP BY 1, 2
ORDER BY 1 ASC, 2 ASC NULLS FIRST;

-- name: tableau: ordered_at converted to date
-- style: tableau
SELECT CAST("cov_orders"."ordered_at" AS DATE) AS "none:ordered_at:ok",
  SUM("cov_orders"."amount") AS "sum:amount:ok"
FROM "public"."cov_orders" "cov_orders"
WHERE (CAST("cov_orders"."ordered_at" AS DATE) BETWEEN (DATE '2024-12-01') AND (DATE '2024-12-31'))
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: string length and left
-- style: tableau
SELECT LEFT(CAST("cov_products"."sku" AS TEXT), 5) AS "Calculation_sku_prefix",
  LENGTH(CAST("cov_products"."name" AS TEXT)) AS "Calculation_name_length",
  COUNT(1) AS "cnt:Number of Records:ok"
FROM "public"."cov_products" "cov_products"
GROUP BY 1, 2
ORDER BY 1 ASC, 2 ASC;

-- name: tableau: custom sql json payload
-- style: tableau
SELECT CAST("Custom SQL Query"."variant" AS TEXT) AS "variant",
  COUNT(1) AS "cnt:Number of Records:ok",
  MIN("Custom SQL Query"."load_ms") AS "min:load_ms:ok",
  MAX("Custom SQL Query"."load_ms") AS "max:load_ms:ok",
  SUM(CAST("Custom SQL Query"."load_ms" AS BIGINT)) AS "sum:load_ms:ok"
FROM (
  SELECT id, payload ->> 'ab' AS variant, (payload ->> 'ms')::int AS load_ms
  FROM cov_events
  WHERE payload IS NOT NULL
) "Custom SQL Query"
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: custom sql unnested tags
-- style: tableau
SELECT CAST("Custom SQL Query"."tag" AS TEXT) AS "tag",
  COUNT(DISTINCT "Custom SQL Query"."order_id") AS "ctd:order_id:ok",
  SUM("Custom SQL Query"."amount") AS "sum:amount:ok"
FROM (
  SELECT o.id AS order_id, o.amount, unnest(o.tags) AS tag
  FROM cov_orders o
) "Custom SQL Query"
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: custom sql event durations
-- style: tableau
SELECT CAST("Custom SQL Query"."event_type" AS TEXT) AS "event_type",
  SUM("Custom SQL Query"."duration_seconds") AS "sum:duration_seconds:ok",
  MIN("Custom SQL Query"."duration_seconds") AS "min:duration_seconds:ok",
  MAX("Custom SQL Query"."duration_seconds") AS "max:duration_seconds:ok",
  COUNT("Custom SQL Query"."duration_seconds") AS "cnt:duration_seconds:ok"
FROM (
  SELECT event_type, extract(epoch FROM duration) AS duration_seconds
  FROM cov_events
) "Custom SQL Query"
GROUP BY 1
ORDER BY 1 ASC;

-- name: tableau: custom sql typed array elements
-- style: tableau
SELECT "Custom SQL Query"."id" AS "id",
  "Custom SQL Query"."ord" AS "ord",
  "Custom SQL Query"."elem" AS "elem"
FROM (
  SELECT t.id, x.elem, x.ord
  FROM cov_typed t
  CROSS JOIN LATERAL unnest(t.an) WITH ORDINALITY AS x(elem, ord)
) "Custom SQL Query"
ORDER BY 1 ASC, 2 ASC;

-- name: dbt: stg_orders
-- style: dbt
with source as (

    select * from public.cov_orders

),

renamed as (

    select
        id as order_id,
        customer_id,
        order_date::date as order_date,
        ordered_at,
        shipped_at,
        lower(status) as order_status,
        coalesce(channel, 'unknown') as channel,
        currency as currency_code,
        coalesce(shipping_cost, 0)::numeric(16,2) as shipping_cost,
        amount::numeric(16,2) as order_total
    from source

)

select * from renamed
order by order_id;

-- name: dbt: stg_customers
-- style: dbt
with source as (

    select * from public.cov_customers

),

renamed as (

    select
        id as customer_id,
        split_part(name, ' ', 1) as first_name,
        split_part(name, ' ', 2) as last_name,
        nullif(trim(lower(email)), '') as email,
        upper(country) as country_code,
        segment as customer_segment,
        created_at::date as signup_date,
        birth_date,
        coalesce(is_active, false) as is_active,
        loyalty_tier,
        credit_limit::numeric(16,2) as credit_limit
    from source

)

select * from renamed
order by customer_id;

-- name: dbt: stg_order_items with surrogate key
-- style: dbt
with source as (

    select * from public.cov_order_items

),

renamed as (

    select
        md5(cast(coalesce(cast(order_id as text), '') || '-' || coalesce(cast(line_no as text), '') as text)) as order_item_key,
        id as order_item_id,
        order_id,
        line_no,
        product_id,
        quantity,
        unit_price::numeric(16,2) as unit_price,
        coalesce(discount, 0) as discount_rate,
        (quantity * unit_price)::numeric(16,2) as gross_amount,
        (quantity * unit_price * (1 - coalesce(discount, 0)))::numeric(16,2) as net_amount
    from source

)

select * from renamed
order by order_item_id;

-- name: dbt: customer orders rollup
-- style: dbt
with orders as (

    select * from public.cov_orders

),

customer_orders as (

    select
        customer_id,
        min(order_date) as first_order_date,
        max(order_date) as most_recent_order_date,
        count(id) as number_of_orders,
        sum(amount) as lifetime_value
    from orders
    group by 1

),

customers as (

    select * from public.cov_customers

),

final as (

    select
        customers.id as customer_id,
        customers.name,
        customer_orders.first_order_date,
        customer_orders.most_recent_order_date,
        coalesce(customer_orders.number_of_orders, 0) as number_of_orders,
        coalesce(customer_orders.lifetime_value, 0) as lifetime_value
    from customers
    left join customer_orders on customers.id = customer_orders.customer_id

)

select * from final
order by customer_id;

-- name: dbt: latest order per customer dedup
-- style: dbt
with orders as (

    select * from public.cov_orders

),

ranked as (

    select
        *,
        row_number() over (partition by customer_id order by ordered_at desc, id desc) as rn
    from orders

)

select customer_id, id as latest_order_id, ordered_at as latest_ordered_at, status as latest_status
from ranked
where rn = 1
order by customer_id;

-- name: dbt: fct_order_lines
-- style: dbt
with order_items as (

    select * from public.cov_order_items

),

orders as (

    select * from public.cov_orders

),

products as (

    select * from public.cov_products

),

joined as (

    select
        order_items.id as order_item_id,
        orders.id as order_id,
        orders.customer_id,
        orders.order_date,
        products.category,
        order_items.quantity,
        order_items.unit_price,
        products.cost as unit_cost,
        (order_items.quantity * (order_items.unit_price * (1 - coalesce(order_items.discount, 0)) - products.cost))::numeric(16,2) as gross_margin
    from order_items
    inner join orders on order_items.order_id = orders.id
    inner join products on order_items.product_id = products.id

)

select * from joined
where order_date >= '2024-10-01'::date
order by order_item_id;

-- name: dbt: order status pivot
-- style: dbt
with orders as (

    select * from public.cov_orders

),

pivoted as (

    select
        customer_id,
        sum(case when status = 'delivered' then 1 else 0 end) as delivered_count,
        sum(case when status = 'shipped' then 1 else 0 end) as shipped_count,
        sum(case when status = 'paid' then 1 else 0 end) as paid_count,
        sum(case when status = 'pending' then 1 else 0 end) as pending_count,
        sum(case when status = 'cancelled' then 1 else 0 end) as cancelled_count,
        sum(case when status = 'refunded' then amount else 0 end) as refunded_amount
    from orders
    group by customer_id

)

select * from pivoted
order by customer_id;

-- name: dbt: date spine daily revenue
-- style: dbt
with date_spine as (

    select generate_series('2024-06-01'::date, '2024-06-30'::date, interval '1 day')::date as date_day

),

daily as (

    select order_date, count(*) as orders, sum(amount) as revenue
    from public.cov_orders
    group by order_date

)

select
    date_spine.date_day,
    coalesce(daily.orders, 0) as orders,
    coalesce(daily.revenue, 0)::numeric(16,2) as revenue
from date_spine
left join daily on daily.order_date = date_spine.date_day
order by date_spine.date_day;

-- name: dbt: customer segments with case
-- style: dbt
with customer_value as (

    select
        customer_id,
        sum(amount) as lifetime_value,
        count(*) as orders
    from public.cov_orders
    where status not in ('cancelled', 'refunded')
    group by customer_id

),

segmented as (

    select
        customer_id,
        lifetime_value,
        orders,
        case
            when lifetime_value >= 12000 then 'platinum'
            when lifetime_value >= 8000 then 'gold'
            when lifetime_value >= 4000 then 'silver'
            else 'bronze'
        end as value_segment
    from customer_value

)

select value_segment, count(*) as customers, sum(lifetime_value) as total_value, min(orders) as min_orders, max(orders) as max_orders
from segmented
group by value_segment
order by value_segment;

-- name: dbt: products dimension
-- style: dbt
with products as (

    select * from public.cov_products

),

final as (

    select
        id as product_id,
        sku,
        name as product_name,
        category,
        subcategory,
        coalesce(brand, 'unbranded') as brand,
        price::numeric(16,2) as list_price,
        cost::numeric(16,2) as unit_cost,
        (price - cost)::numeric(16,2) as unit_margin,
        round((price - cost) / nullif(price, 0), 4) as margin_rate,
        launched as launched_on,
        not discontinued as is_available,
        coalesce(array_length(tags, 1), 0) as tag_count
    from products

)

select * from final
order by product_id;

-- name: dbt: monthly cohort retention
-- style: dbt
with orders as (

    select customer_id, date_trunc('month', order_date)::date as order_month
    from public.cov_orders
    group by 1, 2

),

first_month as (

    select customer_id, min(order_month) as cohort_month
    from orders
    group by 1

),

activity as (

    select
        first_month.cohort_month,
        (extract(year from age(orders.order_month, first_month.cohort_month)) * 12
         + extract(month from age(orders.order_month, first_month.cohort_month)))::int as months_since_first,
        orders.customer_id
    from orders
    join first_month using (customer_id)

)

select cohort_month, months_since_first, count(distinct customer_id) as active_customers
from activity
where cohort_month < '2023-04-01'
group by 1, 2
order by 1, 2;

-- name: dbt: events sessionized
-- style: dbt
with events as (

    select * from public.cov_events

),

sessions as (

    select
        session_id,
        min(user_id) as user_id,
        min(occurred_at) as session_started_at,
        max(occurred_at) as session_ended_at,
        count(*) as event_count,
        count(*) filter (where event_type = 'page_view') as page_views,
        bool_or(event_type = 'purchase') as converted,
        sum(coalesce(revenue, 0)) as session_revenue
    from events
    group by session_id

)

select
    md5(cast(coalesce(cast(session_id as text), '') as text)) as session_key,
    user_id,
    session_started_at,
    session_ended_at - session_started_at as session_length,
    event_count,
    page_views,
    converted,
    session_revenue
from sessions
order by session_started_at, session_key;

-- name: dbt: incremental events filter
-- style: dbt
with source as (

    select * from public.cov_events
    where occurred_at > '2024-06-15 00:00:00+00'::timestamptz

)

select
    id as event_id,
    user_id,
    event_type,
    occurred_at,
    occurred_at::date as event_date,
    page,
    properties ->> 'browser' as browser,
    (properties -> 'screen' ->> 'w')::int as screen_width
from source
order by event_id;

-- name: dbt: order payments unioned
-- style: dbt
with shipping as (

    select id as order_id, 'shipping' as component, coalesce(shipping_cost, 0)::numeric(16,2) as amount
    from public.cov_orders

),

merchandise as (

    select order_id, 'merchandise' as component, sum(quantity * unit_price)::numeric(16,2) as amount
    from public.cov_order_items
    group by order_id

),

discounts as (

    select order_id, 'discount' as component, -sum(quantity * unit_price * coalesce(discount, 0))::numeric(16,2) as amount
    from public.cov_order_items
    group by order_id

),

unioned as (

    select * from shipping
    union all
    select * from merchandise
    union all
    select * from discounts

)

select component, count(*) as rows, sum(amount) as total
from unioned
group by component
order by component;

-- name: dbt: employee hierarchy
-- style: dbt
with recursive hierarchy as (

    select id, manager_id, name, dept, 1 as depth, name::text as path
    from public.cov_employees
    where manager_id is null

    union all

    select e.id, e.manager_id, e.name, e.dept, h.depth + 1, h.path || ' > ' || e.name
    from public.cov_employees e
    join hierarchy h on e.manager_id = h.id

)

select id, manager_id, dept, depth, path
from hierarchy
order by id;

-- name: dbt: snapshot style validity ranges
-- style: dbt
with orders as (

    select id, customer_id, ordered_at, status
    from public.cov_orders
    where customer_id <= 20

),

versions as (

    select
        customer_id,
        id as order_id,
        status,
        ordered_at as valid_from,
        lead(ordered_at) over (partition by customer_id order by ordered_at, id) as valid_to
    from orders

)

select
    md5(cast(coalesce(cast(customer_id as text), '') || '-' || coalesce(cast(valid_from as text), '') as text)) as scd_id,
    customer_id,
    order_id,
    status,
    valid_from,
    valid_to,
    valid_to is null as is_current
from versions
order by customer_id, valid_from, order_id;

-- name: dbt: not null test
-- style: dbt
select count(*) as failures
from (
    select customer_id as not_null_field
    from public.cov_orders
    where customer_id is null
) validation_errors;

-- name: dbt: unique test
-- style: dbt
select count(*) as failures
from (
    select
        sku as unique_field,
        count(*) as n_records
    from public.cov_products
    where sku is not null
    group by sku
    having count(*) > 1
) validation_errors;

-- name: dbt: accepted values test
-- style: dbt
with all_values as (

    select
        status as value_field,
        count(*) as n_records
    from public.cov_orders
    group by status

)

select *
from all_values
where value_field not in ('delivered', 'shipped', 'paid', 'pending', 'cancelled')
order by value_field;

-- name: dbt: relationships test
-- style: dbt
with child as (
    select customer_id as from_field
    from public.cov_orders
    where customer_id is not null
),

parent as (
    select id as to_field
    from public.cov_customers
)

select count(*) as failures
from child
left join parent
    on child.from_field = parent.to_field
where parent.to_field is null;

-- name: dbt: source freshness
-- style: dbt
select
    max(occurred_at) as max_loaded_at,
    max(occurred_at) - min(occurred_at) as loaded_span
from public.cov_events;

-- name: dbt: recency test
-- style: dbt
with recency as (

    select max(order_date) as most_recent
    from public.cov_orders

)

select most_recent, most_recent - '2024-12-01'::date as days_after_cutoff
from recency
where most_recent < '2024-12-01'::date + 30;

-- name: dbt: fct_daily_product_sales
-- style: dbt
with lines as (

    select
        o.order_date,
        oi.product_id,
        oi.quantity,
        oi.quantity * oi.unit_price * (1 - coalesce(oi.discount, 0)) as net_amount
    from public.cov_order_items oi
    join public.cov_orders o on o.id = oi.order_id
    where o.status not in ('cancelled', 'refunded')

),

daily as (

    select
        order_date,
        product_id,
        sum(quantity) as units,
        sum(net_amount)::numeric(16,2) as net_revenue
    from lines
    group by 1, 2

)

select
    md5(cast(coalesce(cast(order_date as text), '') || '-' || coalesce(cast(product_id as text), '') as text)) as daily_product_key,
    order_date,
    product_id,
    units,
    net_revenue
from daily
where order_date between '2024-02-01' and '2024-02-29'
order by order_date, product_id;

-- name: dbt: customer first and last touch
-- style: dbt
with touches as (

    select
        user_id,
        occurred_at,
        coalesce(referrer, 'direct') as source,
        row_number() over (partition by user_id order by occurred_at, id) as touch_asc,
        row_number() over (partition by user_id order by occurred_at desc, id desc) as touch_desc
    from public.cov_events
    where user_id is not null

)

select
    user_id,
    max(case when touch_asc = 1 then source end) as first_touch_source,
    max(case when touch_desc = 1 then source end) as last_touch_source,
    count(*) as touches
from touches
group by user_id
order by user_id;

-- name: dbt: int_order_items_enriched
-- style: dbt
with items as (

    select * from public.cov_order_items

),

products as (

    select id, category, price from public.cov_products

),

enriched as (

    select
        items.order_id,
        count(*) as item_count,
        sum(items.quantity) as unit_count,
        count(distinct products.category) as category_count,
        string_agg(distinct products.category, ',' order by products.category) as categories,
        max(products.price) as most_expensive_item
    from items
    left join products on items.product_id = products.id
    group by items.order_id

)

select * from enriched
where order_id <= 200
order by order_id;

-- name: dbt: customer ltv window ranks
-- style: dbt
with ltv as (

    select customer_id, sum(amount) as lifetime_value
    from public.cov_orders
    where amount is not null
    group by customer_id

)

select
    customer_id,
    lifetime_value,
    ntile(10) over (order by lifetime_value desc, customer_id) as decile,
    percent_rank() over (order by lifetime_value) as pct_rank,
    cume_dist() over (order by lifetime_value) as cume_dist
from ltv
order by customer_id;

-- name: dbt: boolean flags model
-- style: dbt
with orders as (

    select * from public.cov_orders

)

select
    id as order_id,
    status in ('delivered', 'shipped') as is_fulfilled,
    shipped_at is not null as has_shipped,
    coalesce(attrs ->> 'coupon', '') <> '' as used_coupon,
    coalesce((attrs ->> 'gift_wrap')::boolean, false) as is_gift_wrapped,
    coalesce(tags && array['vip'], false) as is_vip,
    currency = 'EUR' as is_eur
from orders
where id between 1 and 120
order by order_id;

-- name: dbt: exchange rate conversion
-- style: dbt
with orders as (

    select id, order_date, currency, amount from public.cov_orders

),

converted as (

    select
        id as order_id,
        order_date,
        currency,
        amount,
        case currency when 'EUR' then round(amount * 1.0850, 2) else amount end::numeric(16,2) as amount_usd
    from orders

)

select date_trunc('quarter', order_date)::date as quarter, currency, sum(amount) as amount_local, sum(amount_usd) as amount_usd
from converted
group by 1, 2
order by 1, 2;

-- name: dbt: typed staging model
-- style: dbt
with source as (

    select * from public.cov_typed

),

renamed as (

    select
        id,
        coalesce(b, false) as flag,
        i2::int as small_int,
        i8::numeric(20,0) as big_int,
        n::numeric(16,2) as amount_2dp,
        nullif(trim(t), '') as clean_text,
        rtrim(ch) as code,
        d::date as day,
        ts::date as ts_day,
        tstz::timestamp as tstz_local,
        cardinality(ai) as ai_len,
        coalesce(array_length(at, 1), 0) as at_len
    from source

)

select * from renamed
order by id;

-- name: dbt: typed json staging
-- style: dbt
with source as (

    select id, j, jb from public.cov_typed

)

select
    id,
    jsonb_typeof(jb) as jb_type,
    json_typeof(j) as j_type,
    case when jsonb_typeof(jb) = 'object' then jb ->> 'a' end as a_value,
    case when jsonb_typeof(jb) = 'object' then jb #>> '{nested,deep,0}' end as deep_first,
    case when jsonb_typeof(jb) = 'array' then jsonb_array_length(jb) end as array_len
from source
order by id;

-- name: dbt: typed surrogate key over every type
-- style: dbt
select
    id,
    md5(cast(coalesce(cast(i4 as text), '') || '-' || coalesce(cast(n as text), '') || '-' || coalesce(cast(t as text), '') || '-' || coalesce(cast(d as text), '') || '-' || coalesce(cast(u as text), '') || '-' || coalesce(cast(iv as text), '') as text)) as typed_key
from public.cov_typed
order by id;

-- name: dbt: product tags exploded
-- style: dbt
with products as (

    select id, category, tags from public.cov_products

),

exploded as (

    select products.id as product_id, products.category, tag
    from products
    cross join lateral unnest(products.tags) as tag

)

select tag, count(*) as products, count(distinct category) as categories
from exploded
group by tag
order by tag;

-- name: dbt: weekly active users model
-- style: dbt
with activity as (

    select distinct user_id, date_trunc('week', occurred_at)::date as activity_week
    from public.cov_events
    where user_id is not null

)

select activity_week, count(*) as weekly_active_users
from activity
group by activity_week
order by activity_week;

-- name: dbt: order gaps with lag
-- style: dbt
with orders as (

    select customer_id, id, order_date
    from public.cov_orders

),

gaps as (

    select
        customer_id,
        id as order_id,
        order_date,
        order_date - lag(order_date) over (partition by customer_id order by order_date, id) as days_since_previous
    from orders

)

select
    customer_id,
    count(*) as orders,
    round(avg(days_since_previous), 1) as avg_days_between,
    max(days_since_previous) as longest_gap
from gaps
group by customer_id
having count(*) > 1
order by customer_id;

-- name: dbt: funnel model
-- style: dbt
with user_steps as (

    select
        user_id,
        max(case when event_type = 'page_view' then 1 else 0 end) as viewed,
        max(case when event_type = 'add_to_cart' then 1 else 0 end) as added,
        max(case when event_type = 'checkout' then 1 else 0 end) as checked_out,
        max(case when event_type = 'purchase' then 1 else 0 end) as purchased
    from public.cov_events
    where user_id is not null
    group by user_id

)

select
    sum(viewed) as viewed,
    sum(added) as added,
    sum(checked_out) as checked_out,
    sum(purchased) as purchased,
    round(100.0 * sum(purchased) / nullif(sum(viewed), 0), 2) as view_to_purchase_pct
from user_steps;

-- name: dbt: customers with referral chain
-- style: dbt
with customers as (

    select id, name, referred_by from public.cov_customers

)

select
    c.id as customer_id,
    c.referred_by as referrer_id,
    r.name as referrer_name,
    r.referred_by as referrer_referred_by
from customers c
join customers r on r.id = c.referred_by
order by c.id;

-- name: dbt: deduplicated sessions by user
-- style: dbt
with events as (

    select user_id, session_id, occurred_at, id
    from public.cov_events
    where user_id is not null

),

first_event as (

    select distinct on (session_id)
        session_id, user_id, occurred_at as first_seen_at, id as first_event_id
    from events
    order by session_id, occurred_at, id

)

select user_id, count(*) as sessions, min(first_seen_at) as first_session_at
from first_event
group by user_id
order by user_id;

-- name: dbt: metrics by channel and month
-- style: dbt
with orders as (

    select
        date_trunc('month', ordered_at)::date as month,
        coalesce(channel, 'unknown') as channel,
        amount,
        customer_id
    from public.cov_orders
    where status <> 'cancelled'

)

select
    month,
    channel,
    count(*) as orders,
    count(distinct customer_id) as customers,
    coalesce(sum(amount), 0)::numeric(16,2) as revenue,
    round(avg(amount), 2) as avg_order_value
from orders
where month >= '2024-09-01'
group by month, channel
order by month, channel;

-- name: dbt: stg_employees
-- style: dbt
with source as (

    select * from public.cov_employees

)

select
    id as employee_id,
    manager_id,
    upper(left(dept, 1)) || substring(dept from 2) as department,
    initcap(title) as job_title,
    salary::numeric(16,2) as annual_salary,
    (salary / 12)::numeric(16,2) as monthly_salary,
    hired as hired_on,
    extract(year from hired)::int as hire_year,
    is_remote
from source
order by employee_id;

-- name: dbt: order item discount buckets
-- style: dbt
with items as (

    select
        id,
        case
            when discount is null then 'unknown'
            when discount = 0 then 'none'
            when discount < 0.1 then 'small'
            else 'large'
        end as discount_bucket,
        quantity * unit_price as gross
    from public.cov_order_items

)

select discount_bucket, count(*) as lines, sum(gross) as gross_amount
from items
group by discount_bucket
order by discount_bucket;

-- name: dbt: events payload staging
-- style: dbt
with source as (

    select id, payload, properties from public.cov_events
    where id <= 60

)

select
    id as event_id,
    payload ->> 'page' as payload_page,
    payload ->> 'ab' as ab_variant,
    (payload ->> 'ms')::int as load_ms,
    properties #>> '{screen,w}' as screen_w,
    jsonb_array_length(properties -> 'items') as item_count
from source
order by event_id;

-- name: dbt: customer addresses normalized
-- style: dbt
with customers as (

    select id, city, country from public.cov_customers

)

select
    id as customer_id,
    lower(replace(coalesce(city, 'unknown'), ' ', '_')) as city_slug,
    coalesce(country, 'XX') as country_code,
    concat_ws('/', coalesce(country, 'XX'), lower(replace(coalesce(city, 'unknown'), ' ', '_'))) as region_path
from customers
where id <= 100
order by customer_id;

-- name: dbt: order neighbours with defaults
-- style: dbt
with orders as (

    select id, customer_id, order_date, amount
    from public.cov_orders
    where customer_id between 10 and 14

),

neighbours as (

    select
        id as order_id,
        customer_id,
        order_date,
        lag(order_date, 1, '1900-01-01'::date) over (partition by customer_id order by order_date, id) as previous_order_date,
        lead(amount, 1, 0) over (partition by customer_id order by order_date, id) as next_order_amount,
        order_date - lag(order_date) over (partition by customer_id order by order_date, id) as days_since_previous
    from orders

)

select * from neighbours
order by customer_id, order_date, order_id;

-- name: dbt: typed integer casting model
-- style: dbt
with source as (

    select id, i2, i4, i8 from public.cov_typed

),

final as (

    select
        id,
        i2::int8 + i4 as widened_sum,
        i8 / 1000000 as i8_millions,
        abs(i4::int8) as abs_i4,
        coalesce(i4 = 2147483647, false) as is_max_i4,
        coalesce(i8 = -9223372036854775808, false) as is_min_i8,
        cast(i8 as numeric(20,0)) as i8_numeric
    from source

)

select * from final
order by id;

-- name: dbt: typed numeric casting model
-- style: dbt
with source as (

    select id, n, nu from public.cov_typed

),

final as (

    select
        id,
        n,
        nu,
        (n * 2)::numeric(16,4) as n_doubled,
        round(n, 2) as n_2dp,
        trunc(nu, 4) as nu_4dp,
        coalesce(n > 9999999999, false) as n_near_max,
        nu < 0 as nu_negative,
        scale(nu) as nu_scale
    from source

)

select * from final
order by id;

-- name: dashboard: kpi tiles
-- style: dashboard
SELECT count(*) AS orders,
       count(DISTINCT customer_id) AS customers,
       sum(amount) AS revenue,
       round(avg(amount), 2) AS avg_order_value,
       round(100.0 * count(*) FILTER (WHERE status = 'cancelled') / count(*), 1) AS cancel_rate_pct
FROM cov_orders
WHERE order_date BETWEEN '2024-01-01' AND '2024-12-31';

-- name: dashboard: seven day moving average
-- style: dashboard
WITH daily AS (
  SELECT order_date AS d, count(*) AS orders, sum(amount) AS revenue
  FROM cov_orders
  WHERE order_date >= '2024-03-01' AND order_date < '2024-05-01'
  GROUP BY order_date
)
SELECT d, orders, revenue,
       round(avg(revenue) OVER (ORDER BY d ROWS BETWEEN 6 PRECEDING AND CURRENT ROW), 4) AS revenue_7d_avg,
       sum(orders) OVER (ORDER BY d ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) AS orders_7d
FROM daily
ORDER BY d;

-- name: dashboard: month over month growth
-- style: dashboard
WITH m AS (
  SELECT to_char(order_date, 'YYYY-MM') AS month, sum(amount) AS revenue
  FROM cov_orders
  GROUP BY 1
)
SELECT month, revenue,
       lag(revenue, 1, 0::numeric) OVER (ORDER BY month) AS prev_revenue,
       round(100.0 * (revenue - lag(revenue) OVER (ORDER BY month)) / lag(revenue) OVER (ORDER BY month), 1) AS growth_pct
FROM m
ORDER BY month;

-- name: dashboard: customer age from birth date
-- style: dashboard
SELECT id, birth_date,
       age(date '2025-01-01', birth_date) AS age,
       date_part('year', age(date '2025-01-01', birth_date))::int AS age_years,
       extract(decade FROM birth_date) AS decade
FROM cov_customers
WHERE id <= 25
ORDER BY id;

-- name: dashboard: shipping lag intervals
-- style: dashboard
SELECT id, ordered_at, shipped_at,
       shipped_at - (ordered_at AT TIME ZONE 'UTC') AS ship_lag,
       shipped_at - interval '1 day' AS shipped_minus_day,
       order_date + 7 AS review_due,
       order_date - interval '1 month' AS month_before,
       justify_hours(shipped_at - (ordered_at AT TIME ZONE 'UTC')) AS ship_lag_justified
FROM cov_orders
WHERE id BETWEEN 100 AND 130
ORDER BY id;

-- name: dashboard: latest orders per customer lateral
-- style: dashboard
SELECT c.id, c.name, o.id AS order_id, o.ordered_at, o.amount
FROM cov_customers c
CROSS JOIN LATERAL (
  SELECT id, ordered_at, amount
  FROM cov_orders
  WHERE customer_id = c.id
  ORDER BY ordered_at DESC, id DESC
  LIMIT 2
) o
WHERE c.id <= 30
ORDER BY c.id, o.ordered_at DESC, o.id DESC;

-- name: dashboard: org chart recursive
-- style: dashboard
WITH RECURSIVE chain AS (
  SELECT id, manager_id, name, salary, 0 AS lvl, ARRAY[id] AS path
  FROM cov_employees
  WHERE id = 2
  UNION ALL
  SELECT e.id, e.manager_id, e.name, e.salary, c.lvl + 1, c.path || e.id
  FROM cov_employees e
  JOIN chain c ON e.manager_id = c.id
)
SELECT id, name, lvl, path, salary, sum(salary) OVER () AS team_payroll
FROM chain
ORDER BY path;

-- name: dashboard: headcount under each manager recursive
-- style: dashboard
WITH RECURSIVE reports AS (
  SELECT id AS root, id
  FROM cov_employees
  UNION ALL
  SELECT r.root, e.id
  FROM reports r
  JOIN cov_employees e ON e.manager_id = r.id
)
SELECT m.id, m.name, m.title, count(*) - 1 AS reports_total, sum(e.salary) - m.salary AS reports_payroll
FROM reports r
JOIN cov_employees m ON m.id = r.root
JOIN cov_employees e ON e.id = r.id
GROUP BY m.id, m.name, m.title, m.salary
HAVING count(*) > 1
ORDER BY m.id;

-- name: dashboard: json attribute breakdown
-- style: dashboard
SELECT attrs ->> 'source' AS source,
       attrs -> 'utm' ->> 'medium' AS medium,
       attrs #>> '{utm,campaign}' AS campaign,
       count(*) AS orders,
       sum((attrs ->> 'priority')::int) AS priority_sum
FROM cov_orders
WHERE attrs IS NOT NULL AND attrs @> '{"device": "ios"}'
GROUP BY 1, 2, 3
ORDER BY 1, 2, 3;

-- name: dashboard: json notes arrays
-- style: dashboard
SELECT id, attrs -> 'notes' AS notes,
       jsonb_array_length(attrs -> 'notes') AS n_notes,
       jsonb_typeof(attrs -> 'notes' -> 1) AS second_type,
       attrs -> 'notes' ->> 0 AS first_note,
       attrs ? 'coupon' AS has_coupon
FROM cov_orders
WHERE attrs ? 'notes'
ORDER BY id
LIMIT 40;

-- name: dashboard: json aggregation per customer
-- style: dashboard
SELECT customer_id,
       json_agg(json_build_object('id', id, 'status', status) ORDER BY id) AS orders_json,
       jsonb_agg(amount ORDER BY id) AS amounts,
       jsonb_build_object('n', count(*), 'total', sum(amount)) AS summary
FROM cov_orders
WHERE customer_id IN (1, 2, 3, 5, 8, 13)
GROUP BY customer_id
ORDER BY customer_id;

-- name: dashboard: event properties drilldown
-- style: dashboard
SELECT properties ->> 'os' AS os,
       (properties -> 'screen' ->> 'w')::int AS width,
       count(*) AS events,
       count(*) FILTER (WHERE properties ? 'amount') AS purchases,
       sum((properties ->> 'amount')::numeric) AS purchase_amount
FROM cov_events
WHERE properties IS NOT NULL
GROUP BY 1, 2
ORDER BY 1, 2;

-- name: dashboard: array functions on tags
-- style: dashboard
SELECT id, tags,
       tags[1] AS first_tag,
       tags[1:2] AS first_two,
       array_length(tags, 1) AS len,
       cardinality(tags) AS card,
       array_to_string(tags, '|') AS joined,
       array_position(tags, 'gift') AS gift_pos,
       'rush' = ANY(tags) AS is_rush,
       tags && ARRAY['vip', 'promo'] AS overlaps_vip_promo
FROM cov_orders
WHERE id <= 24
ORDER BY id;

-- name: dashboard: array agg of products per order
-- style: dashboard
SELECT order_id,
       array_agg(product_id ORDER BY line_no) AS products,
       array_agg(DISTINCT quantity ORDER BY quantity) AS distinct_quantities,
       string_agg(line_no::text || 'x' || quantity, ', ' ORDER BY line_no) AS lines
FROM cov_order_items
WHERE order_id BETWEEN 500 AND 530
GROUP BY order_id
ORDER BY order_id;

-- name: dashboard: product tag containment
-- style: dashboard
SELECT id, sku, tags
FROM cov_products
WHERE tags @> ARRAY['sale'] OR 'new' = ANY(tags)
ORDER BY id;

-- name: dashboard: email domain parsing
-- style: dashboard
SELECT lower(substring(email FROM position('@' IN email) + 1)) AS domain,
       count(*) AS customers,
       count(*) FILTER (WHERE is_active) AS active
FROM cov_customers
WHERE email LIKE '%@%'
GROUP BY 1
ORDER BY 1;

-- name: dashboard: name search ilike with parameter
-- style: dashboard
-- args: ["%gar%"]
SELECT id, name, country
FROM cov_customers
WHERE name ILIKE $1
ORDER BY id;

-- name: dashboard: quantiles and mode
-- style: dashboard
SELECT category,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY price) AS median_price,
       percentile_disc(0.9) WITHIN GROUP (ORDER BY price) AS p90_price,
       mode() WITHIN GROUP (ORDER BY brand) AS common_brand,
       bool_and(price > cost) AS all_profitable,
       bool_or(discontinued) AS any_discontinued,
       round(stddev_samp(price), 2) AS price_stddev,
       round(variance(price), 2) AS price_variance
FROM cov_products
GROUP BY category
ORDER BY category;

-- name: dashboard: string_agg of skus by category
-- style: dashboard
SELECT category,
       string_agg(sku, ',' ORDER BY sku) AS skus,
       count(DISTINCT brand) AS brands
FROM cov_products
WHERE NOT discontinued
GROUP BY category
ORDER BY category;

-- name: dashboard: filtered aggregates by channel
-- style: dashboard
SELECT channel,
       count(*) AS orders,
       count(*) FILTER (WHERE status = 'delivered') AS delivered,
       sum(amount) FILTER (WHERE currency = 'EUR') AS eur_revenue,
       avg(amount) FILTER (WHERE tags @> ARRAY['gift']) AS avg_gift_order,
       count(DISTINCT customer_id) FILTER (WHERE order_date >= '2024-07-01') AS h2_customers
FROM cov_orders
GROUP BY channel
ORDER BY channel NULLS FIRST;

-- name: dashboard: union of revenue sources
-- style: dashboard
SELECT 'orders' AS source, date_trunc('month', order_date)::date AS month, sum(amount) AS amount
FROM cov_orders
WHERE order_date >= '2024-01-01' AND order_date < '2024-07-01'
GROUP BY 2
UNION ALL
SELECT 'events', date_trunc('month', occurred_at)::date, sum(revenue)
FROM cov_events
WHERE occurred_at < '2024-07-01'
GROUP BY 2
ORDER BY month, source;

-- name: dashboard: intersect and except customers
-- style: dashboard
SELECT 'bought_and_browsed' AS bucket, count(*) AS customers
FROM (SELECT customer_id FROM cov_orders INTERSECT SELECT user_id FROM cov_events) s
UNION ALL
SELECT 'bought_never_browsed', count(*)
FROM (SELECT customer_id FROM cov_orders EXCEPT SELECT user_id FROM cov_events WHERE user_id IS NOT NULL) s
UNION ALL
SELECT 'browsed_never_bought', count(*)
FROM (SELECT user_id FROM cov_events WHERE user_id IS NOT NULL EXCEPT SELECT customer_id FROM cov_orders) s
ORDER BY bucket;

-- name: dashboard: union distinct of ids
-- style: dashboard
SELECT id FROM cov_customers WHERE loyalty_tier = 4 AND id < 60
UNION
SELECT customer_id FROM cov_orders WHERE amount > 7000
ORDER BY 1;

-- name: dashboard: greatest least and case arithmetic
-- style: dashboard
SELECT id, price, cost,
       greatest(price - cost, 0) AS margin,
       least(price, 100.00) AS capped_price,
       CASE WHEN price > 300 THEN price * 0.9 WHEN price > 100 THEN price - 5 ELSE price END AS promo_price,
       (price * 1.2)::numeric(10,2) AS price_with_vat,
       price / 3 AS third,
       round(price / 7, 3) AS seventh,
       id / 7 AS id_div,
       id % 7 AS id_mod
FROM cov_products
WHERE id <= 20
ORDER BY id;

-- name: dashboard: casts to text
-- style: dashboard
SELECT id,
       id::text AS id_text,
       amount::text AS amount_text,
       order_date::text AS date_text,
       shipped_at::text AS shipped_text,
       ordered_at::text AS ordered_text,
       (shipped_at - (ordered_at AT TIME ZONE 'UTC'))::text AS lag_text,
       (status = 'delivered')::text AS delivered_text,
       md5(id::text)::uuid::text AS uuid_text,
       'order #' || id || ' for ' || amount AS label
FROM cov_orders
WHERE id <= 15
ORDER BY id;

-- name: dashboard: generate_series date spine
-- style: dashboard
SELECT s.d::date AS day,
       count(o.id) AS orders,
       coalesce(sum(o.amount), 0) AS revenue
FROM generate_series(date '2024-02-01', date '2024-02-29', interval '1 day') AS s(d)
LEFT JOIN cov_orders o ON o.order_date = s.d::date
GROUP BY s.d
ORDER BY s.d;

-- name: dashboard: weekly spine with events
-- style: dashboard
SELECT w.week_start::date AS week_start,
       (SELECT count(*) FROM cov_events e WHERE e.occurred_at >= w.week_start AND e.occurred_at < w.week_start + interval '7 days') AS events,
       (SELECT count(DISTINCT e.user_id) FROM cov_events e WHERE e.occurred_at >= w.week_start AND e.occurred_at < w.week_start + interval '7 days') AS users
FROM generate_series(timestamptz '2024-01-01 00:00:00+00', timestamptz '2024-03-25 00:00:00+00', interval '1 week') AS w(week_start)
ORDER BY 1;

-- name: dashboard: distinct on latest event per user
-- style: dashboard
SELECT DISTINCT ON (user_id) user_id, id, event_type, occurred_at
FROM cov_events
WHERE user_id IS NOT NULL
ORDER BY user_id, occurred_at DESC, id DESC;

-- name: dashboard: grouping sets country segment
-- style: dashboard
SELECT c.country, c.segment, count(*) AS orders, sum(o.amount) AS revenue,
       GROUPING(c.country, c.segment) AS grp
FROM cov_orders o
JOIN cov_customers c ON c.id = o.customer_id
WHERE c.country IN ('US', 'DE', 'JP')
GROUP BY GROUPING SETS ((c.country, c.segment), (c.country), ())
ORDER BY c.country NULLS LAST, c.segment NULLS LAST;

-- name: dashboard: rollup year month
-- style: dashboard
SELECT extract(year FROM order_date)::int AS yr,
       extract(month FROM order_date)::int AS mon,
       count(*) AS orders,
       sum(amount) AS revenue
FROM cov_orders
GROUP BY ROLLUP (1, 2)
ORDER BY 1 NULLS LAST, 2 NULLS LAST;

-- name: dashboard: cube channel currency
-- style: dashboard
SELECT channel, currency, count(*) AS orders, sum(shipping_cost) AS shipping
FROM cov_orders
GROUP BY CUBE (channel, currency)
ORDER BY GROUPING(channel), channel NULLS FIRST, GROUPING(currency), currency;

-- name: dashboard: first and last value per customer
-- style: dashboard
SELECT DISTINCT customer_id,
       first_value(id) OVER w AS first_order,
       last_value(id) OVER w AS last_order,
       first_value(amount) OVER w AS first_amount,
       nth_value(amount, 2) OVER w AS second_amount
FROM cov_orders
WHERE customer_id <= 40
WINDOW w AS (PARTITION BY customer_id ORDER BY ordered_at, id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
ORDER BY customer_id;

-- name: dashboard: nulls first last ordering
-- style: dashboard
SELECT id, score, birth_date, credit_limit
FROM cov_customers
WHERE id <= 60
ORDER BY credit_limit DESC NULLS LAST, score NULLS FIRST, id;

-- name: dashboard: correlated subquery share
-- style: dashboard
SELECT p.id, p.sku,
       (SELECT sum(oi.quantity) FROM cov_order_items oi WHERE oi.product_id = p.id) AS units,
       (SELECT max(o.order_date) FROM cov_order_items oi JOIN cov_orders o ON o.id = oi.order_id WHERE oi.product_id = p.id) AS last_sold
FROM cov_products p
WHERE p.category = 'toys'
ORDER BY p.id;

-- name: dashboard: in list between like
-- style: dashboard
SELECT id, name, city, credit_limit
FROM cov_customers
WHERE country IN ('FR', 'DE', 'GB')
  AND credit_limit BETWEEN 2000 AND 6000
  AND name LIKE '%a%'
  AND city NOT LIKE 'M%'
ORDER BY id;

-- name: dashboard: is distinct from
-- style: dashboard
SELECT count(*) FILTER (WHERE channel IS DISTINCT FROM 'web') AS not_web,
       count(*) FILTER (WHERE channel IS NOT DISTINCT FROM NULL) AS null_channel,
       count(*) FILTER (WHERE shipping_cost IS DISTINCT FROM 0.99) AS not_min_shipping
FROM cov_orders;

-- name: dashboard: integer and numeric division
-- style: dashboard
SELECT quantity,
       count(*) AS lines,
       sum(quantity) / count(*) AS int_avg,
       sum(quantity)::numeric / count(*) AS exact_avg,
       (sum(unit_price) / count(*))::numeric(12,4) AS avg_price,
       sum(quantity) % 7 AS mod7,
       round(sum(unit_price * quantity) / sum(quantity), 2) AS weighted_price
FROM cov_order_items
GROUP BY quantity
ORDER BY quantity;

-- name: dashboard: rounded float aggregates
-- style: dashboard
SELECT segment,
       round(avg(score)::numeric, 2) AS avg_score,
       round(stddev(score)::numeric, 2) AS sd_score,
       round(sum(score)::numeric, 1) AS total_score,
       count(score) AS scored
FROM cov_customers
GROUP BY segment
ORDER BY segment;

-- name: dashboard: weight stats by category
-- style: dashboard
SELECT category,
       round(avg(weight_kg)::numeric, 2) AS avg_weight,
       min(weight_kg) AS min_weight,
       max(weight_kg) AS max_weight,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY weight_kg) AS median_weight
FROM cov_products
GROUP BY category
ORDER BY category;

-- name: dashboard: revenue by date range parameters
-- style: dashboard
-- args: ["2024-04-01", "2024-04-30", "delivered"]
SELECT order_date, count(*) AS orders, sum(amount) AS revenue
FROM cov_orders
WHERE order_date BETWEEN $1 AND $2
  AND status = $3
GROUP BY order_date
ORDER BY order_date;

-- name: dashboard: top n parameterized
-- style: dashboard
-- args: [5, 3]
SELECT p.id, p.sku, sum(oi.quantity) AS units
FROM cov_order_items oi
JOIN cov_products p ON p.id = oi.product_id
WHERE oi.quantity >= $2
GROUP BY p.id, p.sku
ORDER BY units DESC, p.id
LIMIT $1;

-- name: dashboard: customer orders paged
-- style: dashboard
-- args: [57, 10, 0]
SELECT id, order_date, status, amount
FROM cov_orders
WHERE customer_id = $1
ORDER BY order_date DESC, id DESC
LIMIT $2 OFFSET $3;

-- name: dashboard: events in time window parameters
-- style: dashboard
-- args: ["2024-03-01 00:00:00+00", "2024-03-08 00:00:00+00"]
SELECT event_type, count(*) AS events, count(DISTINCT session_id) AS sessions
FROM cov_events
WHERE occurred_at >= $1::timestamptz AND occurred_at < $2::timestamptz
GROUP BY event_type
ORDER BY event_type;

-- name: dashboard: status any array parameter
-- style: dashboard
-- args: ["{paid,shipped}"]
SELECT status, channel, count(*) AS orders
FROM cov_orders
WHERE status = ANY($1::text[])
GROUP BY status, channel
ORDER BY status, channel;

-- name: dashboard: interval bucket parameter
-- style: dashboard
-- args: ["2 hours"]
SELECT id, occurred_at, duration,
       duration > $1::interval AS long_visit,
       occurred_at + $1::interval AS follow_up_at
FROM cov_events
WHERE id <= 20
ORDER BY id;

-- name: dashboard: employee point read
-- style: dashboard
-- point: true
-- args: [23]
SELECT id, manager_id, name, title, dept, salary, hired, is_remote
FROM cov_employees
WHERE id = $1;

-- name: dashboard: event point read
-- style: dashboard
-- point: true
SELECT *
FROM cov_events
WHERE id = 1234;

-- name: dashboard: order item point read
-- style: dashboard
-- point: true
-- args: [2999]
SELECT oi.*, oi.quantity * oi.unit_price AS line_total
FROM cov_order_items oi
WHERE oi.id = $1;

-- name: dashboard: typed row point read
-- style: dashboard
-- point: true
-- args: [4]
SELECT *
FROM cov_typed
WHERE id = $1;

-- name: dashboard: typed all null row
-- style: dashboard
-- point: true
SELECT *
FROM cov_typed
WHERE id = 7;

-- name: dashboard: typed float specials
-- style: dashboard
SELECT id, f8, f4,
       f8 = 'NaN'::float8 AS f8_nan,
       f8 = 'Infinity'::float8 AS f8_inf,
       f8 = '-Infinity'::float8 AS f8_neg_inf,
       f8 > 0 AS f8_positive,
       f8 < 1e-200 AS f8_tiny,
       f4 = 'NaN'::float4 AS f4_nan
FROM cov_typed
ORDER BY id;

-- name: dashboard: typed float ordering with nan
-- style: dashboard
SELECT id, f8
FROM cov_typed
ORDER BY f8 DESC NULLS LAST, id;

-- name: dashboard: typed float min max with nan
-- style: dashboard
SELECT max(f8) AS max_f8, min(f8) AS min_f8, max(f4) AS max_f4, min(f4) AS min_f4,
       count(*) FILTER (WHERE f8 = 'NaN') AS nan_rows,
       count(*) FILTER (WHERE f8 IN ('Infinity', '-Infinity')) AS inf_rows
FROM cov_typed;

-- name: dashboard: typed text edges
-- style: dashboard
SELECT id, t, vc, ch,
       length(t) AS t_len,
       octet_length(t) AS t_bytes,
       length(ch) AS ch_len,
       ch || '|' AS ch_bar,
       vc = 'trailing   ' AS vc_trailing,
       t = '' AS t_empty,
       trim(t) AS t_trimmed,
       replace(t, '"', '''') AS t_requoted
FROM cov_typed
ORDER BY id;

-- name: dashboard: typed date and timestamp edges
-- style: dashboard
SELECT id, d, ts, tstz,
       isfinite(d) AS d_finite,
       isfinite(ts) AS ts_finite,
       d = 'infinity'::date AS d_inf,
       ts < '0001-01-01 00:00:00'::timestamp AS ts_bc,
       tstz > '9999-01-01 00:00:00+00'::timestamptz AS tstz_far_future,
       CASE WHEN isfinite(d) THEN extract(year FROM d) END AS d_year
FROM cov_typed
ORDER BY id;

-- name: dashboard: typed interval comparisons
-- style: dashboard
SELECT id, iv,
       iv > interval '0' AS positive,
       iv < interval '-1 day' AS less_than_minus_day,
       justify_interval(iv) AS justified,
       iv * 2 AS doubled,
       -iv AS negated
FROM cov_typed
WHERE iv IS NOT NULL
ORDER BY iv, id;

-- name: dashboard: typed time and uuid
-- style: dashboard
SELECT id, tm, u,
       tm + interval '1 hour' AS tm_plus_hour,
       tm > '12:00' AS afternoon,
       u::text AS u_text,
       u = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' AS is_known
FROM cov_typed
ORDER BY u NULLS FIRST, id;

-- name: dashboard: typed bytea and json
-- style: dashboard
SELECT id, by,
       length(by) AS by_len,
       encode(by, 'hex') AS by_hex,
       j::text AS j_text,
       jb::text AS jb_text,
       jb ->> 'k' AS k,
       jb -> 'b' -> 'c' -> 1 AS bc1,
       jb @> '{"a": "b"}' AS has_ab
FROM cov_typed
ORDER BY id;

-- name: dashboard: typed arrays
-- style: dashboard
SELECT id, ai, at, an, af, ad,
       ai[1] AS ai_first,
       at[1] AS at_first,
       array_length(an, 1) AS an_len,
       cardinality(af) AS af_card,
       ad[1] AS ad_first,
       ai @> ARRAY[1] AS ai_has_1,
       array_to_string(at, ',', '*') AS at_joined,
       array_position(ai, 5) AS pos_5
FROM cov_typed
ORDER BY id;

-- name: dashboard: typed comparisons with parameters
-- style: dashboard
-- args: [0, "2000-01-01", "hello"]
SELECT id, i4, d, vc
FROM cov_typed
WHERE i4 > $1 OR d < $2 OR vc = $3
ORDER BY id;

-- name: dashboard: typed bool aggregates
-- style: dashboard
SELECT bool_and(b) AS all_true, bool_or(b) AS any_true, count(*) FILTER (WHERE b) AS trues,
       count(*) FILTER (WHERE NOT b) AS falses, count(*) FILTER (WHERE b IS NULL) AS unknowns,
       every(i4 IS NOT NULL) AS all_i4
FROM cov_typed;

