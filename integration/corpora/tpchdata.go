package corpora

// TPCHSmallData fills TPCHSchema's tables with a few thousand rows drawn
// deterministically from TPC-H's own value domains (TPC-H 2.18 clause
// 4.2.2: region and nation names, p_type and p_container syllables, the
// colours of p_name, market segments, priorities, ship modes, phone
// country codes, dates from 1992 to 1998, comments with "special
// requests" and "Customer Complaints"), so that every one of the 22
// queries' filters selects rows, in a database any test can make in
// seconds (dbgen's scale factors are for bench/tpch).
const TPCHSmallData = `
INSERT INTO region VALUES (0, 'AFRICA', 'lar deposits. blithely final packages cajole'), (1, 'AMERICA', 'hs use ironic, even requests. s'),
  (2, 'ASIA', 'ges. thinly even pinto beans ca'), (3, 'EUROPE', 'ly final courts cajole furiously final excuse'),
  (4, 'MIDDLE EAST', 'uickly special accounts cajole carefully blithely close requests');
INSERT INTO nation SELECT i - 1, n, r, 'nation comment ' || i FROM unnest(
  ARRAY['ALGERIA','ARGENTINA','BRAZIL','CANADA','EGYPT','ETHIOPIA','FRANCE','GERMANY','INDIA','INDONESIA','IRAN','IRAQ','JAPAN',
        'JORDAN','KENYA','MOROCCO','MOZAMBIQUE','PERU','CHINA','ROMANIA','SAUDI ARABIA','VIETNAM','RUSSIA','UNITED KINGDOM','UNITED STATES'],
  ARRAY[0,1,1,1,4,0,3,3,2,2,4,4,2,4,0,0,0,1,2,3,4,2,3,3,1]) WITH ORDINALITY AS x(n, r, i);
INSERT INTO part SELECT k,
  c[1 + k % 92] || ' ' || c[1 + (k * 7) % 92] || ' ' || c[1 + (k * 13) % 92] || ' ' || c[1 + (k * 29) % 92] || ' ' || c[1 + (k * 31) % 92],
  'Manufacturer#' || (1 + k % 5), 'Brand#' || (1 + k % 5) || (1 + (k / 5) % 5),
  (ARRAY['STANDARD','SMALL','MEDIUM','LARGE','ECONOMY','PROMO'])[1 + k % 6] || ' ' ||
  (ARRAY['ANODIZED','BURNISHED','PLATED','POLISHED','BRUSHED'])[1 + (k / 6) % 5] || ' ' ||
  (ARRAY['TIN','NICKEL','BRASS','STEEL','COPPER'])[1 + (k / 7) % 5],
  1 + (k * 17) % 50,
  (ARRAY['SM','LG','MED','JUMBO','WRAP'])[1 + k % 5] || ' ' || (ARRAY['CASE','BOX','BAG','JAR','PKG','PACK','CAN','DRUM'])[1 + (k / 5) % 8],
  (90000 + (k / 10) % 20001 + 100 * (k % 1000)) / 100.0, 'part ' || k
FROM generate_series(1, 400) k, (SELECT ARRAY['almond','antique','aquamarine','azure','beige','bisque','black','blanched','blue',
  'blush','brown','burlywood','burnished','chartreuse','chiffon','chocolate','coral','cornflower','cornsilk','cream','cyan','dark',
  'deep','dim','dodger','drab','firebrick','floral','forest','frosted','gainsboro','ghost','goldenrod','green','grey','honeydew',
  'hot','indian','ivory','khaki','lace','lavender','lawn','lemon','light','lime','linen','magenta','maroon','medium','metallic',
  'midnight','mint','misty','moccasin','navajo','navy','olive','orange','orchid','pale','papaya','peach','peru','pink','plum',
  'powder','puff','purple','red','rose','rosy','royal','saddle','salmon','sandy','seashell','sienna','sky','slate','smoke','snow',
  'spring','steel','tan','thistle','tomato','turquoise','violet','wheat','white','yellow'] AS c) colours;
INSERT INTO supplier SELECT k, 'Supplier#' || lpad(k::text, 9, '0'), 'address ' || k, k % 25,
  (10 + k % 25) || '-' || (100 + k % 900) || '-' || (100 + k * 7 % 900) || '-' || (1000 + k * 13 % 9000),
  ((k * 7919) % 1099999 - 99999) / 100.0,
  CASE WHEN k % 11 = 0 THEN 'careful Customer slyly Complaints about' ELSE 'supplier comment ' || k END
FROM generate_series(1, 40) k;
INSERT INTO partsupp SELECT p, 1 + (p + j * 10) % 40, 1 + (p * 31 + j) % 9999, (100 + (p * 7 + j * 13) % 99900) / 100.0, 'ps ' || p || ' ' || j
FROM generate_series(1, 400) p, generate_series(0, 3) j;
INSERT INTO customer SELECT k, 'Customer#' || lpad(k::text, 9, '0'), 'address ' || k, k % 25,
  (10 + k % 25) || '-' || (100 + k % 900) || '-' || (100 + k * 7 % 900) || '-' || (1000 + k * 13 % 9000),
  ((k * 7907) % 1099999 - 99999) / 100.0,
  (ARRAY['AUTOMOBILE','BUILDING','FURNITURE','MACHINERY','HOUSEHOLD'])[1 + k % 5], 'customer comment ' || k
FROM generate_series(1, 300) k;
INSERT INTO orders SELECT k, 1 + (k * 7) % 300 + CASE WHEN (1 + (k * 7) % 300) % 3 = 0 THEN 1 ELSE 0 END,
  (ARRAY['F','O','P'])[1 + k % 3], (100000 + (k * 7727) % 50000000) / 100.0,
  date '1992-01-01' + (k * 37) % 2405,
  (ARRAY['1-URGENT','2-HIGH','3-MEDIUM','4-NOT SPECIFIED','5-LOW'])[1 + k % 5], 'Clerk#' || lpad((1 + k % 1000)::text, 9, '0'), 0,
  CASE WHEN k % 17 = 0 THEN 'blithe special packages requests' ELSE 'order comment ' || k END
FROM generate_series(1, 3000) k;
INSERT INTO lineitem SELECT o.o_orderkey, p, 1 + (p + (ln % 4) * 10) % 40, ln,
  1 + (o.o_orderkey * 3 + ln) % 50, (1 + (o.o_orderkey * 3 + ln) % 50) * (900 + p % 200),
  ((o.o_orderkey + ln) % 11) / 100.0, ((o.o_orderkey * 5 + ln) % 9) / 100.0,
  CASE WHEN o.o_orderdate + 30 < date '1995-06-17' THEN (ARRAY['R','A'])[1 + (o.o_orderkey + ln) % 2] ELSE 'N' END,
  CASE WHEN o.o_orderdate + 30 > date '1995-06-17' THEN 'O' ELSE 'F' END,
  o.o_orderdate + 1 + ((o.o_orderkey + ln) % 121)::int, o.o_orderdate + 30 + ((o.o_orderkey * ln) % 61)::int,
  o.o_orderdate + 2 + ((o.o_orderkey * 3 + ln * 11) % 61)::int,
  (ARRAY['DELIVER IN PERSON','COLLECT COD','NONE','TAKE BACK RETURN'])[1 + (o.o_orderkey + ln) % 4],
  (ARRAY['REG AIR','AIR','RAIL','SHIP','TRUCK','MAIL','FOB'])[1 + (o.o_orderkey * 3 + ln) % 7], 'li ' || o.o_orderkey || ' ' || ln
FROM orders o, generate_series(1, 1 + (o_orderkey % 7)::int) ln, LATERAL (SELECT 1 + (o.o_orderkey * 13 + ln * 7) % 400 AS p) pp;
`
