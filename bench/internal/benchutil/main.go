package benchutil

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// Progress returns the benchmark's progress printer: every line goes to
// w, after the time of day and two spaces.
func Progress(w io.Writer) func(format string, a ...any) {
	return func(format string, a ...any) {
		fmt.Fprintf(w, "%s  "+format+"\n", append([]any{time.Now().Format("15:04:05")}, a...)...)
	}
}

// LocaleDatabase creates database name on origin, owned by the harness's
// application role, with the libc LOCALE locale (e.g. en_US.UTF-8), or,
// for "icu:" and an ICU locale (icu:en-US), that ICU locale as its default
// collation (LC_COLLATE and LC_CTYPE en_US.UTF-8): the benchmarks' way to
// measure in a linguistic database rather than the harness's C one.
func LocaleDatabase(ctx context.Context, origin *pgtest.Server, name, locale string) error {
	quote := func(s string) string { return strings.ReplaceAll(s, "'", "''") }
	opts := fmt.Sprintf("LOCALE '%s'", quote(locale))
	if icu, ok := strings.CutPrefix(locale, "icu:"); ok {
		opts = fmt.Sprintf("LOCALE_PROVIDER icu ICU_LOCALE '%s' LOCALE 'en_US.UTF-8'", quote(icu))
	}
	sql := fmt.Sprintf(`CREATE DATABASE %q OWNER %q TEMPLATE template0 %s`, name, pgtest.AppUser, opts)
	if err := origin.Exec(ctx, sql); err != nil {
		return fmt.Errorf("a database in locale %s: %w", locale, err)
	}
	return nil
}

// StartOrigin starts a throwaway origin PostgreSQL (internal/pgtest),
// giving it three minutes. The caller stops it.
func StartOrigin(ctx context.Context) (*pgtest.Server, error) {
	startCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	origin, err := pgtest.Start(startCtx)
	if err != nil {
		return nil, fmt.Errorf("start origin: %w", err)
	}
	return origin, nil
}

// Exit is the exit status of the benchmark name whose run ended with
// err: 0 when it is nil; 130 when ctx was cancelled (SIGINT, SIGTERM),
// saying so on stderr; else 1, with err on stderr.
func Exit(ctx context.Context, name string, err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return 0
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "%s: interrupted; everything started was stopped\n", name)
		return 130
	default:
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
}

// CommandLine is how the benchmark in pkg (./bench/cdc) was run with
// args, for the report: `go run pkg args`, or the binary's path and args
// when it was built beforehand.
func CommandLine(pkg string, args []string) string {
	prog := "go run " + pkg
	if exe := os.Args[0]; !strings.Contains(exe, "go-build") {
		prog = exe
	}
	return strings.TrimSpace(prog + " " + strings.Join(args, " "))
}
