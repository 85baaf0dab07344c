package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `pgaccel - a PostgreSQL proxy that answers reads from DuckDB accelerations

Usage:
  pgaccel run -c pgaccel.yaml        serve clients until SIGINT or SIGTERM
  pgaccel validate -c pgaccel.yaml   check a config and print every problem (-origin: check the datasets at the origin too)
  pgaccel status [-c pgaccel.yaml]   print the datasets of a running pgaccel (through its admin port)
  pgaccel refresh DATASET...         start a refresh of each DATASET in a running pgaccel
  pgaccel statements [-n 20]         print the statement statistics of a running pgaccel (calls, time, route, why the origin's went there)
  pgaccel advise                     list the tables to accelerate next, from a running pgaccel's statistics, with config snippets
  pgaccel explain "SQL"              say whether a running pgaccel would accelerate SQL now, and if not why (a dry run)
  pgaccel slots [drop NAME]          list (or drop) the origin's replication slots named like pgaccel's
  pgaccel setup-sql -c pgaccel.yaml  print the SQL a superuser runs once at the origin for auth.mode: proxy
  pgaccel demo                       start a throwaway origin with sample data and pgaccel in front of it
  pgaccel version                    print the version

Run 'pgaccel COMMAND -h' for a command's flags.
`

func main() {
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr))
}

func runMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	var err error
	switch args[0] {
	case "run":
		err = cmdRun(ctx, args[1:], stderr)
	case "validate":
		err = cmdValidate(ctx, args[1:], stdout, stderr)
	case "status":
		err = cmdStatus(args[1:], stdout, stderr)
	case "refresh":
		err = cmdRefresh(args[1:], stdout, stderr)
	case "statements":
		err = cmdStatements(args[1:], stdout, stderr)
	case "advise":
		err = cmdAdvise(args[1:], stdout, stderr)
	case "explain":
		err = cmdExplain(ctx, args[1:], stdout, stderr)
	case "slots":
		err = cmdSlots(args[1:], os.Stdin, stdout, stderr)
	case "setup-sql":
		err = cmdSetupSQL(args[1:], stdout, stderr)
	case "demo":
		err = cmdDemo(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "pgaccel", buildVersion())
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "pgaccel: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		return int(ee)
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "pgaccel:", err)
	return 1
}

// exitError ends the command with a status code and no further message;
// the command has already printed what went wrong.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func buildVersion() string {
	if version != "dev" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return version
}
