// Package auth is client authentication done by pgaccel itself
// (auth.mode: proxy): SCRAM-SHA-256 against the role's verifier as the
// origin stores it, fetched through a SECURITY DEFINER function the
// operator installs once (SetupSQL, printed by `pgaccel setup-sql`).
//
// Built so far, each tested against a real Postgres:
//
//   - the lookup: the function's SQL, the call that reads one role's entry
//     through it (Lookup), and the parser of the verifiers it returns
//     (ParseVerifier);
//   - the server side of SCRAM-SHA-256 (Exchange), with mock exchanges for
//     unknown roles and for roles without a SCRAM verifier;
//   - the client side with a ClientKey in place of a password
//     (ClientExchange), for origin logins as a verified client's role;
//   - the verifier cache (Cache).
//
// The proxy does not use them yet: auth.mode: proxy is refused by the
// config until sessions open origin connections on demand.
//
// The lookup follows pgbouncer's auth_query with its CVEs in mind
// (research/auth-caching.md):
//
//   - every object the function uses is schema-qualified and its
//     search_path is fixed (CVE-2025-12819);
//   - an expired password (rolvaliduntil) is no password (CVE-2025-2291);
//   - roles that cannot log in are not returned;
//   - the CONNECT privilege on the database the client asks for comes back
//     with the verifier.
//
// Only the lookup role may execute the function. It reads pg_authid with
// its owner's rights and returns one row at most. The lookup connection is
// pgaccel's own (origin.dsn): it never carries a client's settings.
//
// # What is kept where, and what an attacker who reads it gets
//
// A verifier (SCRAM-SHA-256$iterations:salt$StoredKey:ServerKey) is what
// the origin stores in pg_authid.
//
//   - It lets its holder check a password offline (a dictionary attack
//     costs the 4096 PBKDF2 iterations per guess).
//   - It lets its holder act as a server to clients: it can verify their
//     logins.
//   - It does not let its holder log in to the origin.
//
// The cache keeps verifiers in memory for cache_ttl (default 60 s) plus
// max_stale (default 1 h) during an outage. With auth.persist they are
// also written to <runtime.data_dir>/auth-verifiers.json:
//
//   - the file has mode 0600 and is replaced atomically;
//   - a file others may read is refused at start;
//   - an attacker who reads the data directory gets what reading
//     pg_authid would give, for the roles that logged in recently.
//
// md5 verifiers are themselves login credentials (pass-the-hash). Roles
// whose verifier is md5 get a mock SCRAM exchange and are refused, so no
// md5 verifier is written.
//
// A ClientKey is recovered from a client's successful SCRAM proof.
//
//   - It is a password equivalent for that role at any server holding the
//     same verifier.
//   - It is kept in memory only, never logged or written, and is dropped
//     when the role's verifier changes: ClientExchange fails with
//     ErrResalted once the password is set again.
//   - An attacker who reads pgaccel's memory gets the keys of the roles
//     logged in since it started, as with pgbouncer.
//
// Passwords are never seen: SCRAM sends none.
package auth
