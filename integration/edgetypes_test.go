package integration

import "testing"

// edgeTypesSchema holds values of the types whose semantics the
// acceleration does not share (issue 44): jsonb scalars, documents with
// numbers of different scales and keys in another order, char(n) with
// and without trailing spaces, reals beside integers, arrays with NULL
// elements, and NULLs to compare rows with.
const edgeTypesSchema = `DROP TABLE IF EXISTS edge_types;
CREATE TABLE edge_types (id int PRIMARY KEY, j jsonb, c char(5), vc varchar(10), f4 real, i8 int8,
  arr int[], narr numeric(8,2)[], t text, d date);
INSERT INTO edge_types VALUES
 (1, '"s"', 'a', 'a  ', 2.5, 1000000000000, '{NULL,1}', '{1.50,2.25}', 'x', '2024-01-01'),
 (2, 'null', 'ab', 'ab', 0.1, 9223372036854775807, '{1,2,3}', '{}', NULL, NULL),
 (3, '1.50', '', '', '-3.4e38', -1, '{}', NULL, '42', '2024-01-01'),
 (4, '1.5', 'a  ', 'b ', 16777217, 16777217, NULL, '{NULL}', 'y', '2024-02-01'),
 (5, '[1, "2", null]', NULL, NULL, NULL, NULL, '{NULL}', '{-1.00}', 'x', NULL),
 (6, '{"b": 2, "a": [1, {"c": 3}]}', 'abcde', 'abcde', 'NaN', 3, '{3,NULL}', '{0.10}', NULL, '2024-01-01'),
 (7, '[]', 'x', 'x   ', 'Infinity', 0, '{1}', '{1.5}', 'z', '2023-12-31'),
 (8, '{}', 'é', 'é', 1.5, 7, '{2,2}', '{2}', 'x', '2024-01-01');
GRANT SELECT ON edge_types TO app;`

const edgeTypesDatasets = `  - from: postgres:public.edge_types
`

// edgeTypeQueries are reads of those values each of which the
// acceleration answered wrongly (issue 44); each must now be answered as
// the origin answers it.
var edgeTypeQueries = []struct{ class, sql string }{
	// jsonb: ordering, equality and merging by its value, not its text.
	{"ORDER BY jsonb", "SELECT id, j FROM edge_types ORDER BY j, id"},
	{"jsonb compared", "SELECT a.id, b.id FROM edge_types a, edge_types b WHERE a.j < b.j ORDER BY 1, 2"},
	{"jsonb equality of numbers", "SELECT a.id, b.id FROM edge_types a JOIN edge_types b ON a.j = b.j ORDER BY 1, 2"},
	{"GROUP BY jsonb", "SELECT count(*), count(DISTINCT j) FROM (SELECT j FROM edge_types GROUP BY j) s"},
	{"jsonb equal to a literal", "SELECT id FROM edge_types WHERE j = '{\"b\": 2, \"a\": [1, {\"c\": 3}]}' ORDER BY id"},
	{"max of jsonb", "SELECT max(j) FROM edge_types"},
	{"window ORDER BY jsonb", "SELECT id, rank() OVER (ORDER BY j) FROM edge_types ORDER BY id"},
	{"jsonb || jsonb", "SELECT id, j || j FROM edge_types ORDER BY id"},
	// jsonb scalars are one-element arrays; casts check the JSON type.
	{"-> of a jsonb scalar", "SELECT id, j -> 0, j -> -1, j ->> 0, j -> 1, j -> 'a' -> 1 -> 'c' FROM edge_types ORDER BY id"},
	{"jsonb cast to integer", "SELECT id, (j -> 0)::int4 FROM edge_types WHERE id = 1 ORDER BY id"},
	{"jsonb cast to boolean", "SELECT id, (j -> 0)::bool FROM edge_types WHERE id = 4 ORDER BY id"},
	// char(n): trailing spaces insignificant in comparisons, significant
	// in LIKE and in printing functions.
	{"char(n) = literal with spaces", "SELECT id FROM edge_types WHERE c = 'a  ' ORDER BY id"},
	{"char(n) = varchar", "SELECT id FROM edge_types WHERE c = vc ORDER BY id"},
	{"varchar = char(n)", "SELECT id FROM edge_types WHERE 'a  '::varchar = c ORDER BY id"},
	{"char(n) < literal", "SELECT id FROM edge_types WHERE c < 'a ' ORDER BY id"},
	{"char(n) LIKE", "SELECT id, c LIKE 'a', c LIKE 'a%', c LIKE '%  ', c NOT LIKE 'a %', c ILIKE 'A%' FROM edge_types ORDER BY id"},
	{"concat of char(n)", "SELECT id, concat(c, '|'), concat_ws(',', c, vc) FROM edge_types ORDER BY id"},
	// real beside integers and decimals: double precision in Postgres.
	{"bigint minus a real literal", "SELECT id, i8 - '2.5'::float4 FROM edge_types ORDER BY id"},
	{"real times a bigint", "SELECT id, '-3.4e38'::float4 * i8 FROM edge_types ORDER BY id"},
	{"coalesce of a real times a bigint", "SELECT id, coalesce(f4, 0) * i8 FROM edge_types ORDER BY id"},
	{"real compared with a decimal", "SELECT id FROM edge_types WHERE f4 = 0.1 ORDER BY id"},
	{"real compared with a bigint", "SELECT id, f4 = i8, f4 < i8 FROM edge_types ORDER BY id"},
	{"real compared with exact literals", "SELECT id, f4 = 2.5, f4 > 16777216, f4 < 1e10 FROM edge_types ORDER BY id"},
	// Numeric arrays: each element keeps its scale.
	{"array_append of a numeric array", "SELECT id, array_append(narr, 1.5), array_prepend(2, narr) FROM edge_types ORDER BY id"},
	// Array containment never matches a NULL element.
	{"array containment with NULLs", "SELECT id, arr <@ arr, arr @> arr, arr @> ARRAY[1], ARRAY[NULL::int] <@ arr, arr && arr FROM edge_types ORDER BY id"},
	{"array containment of literals", "SELECT id, arr @> '{1}', '{1}' <@ arr, arr @> '{NULL}' FROM edge_types ORDER BY id"},
	// Row comparisons with NULLs.
	{"row < with NULLs", "SELECT id FROM edge_types WHERE (id, t) < (i8, '42'::text) ORDER BY id"},
	{"row comparisons", "SELECT id, (id, t) <= (3, 'x'), (t, d) > ('x', '2024-01-01'), (i8, t) = (i8, t), (i8, t) <> (3, 'x') FROM edge_types ORDER BY id"},
	{"row IN and IS DISTINCT FROM", "SELECT id, (id, t) IN ((1, 'x'), (2, NULL)), (id, t) NOT IN ((1, 'x')), (t, d) IS DISTINCT FROM ('x', '2024-01-01') FROM edge_types ORDER BY id"},
	{"row equality count", "SELECT count(*) FROM edge_types WHERE (t, d) = (t, d)"},
	// Slices keep their source's NULL flag in binary (array_send).
	{"array slices", "SELECT id, arr[2:2], arr[1:1], arr[:1] FROM edge_types WHERE cardinality(arr) > 0 ORDER BY id"},
	{"trim_array", "SELECT id, trim_array(arr, 1) FROM edge_types WHERE cardinality(arr) > 0 ORDER BY id"},
}

// TestAccel_EdgeTypeClasses: each of edgeTypeQueries is answered byte for
// byte as the origin answers it (runEdgeClasses: both protocols, C and
// en_US.UTF-8 databases, UTC and Australia/Sydney).
func TestAccel_EdgeTypeClasses(t *testing.T) {
	runEdgeClasses(t, "edgetypes", edgeTypesSchema, edgeTypesDatasets, edgeTypeQueries)
}
