package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgaccel/pgaccel/auth"
	"github.com/pgaccel/pgaccel/catalog"
)

// cmdSetupSQL prints the SQL a superuser runs once at the origin for
// auth.mode: proxy: the verifier lookup function, executable only by the
// user of origin.dsn.
func cmdSetupSQL(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("setup-sql", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("c", "pgaccel.yaml", "config file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: pgaccel setup-sql [-c pgaccel.yaml]\n\nPrints the SQL a superuser runs once in the database of origin.dsn: the function through which\npgaccel reads the verifiers of logging-in roles (auth.mode: proxy), executable only by origin.dsn's user.")
		fs.PrintDefaults()
	}
	extra, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(extra) != 0 {
		return fmt.Errorf("setup-sql takes no arguments, got %q; name the config with -c", strings.Join(extra, " "))
	}
	cfg, err := catalog.Load(*cfgPath)
	if err != nil {
		printConfigError(stderr, err)
		return exitError(1)
	}
	pc, err := pgconn.ParseConfig(cfg.Origin.DSN)
	if err != nil {
		return fmt.Errorf("origin.dsn: %v", err) // pgconn's message names no password
	}
	if pc.User == "" {
		return fmt.Errorf("origin.dsn names no user: the lookup function is granted to origin.dsn's user")
	}
	fmt.Fprint(stdout, auth.SetupSQL(pc.User))
	return nil
}
