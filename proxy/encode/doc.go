// Package encode turns values read from DuckDB into the bytes the origin
// PostgreSQL 15 would have sent for the same column, and turns a client's
// Bind parameters into values DuckDB can bind without losing precision.
//
// The proxy uses it in four steps for an accelerated statement:
//
//  1. Settings. LoadSettings reads the session settings that change how
//     values are printed (TimeZone, DateStyle, IntervalStyle,
//     extra_float_digits, bytea_output, client_encoding) from the origin's
//     ParameterStatus values and the SETs the proxy saw. A setting that
//     cannot be reproduced exactly yields ErrUnsupported: the statement goes
//     to the origin.
//  2. Parameters. DecodeParam decodes each Bind parameter (text or binary)
//     for the type the origin's ParameterDescription gives, and BindArg
//     adapts it to duckdb-go and says what to write in place of the
//     placeholder (an explicit CAST, so DuckDB neither infers another type
//     nor rounds).
//  3. Plan. NewEncoder (or Plan) checks once per result that each DuckDB
//     result column (its ColumnTypeDatabaseTypeName) can be printed exactly
//     as the origin's RowDescription column (type OID, typmod, format). The
//     rules (plan.go, compatible) are about representation only: a DuckDB
//     DECIMAL(18,2) is printed with 2 decimals, or with the scale of the
//     column's numeric(p,s) typmod; whether the origin's expression would
//     have had that scale is for the planner's differential tests.
//  4. Values. Encoder.AppendValue appends one value's wire bytes (without
//     the length prefix) to the caller's buffer, allocating nothing for the
//     common scalar types. A value it cannot print exactly (an integer out of
//     the target's range, a timestamp outside Postgres's range, a numeric
//     with more decimals than its column shows) yields ErrUnsupported.
//
// Exactness is established only by differential tests against a real
// Postgres 15 (encode_test.go, params_test.go, float_test.go): each value
// is read from Postgres in text and binary under many session settings and
// from DuckDB, and the bytes are compared; each parameter input is sent to
// Postgres and decoded here, and the values compared.
//
// Known limits, all reported as ErrUnsupported where they can be detected:
// duckdb-go returns TIME '24:00:00' as 00:00:00 (undetectable here; keep
// such values out of accelerations), DuckDB timestamps end at 294247-01-10
// while Postgres's end at 294276, DuckDB's JSON type arrives parsed into
// Go maps (store json and jsonb as VARCHAR holding the origin's text),
// NaN is always sent as the NaN Postgres stores for 'NaN', and array lower
// bounds other than 1 and multi-dimensional arrays are not represented.
// Time zones come from the system tz database, as in Debian's Postgres; a
// binary with an embedded tz database of another release may disagree with
// the origin for recently changed zones.
//
// The same output code also runs inside DuckDB: TextFunctions
// (pgaccel_text, a value's text as Postgres's cast to text prints it) and
// ToCharFunctions (pgaccel_to_char, Postgres's to_char of timestamps and
// dates) are DuckDB scalar functions the app registers with the engine,
// for the planner's rewrites of casts to text, || and to_char.
//
// Errors name columns, types and reasons but never values, which may be
// sensitive: the proxy may log them.
//
// An Encoder is not safe for concurrent use; Settings may be shared once
// loaded.
//
// encode depends on the standard library and duckdb-go's value types only.
// It must never import another pgaccel package (its tests use
// internal/pgtest): proxy imports it.
package encode
