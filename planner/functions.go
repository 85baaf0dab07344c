package planner

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// The planner does not try to know which functions DuckDB has: DuckDB
// rejects the ones it lacks, the proxy falls back and RememberFallback keeps
// the next call away. What it must catch is what DuckDB would answer
// differently without an error: side effects, and values that depend on the
// transaction, the session or the origin's catalogs.

// deniedFuncs are function names (the last part, as the parser folds it)
// never run on the acceleration, with the reason given.
var deniedFuncs = map[string]uint8{
	// Sequences and other side effects.
	"nextval": flagFunction, "currval": flagFunction, "lastval": flagFunction, "setval": flagFunction,
	"set_config": flagFunction, "current_setting": flagFunction,
	"loread": flagFunction, "lowrite": flagFunction,
	// Randomness.
	"random": flagFunction, "random_normal": flagFunction, "setseed": flagFunction,
	"gen_random_uuid": flagFunction, "uuidv4": flagFunction, "uuidv7": flagFunction,
	// The transaction's or the statement's time, and TimeZone.
	"now": flagFunction, "current_timestamp": flagFunction, "transaction_timestamp": flagFunction,
	"statement_timestamp": flagFunction, "clock_timestamp": flagFunction, "timeofday": flagFunction,
	"localtimestamp": flagFunction, "current_date": flagFunction, "current_time": flagFunction,
	"localtime": flagFunction,
	// The session.
	"current_user": flagFunction, "session_user": flagFunction, "user": flagFunction,
	"current_role": flagFunction, "system_user": flagFunction, "current_schema": flagFunction,
	"current_schemas": flagFunction, "current_database": flagFunction, "current_catalog": flagFunction,
	"current_query": flagFunction, "version": flagFunction, "row_security_active": flagFunction,
	"txid": flagFunction,
	// The origin's catalogs.
	"obj_description": flagCatalog, "col_description": flagCatalog, "shobj_description": flagCatalog,
	"format_type": flagCatalog, "acldefault": flagCatalog, "aclexplode": flagCatalog,
	"makeaclitem": flagCatalog, "currtid2": flagCatalog,
	// DuckDB namesakes that answer differently without an error.
	"format": flagUnsupported, // DuckDB's format takes {} placeholders
}

// setReturning are set-returning functions that DuckDB treats as scalar
// (returning a list) outside FROM.
var setReturning = map[string]bool{
	"generate_series": true, "generate_subscripts": true, "regexp_matches": true,
	"regexp_split_to_table": true, "json_each": true, "json_each_text": true, "jsonb_each": true,
	"jsonb_each_text": true, "json_array_elements": true, "json_array_elements_text": true,
	"jsonb_array_elements": true, "jsonb_array_elements_text": true, "json_object_keys": true,
	"jsonb_object_keys": true,
}

// funcName is the unqualified, lower-case name of a function call.
func funcName(fc *pg_query.FuncCall) string {
	if len(fc.Funcname) == 0 {
		return ""
	}
	if s, ok := fc.Funcname[len(fc.Funcname)-1].GetNode().(*pg_query.Node_String_); ok {
		return strings.ToLower(s.String_.Sval)
	}
	return ""
}

// deniedPrefixes are families of function names never run on the
// acceleration.
var deniedPrefixes = []struct {
	prefix string
	flag   uint8
}{
	{"pg_", flagFunction}, // pg_advisory_*, pg_backend_pid, pg_sleep*, pg_current_xact_id*, pg_get_*, ...
	{"uuid_generate_", flagFunction},
	{"txid_", flagFunction},
	{"inet_", flagFunction},
	{"dblink", flagFunction},
	{"lo_", flagFunction},
	{"binary_upgrade_", flagFunction},
	{"brin_", flagFunction},
	{"gin_clean_pending_list", flagFunction},
	{"query_to_xml", flagFunction},
	{"cursor_to_xml", flagFunction},
	{"table_to_xml", flagFunction},
	{"schema_to_xml", flagFunction},
	{"database_to_xml", flagFunction},
	{"to_reg", flagCatalog}, // to_regclass, to_regtype, to_regproc, ...
}

// writingPrefixes name functions with effects a later read of the same transaction must see
// at the origin (or that lock).
var writingPrefixes = []string{"nextval", "setval", "lo_", "dblink_exec", "pg_advisory_xact_lock", "pg_notify", "pg_try_advisory_xact_lock"}

// pgCatalogAllowed are the functions that may be called as
// pg_catalog.name(...): plain built-ins whose DuckDB namesake behaves the
// same. The rewrite drops the qualification, which DuckDB does not know.
var pgCatalogAllowed = map[string]bool{
	"upper": true, "lower": true, "length": true, "char_length": true, "character_length": true,
	"octet_length": true, "substr": true, "replace": true, "reverse": true, "left": true, "right": true,
	"lpad": true, "rpad": true, "ltrim": true, "rtrim": true, "strpos": true, "concat": true,
	"concat_ws": true, "split_part": true, "starts_with": true, "repeat": true, "md5": true,
	"abs": true, "ceil": true, "ceiling": true, "floor": true, "round": true, "trunc": true,
	"sqrt": true, "cbrt": true, "power": true, "exp": true, "ln": true, "log": true, "log10": true,
	"sign": true, "mod": true, "greatest": true, "least": true,
	"count": true, "sum": true, "avg": true, "min": true, "max": true,
	"bool_and": true, "bool_or": true, "every": true, "string_agg": true, "array_agg": true,
	"date_trunc": true, "date_part": true, "extract": true, "make_date": true,
	"row_number": true, "rank": true, "dense_rank": true, "lag": true, "lead": true,
	"first_value": true, "last_value": true, "ntile": true,
	// x LIKE p ESCAPE e is parsed as x LIKE pg_catalog.like_escape(p, e);
	// the rewrite turns it into DuckDB's like_escape(x, p, e).
	"like_escape": true,
	// x SIMILAR TO p is parsed with pg_catalog.similar_to_escape(p); the
	// operator itself is refused (checkOperator).
	"similar_to_escape": true,
}

// sessionSyntaxFuncs are functions the parser makes of SQL syntax
// (pg_catalog.name with COERCE_SQL_SYNTAX, as for EXTRACT, SUBSTRING ...
// FROM, TRIM, OVERLAY, AT TIME ZONE) that depend on the session when called
// with this many arguments. The deparser writes such calls back as syntax.
var sessionSyntaxFuncs = map[string]int{
	// AT LOCAL is timezone(x) with the session's TimeZone.
	"timezone": 1,
}

// verdict is what a function call means for the route.
type verdict struct {
	flag        uint8
	writes      bool
	setsSession bool
}

// checkFuncCall judges one function call.
func checkFuncCall(fc *pg_query.FuncCall) verdict {
	names, ok := stringsOf(fc.Funcname)
	if !ok || len(names) == 0 || len(names) > 2 {
		return verdict{flag: flagUnsupported}
	}
	name := strings.ToLower(names[len(names)-1])
	var v verdict
	if name == "set_config" {
		v.setsSession = true // set_config('search_path', ...) and ('role', ...)
	}
	for _, p := range writingPrefixes {
		if strings.HasPrefix(name, p) {
			v.writes = true
		}
	}
	if f, ok := deniedFuncs[name]; ok {
		v.flag = f
		return v
	}
	for _, p := range deniedPrefixes {
		if strings.HasPrefix(name, p.prefix) {
			v.flag = p.flag
			return v
		}
	}
	if strings.HasPrefix(name, "has_") && strings.HasSuffix(name, "_privilege") {
		v.flag = flagFunction
		return v
	}
	switch name {
	case "age":
		if len(fc.Args) == 1 { // age(ts) counts from current_date
			v.flag = flagFunction
			return v
		}
	}
	if unknownFunc(name) && (len(names) == 1 || names[0] == "pg_catalog") {
		// Not known to answer as Postgres does (allowlist.go).
		v.flag = flagUnsupported
		return v
	}
	if len(names) == 2 {
		switch {
		case names[0] != "pg_catalog":
			// A function of some schema: the origin's own code.
			v.flag = flagFunction
		case fc.Funcformat == pg_query.CoercionForm_COERCE_SQL_SYNTAX:
			if n, ok := sessionSyntaxFuncs[name]; ok && len(fc.Args) == n {
				v.flag = flagFunction
			}
		case !pgCatalogAllowed[name]:
			v.flag = flagFunction
		}
	}
	return v
}

// regTypes are the object identifier types: their values are the origin's
// catalog OIDs.
var regTypes = map[string]bool{
	"regclass": true, "regtype": true, "regproc": true, "regprocedure": true,
	"regoper": true, "regoperator": true, "regconfig": true, "regdictionary": true,
	"regnamespace": true, "regrole": true, "regcollation": true,
	"oid": true, "xid": true, "xid8": true, "cid": true, "tid": true,
	"pg_lsn": true, "txid_snapshot": true, "pg_snapshot": true,
}

// checkTypeName judges a type named in a cast or elsewhere.
func checkTypeName(t *pg_query.TypeName) uint8 {
	names, ok := stringsOf(t.Names)
	if !ok || len(names) == 0 {
		return flagUnsupported
	}
	last := strings.ToLower(names[len(names)-1])
	if regTypes[last] {
		return flagCatalog
	}
	switch {
	case last == "interval" && len(t.Typmods) > 0:
		// interval year, interval day to minute, interval(2): Postgres
		// truncates the value to the fields, DuckDB keeps it whole.
		return flagUnsupported
	case len(t.Typmods) > 0 && (last == "timestamp" || last == "timestamptz" || last == "time" || last == "timetz"):
		// timestamp(0): Postgres rounds the fraction (and keeps infinity),
		// DuckDB ignores the precision or refuses it.
		return flagUnsupported
	case last == "bpchar" || last == "char" || last == "character":
		// char(n): Postgres pads, and ignores trailing blanks in length,
		// comparison and concatenation; DuckDB has no such type.
		return flagUnsupported
	}
	if len(names) > 2 {
		return flagUnsupported
	}
	return 0
}

// specialTimeInputs are the date/time input strings that mean "now":
// 'now'::timestamp, created_at > 'today'.
var specialTimeInputs = map[string]bool{"now": true, "today": true, "tomorrow": true, "yesterday": true}

// checkConst judges a literal. Any string literal spelling a special time
// input is taken as one, whatever its type turns out to be.
func checkConst(c *pg_query.A_Const) uint8 {
	s, ok := c.Val.(*pg_query.A_Const_Sval)
	if !ok || len(s.Sval.Sval) > 12 {
		return 0
	}
	if specialTimeInputs[strings.ToLower(strings.TrimSpace(s.Sval.Sval))] {
		return flagFunction
	}
	return 0
}

// differingOperators are operators DuckDB has with other semantics: ~ is
// a full regular-expression match there, a partial one in Postgres.
var differingOperators = map[string]bool{"~": true, "!~": true, "~*": true, "!~*": true}

// checkOperator judges an operator expression.
func checkOperator(e *pg_query.A_Expr) uint8 {
	names, ok := stringsOf(e.Name)
	if !ok {
		return flagUnsupported
	}
	if len(names) > 1 && names[0] != "pg_catalog" {
		return flagFunction // OPERATOR(myschema.+): the origin's own code
	}
	if len(names) > 0 && differingOperators[names[len(names)-1]] {
		return flagUnsupported
	}
	switch e.Kind {
	case pg_query.A_Expr_Kind_AEXPR_SIMILAR:
		// DuckDB's SIMILAR TO is a plain regular expression: no % or _.
		return flagUnsupported
	case pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
		if _, ok := likeEscapeFunc(e); ok {
			return flagUnsupported // LIKE ANY (...): no escape-aware form in DuckDB
		}
		if !nullFreeArray(e.Rexpr) && !(e.Kind == pg_query.A_Expr_Kind_AEXPR_OP_ANY && len(names) == 1 && names[0] == "=") {
			// x op ANY(array) is NULL at the origin when the array is NULL
			// or holds a NULL and no element matches; DuckDB says false.
			// x = ANY(array) is rewritten (rewriteEqualsAny).
			return flagUnsupported
		}
	}
	return 0
}

// nullFreeArray reports whether n is an array written out without NULLs:
// ARRAY[...] of non-NULL literals, or a '{...}' literal without NULL.
func nullFreeArray(n *pg_query.Node) bool {
	if tc := n.GetTypeCast(); tc != nil {
		n = tc.Arg
	}
	if ae := n.GetAArrayExpr(); ae != nil {
		for _, el := range ae.Elements {
			if c := el.GetAConst(); c == nil || c.Isnull {
				return false
			}
		}
		return true
	}
	if c := n.GetAConst(); c != nil {
		sv, ok := c.Val.(*pg_query.A_Const_Sval)
		return ok && !strings.Contains(strings.ToLower(sv.Sval.Sval), "null")
	}
	return false
}

// likeEscapeFunc returns DuckDB's escape-aware function for a LIKE-family
// operator: Postgres takes \ as LIKE's escape character unless told
// otherwise, DuckDB has no default escape.
func likeEscapeFunc(e *pg_query.A_Expr) (string, bool) {
	names, ok := stringsOf(e.Name)
	if !ok || len(names) == 0 {
		return "", false
	}
	switch names[len(names)-1] {
	case "~~":
		return "like_escape", true
	case "!~~":
		return "not_like_escape", true
	case "~~*":
		return "ilike_escape", true
	case "!~~*":
		return "not_ilike_escape", true
	}
	return "", false
}
