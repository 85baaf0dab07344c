// Package auth is client authentication done by pgaccel itself
// (auth.mode: proxy): SCRAM-SHA-256 against the role's verifier as the
// origin stores it, fetched through a SECURITY DEFINER function the
// operator installs once (SetupSQL, printed by `pgaccel setup-sql`).
//
// It holds:
//
//   - the lookup: the function's SQL (SetupSQL), the call that reads one
//     role's entry through it (Lookup), the check that it is installed and
//     that the connection's user may execute it (CheckSetup, ErrNoSetup),
//     and the parser of the verifiers it returns (ParseVerifier);
//   - the server side of SCRAM-SHA-256 (Exchange), with mock exchanges for
//     unknown roles and for roles without a SCRAM verifier;
//   - the client side with a ClientKey in place of a password
//     (ClientExchange), for origin logins as a verified client's role;
//   - the verifier cache (Cache);
//   - the private files of auth.persist (WritePrivateFile,
//     ReadPrivateFile): mode 0600, replaced atomically, refused when others
//     may read them.
//
// The lookup and both sides of SCRAM are tested against a real Postgres.
//
// auth may import pgdef only.
//
// # How pgaccel uses it
//
// With auth.mode: proxy (catalog.AuthProxy):
//
//   - app builds the Cache: Fetch runs Lookup on the catalog pool
//     (origin.dsn's user), TTL is auth.cache_ttl, MaxStale auth.max_stale;
//     an unknown role is remembered for 5 s (NegativeTTL), and a failed
//     proof refetches a role's entry at most every 5 s (RefetchEvery).
//     With auth.persist the cache file is
//     <runtime.data_dir>/auth-verifiers.json, read at start. CheckSetup
//     runs once in the background at start and logs an error when the
//     function is missing; `pgaccel validate -origin` runs it too.
//   - The proxy (proxy/proxyauth.go) reads the role's entry from the Cache
//     for each login but replication connections. A role with a SCRAM
//     verifier gets an Exchange with the client; a successful proof yields
//     the ClientKey, which the session keeps. A role with an md5 verifier
//     or none (trust, an expired password) is the origin's to
//     authenticate: its login is relayed as in auth.mode origin. An
//     unknown role, and a role whose verifier is not kept while the origin
//     cannot be reached, gets a mock exchange that fails as a wrong
//     password does (28P01). A failed proof of a known role refetches its
//     entry (Cache.Refetch), unless the entry served stale. A lookup the
//     origin refuses (the function missing) ends the login with 08006 and
//     a hint naming `pgaccel setup-sql`.
//   - The proxy logs origin connections in as the client's role with
//     ClientExchange and the session's ClientKey, at login or later, when
//     a statement needs one (proxy/link.go). ErrResalted (the password was
//     set again) ends the login, after a refetch of the entry, or the
//     session with 28P01.
//   - The proxy's auth-logins.json and app's auth-lookups.json (with
//     auth.persist) are written and read with WritePrivateFile and
//     ReadPrivateFile.
//
// proxy/doc.go has the proxy's side in full and its security review.
//
// # The lookup
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
// md5 verifiers are themselves login credentials (pass-the-hash). pgaccel
// does not verify md5 logins (the proxy relays them to the origin), and
// Cache.Save never writes an md5 verifier: the cache holds one in memory
// only.
//
// A ClientKey is recovered from a client's successful SCRAM proof.
//
//   - It is a password equivalent for that role at any server holding the
//     same verifier.
//   - It is kept in the session's memory only, never logged or written.
//     Once the role's password is set again (another salt), ClientExchange
//     fails with ErrResalted: the key no longer logs in to the origin.
//   - An attacker who reads pgaccel's memory gets the keys of the roles
//     logged in since it started (the memory is not cleared), as with
//     pgbouncer.
//
// Passwords are never seen: SCRAM sends none.
package auth
