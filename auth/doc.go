// Package auth is client authentication done by pgaccel itself
// (auth.mode: proxy): SCRAM-SHA-256 against the role's verifier as the
// origin stores it, fetched through a SECURITY DEFINER function the
// operator installs once (SetupSQL, printed by `pgaccel setup-sql`).
//
// This first part holds the lookup: the function's SQL, the call that
// reads one role's entry through it (Lookup), and the parser of the
// verifiers it returns (ParseVerifier). The verifier cache, the SCRAM
// server exchange and the ClientKeys kept for origin logins build on it.
//
// The lookup follows pgbouncer's auth_query with its CVEs in mind
// (research/auth-caching.md): every object the function uses is
// schema-qualified and its search_path fixed (CVE-2025-12819), an expired
// password (rolvaliduntil) is no password (CVE-2025-2291), roles that
// cannot log in are not returned, and the CONNECT privilege on the
// database the client asks for comes back with the verifier. Only the
// lookup role may execute it; it reads pg_authid with its owner's rights
// and returns one row at most.
package auth
