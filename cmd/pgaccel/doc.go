// Command pgaccel runs the pgaccel proxy.
//
//	pgaccel run [-c pgaccel.yaml] [-log-level info] [-log-format console|json]
//	        serve clients until SIGINT or SIGTERM, then drain (server.shutdown_grace)
//	pgaccel validate [-c pgaccel.yaml] [-origin]
//	        check a config and print every problem (exit 1) and warning (exit 0);
//	        -origin also checks the datasets at the origin and, for auth.mode: proxy,
//	        the verifier lookup
//	pgaccel status [-c pgaccel.yaml] [-admin host:port] [-token T]
//	        the datasets of a running pgaccel: status, rows, last and next refresh, error
//	pgaccel refresh [-full] [-c pgaccel.yaml] [-admin host:port] [-token T] DATASET...
//	        start a refresh of each DATASET in a running pgaccel (-full: a full reload)
//	pgaccel slots [drop NAME] [-yes] [-c pgaccel.yaml] [-admin host:port] [-token T]
//	        list the origin's replication slots named like pgaccel's, or drop one no
//	        dataset uses (asks first unless -yes)
//	pgaccel setup-sql [-c pgaccel.yaml]
//	        print the SQL a superuser runs once at the origin for auth.mode: proxy
//	pgaccel demo [-listen host:port] [-admin host:port] [-log-level warn]
//	        a throwaway origin (internal/pgtest) with sample data and pgaccel in
//	        front of it, until Ctrl-C; prints how to try it
//	pgaccel version     print the version (also --version, -v)
//	pgaccel help        print the usage (also -h, --help)
//
// status, refresh and slots talk to the admin port of a running pgaccel.
// -admin and -token (default $PGACCEL_ADMIN_TOKEN) win over admin.listen
// and admin.token of the config named by -c, of which only the admin block
// is read; without either, the address is 127.0.0.1:8090. The commands
// take their flags before or after their arguments.
//
// The command parses flags, starts pgaccel through app (run, demo), calls
// the admin port (status, refresh, slots, statements, advise), connects
// to pgaccel as a client (explain: EXPLAIN (pgaccel)) and handles signals:
// SIGINT and SIGTERM drain and stop `run`; during `run`, SIGHUP reloads
// the config file's datasets (App.Reload, as POST /v1/reload), and is
// logged and ignored while pgaccel starts.
//
// cmd/pgaccel may import app, admin, auth, catalog, refresh, pgdef,
// stmtstats and internal/pgtest.
package main
