package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgaccel/pgaccel/catalog"
	"github.com/pgaccel/pgaccel/stmtstats"
)

// cmdExplain is the dry run: how a running pgaccel would route a
// statement now, for a role, and why (EXPLAIN (pgaccel) through its
// pgwire port, so the role's privileges and session settings count).
func cmdExplain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("c", "pgaccel.yaml", "config file of the running pgaccel, for server.listen")
	dsn := fs.String("dsn", os.Getenv("PGACCEL_DSN"), "connection string of the running pgaccel (default $PGACCEL_DSN; else server.listen of the config, with the user, password and database of $PGUSER, $PGPASSWORD, $PGDATABASE)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: pgaccel explain [flags] \"SQL\"\n\nSays whether a running pgaccel would answer SQL from its accelerations now, for the role connecting, and if not, why and what would change that. Nothing runs: SQL is only planned.")
		fs.PrintDefaults()
	}
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		fmt.Fprintln(stderr, "pgaccel explain: give one statement, as in: pgaccel explain \"SELECT count(*) FROM orders\"")
		fs.Usage()
		return exitError(2)
	}
	cfg, err := clientConfig(*dsn, *cfgPath, flagGiven(fs, "c"))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("cannot connect to pgaccel: %w", err)
	}
	defer conn.Close(context.Background())
	var route, datasets, reason, rule, advice *string
	row := conn.QueryRow(ctx, "EXPLAIN (pgaccel) "+rest[0], pgx.QueryExecModeSimpleProtocol)
	if err := row.Scan(&route, &datasets, &reason, &rule, &advice); err != nil {
		return fmt.Errorf("EXPLAIN (pgaccel): %w", err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, f := range []struct {
		name string
		v    *string
	}{{"route", route}, {"datasets", datasets}, {"reason", reason}, {"rule", rule}, {"to accelerate", advice}} {
		if f.v != nil && *f.v != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", f.name, *f.v)
		}
	}
	return tw.Flush()
}

// clientConfig is the pgwire connection of the client commands: dsn
// when given, else server.listen of the config (its default when the
// config is missing and was not named) with the PG* environment.
func clientConfig(dsn, cfgPath string, named bool) (*pgx.ConnConfig, error) {
	if dsn != "" {
		return pgx.ParseConfig(dsn)
	}
	listen := catalog.DefaultServerListen
	if l, err := catalog.LoadServerListen(cfgPath); err == nil {
		listen = l
	} else if named {
		return nil, fmt.Errorf("cannot read server.listen of %s: %w", cfgPath, err)
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("server.listen %q: %w", listen, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	cfg, err := pgx.ParseConfig("")
	if err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "postgres", Host: net.JoinHostPort(host, port), Path: "/" + cfg.Database}
	if cfg.Password != "" {
		u.User = url.UserPassword(cfg.User, cfg.Password)
	} else {
		u.User = url.User(cfg.User)
	}
	q := url.Values{"sslmode": {"prefer"}}
	u.RawQuery = q.Encode()
	return pgx.ParseConfig(u.String())
}

// cmdAdvise prints the advisor's answer of a running pgaccel: the tables
// whose reads cost the origin the most time and are not datasets, with a
// config snippet each, and the datasets whose reads a config change would
// bring back.
func cmdAdvise(args []string, stdout, stderr io.Writer) error {
	var limit *int
	c, err := adminCommand("advise", "Lists, from a running pgaccel's statement statistics, the origin tables to accelerate next (by the origin time their reads cost since the statistics' reset) and config changes for datasets whose reads go to the origin.",
		args, stderr, func(fs *flag.FlagSet) { limit = fs.Int("n", 10, "how many tables to list") })
	if err != nil {
		return err
	}
	var a stmtstats.Advice
	if err := c.do("GET", "/v1/advice", &a); err != nil {
		return err
	}
	if len(a.Tables) == 0 && len(a.Changes) == 0 {
		fmt.Fprintln(stdout, "No advice: no read that went to the origin since the statistics' reset would come from an acceleration with a new dataset or a config change.")
		return nil
	}
	for i, t := range a.Tables {
		if i == *limit {
			fmt.Fprintf(stdout, "(%d more tables: -n)\n", len(a.Tables)-i)
			break
		}
		fmt.Fprintf(stdout, "%d. %s: %.1f ms of origin time in %d calls of %d statements", i+1, t.Table, t.OriginMS, t.Calls, t.Statements)
		if len(t.With) > 0 {
			fmt.Fprintf(stdout, " (together with %s)", strings.Join(t.With, ", "))
		}
		fmt.Fprintf(stdout, "\n   costliest: %s\n   add to datasets:\n%s\n", oneLine(t.Top, 160), indent(t.Config, "   "))
	}
	for _, ch := range a.Changes {
		fmt.Fprintf(stdout, "- dataset %s: %.1f ms of origin time in %d calls went there for %s", ch.Dataset, ch.OriginMS, ch.Calls, ch.Reason)
		if ch.Rule != "" {
			fmt.Fprintf(stdout, " (%s)", ch.Rule)
		}
		fmt.Fprintf(stdout, "\n  change: %s\n", ch.Change)
	}
	return nil
}

// cmdStatements prints a running pgaccel's statement statistics.
func cmdStatements(args []string, stdout, stderr io.Writer) error {
	var limit *int
	var sort *string
	var reset *bool
	c, err := adminCommand("statements", "Prints a running pgaccel's statement statistics: calls, time and route of each statement, and why those sent to the origin went there.",
		args, stderr, func(fs *flag.FlagSet) {
			limit = fs.Int("n", 20, "how many statements")
			sort = fs.String("sort", "origin_time", "origin_time, total_time or calls")
			reset = fs.Bool("reset", false, "forget the statistics instead")
		})
	if err != nil {
		return err
	}
	if *reset {
		if err := c.do("DELETE", "/v1/statements", nil); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "Statement statistics reset.")
		return nil
	}
	var r struct {
		Statements []stmtstats.Stat
	}
	if err := c.do("GET", fmt.Sprintf("/v1/statements?sort=%s&limit=%d", url.QueryEscape(*sort), *limit), &r); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CALLS\tTOTAL MS\tORIGIN MS\tROUTE\tREASON\tROLE\tQUERY")
	for _, s := range r.Statements {
		fmt.Fprintf(tw, "%d\t%.1f\t%.1f\t%s\t%s\t%s\t%s\n", s.Calls, s.TotalMS, s.OriginMS, s.Route, s.Reason, s.Role, oneLine(s.Text, 100))
	}
	return tw.Flush()
}

// adminCommand parses the flags of a command that only talks to the admin
// port (-c, -admin, -token, and those define adds; no arguments) and
// returns its client.
func adminCommand(name, about string, args []string, stderr io.Writer, define func(*flag.FlagSet)) (*adminClient, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	client := adminFlags(fs)
	define(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: pgaccel %s [flags]\n\n%s\n", name, about)
		fs.PrintDefaults()
	}
	extra, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, err
	}
	if len(extra) != 0 {
		return nil, fmt.Errorf("%s takes no arguments, got %q", name, strings.Join(extra, " "))
	}
	return client()
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

func indent(s, by string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = by + lines[i]
	}
	return strings.Join(lines, "\n")
}
