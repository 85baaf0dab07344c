package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/catalog"
	"github.com/rs/zerolog"
)

// childFlag, as the first argument, makes this binary pgaccel itself
// (targets.go): `passthrough -serve-pgaccel [-cpuprofile F] [-memprofile
// F] CONFIG` starts pgaccel as `pgaccel run -c CONFIG` does (app.Start),
// waits for its datasets, prints childReady and its address, and serves
// until SIGTERM or SIGINT.
const (
	childFlag  = "-serve-pgaccel"
	childReady = "pgaccel serving at "
)

func serveChild(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(childFlag, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of pgaccel to `file`")
	memprofile := fs.String("memprofile", "", "write pgaccel's allocation profile to `file` when it stops")
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 {
		fmt.Fprintf(stderr, "usage: passthrough %s [-cpuprofile F] [-memprofile F] CONFIG\n", childFlag)
		return 2
	}
	if err := servePgaccel(fs.Arg(0), *cpuprofile, *memprofile, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "pgaccel: %v\n", err)
		return 1
	}
	return 0
}

func servePgaccel(cfgPath, cpuprofile, memprofile string, stdout, stderr io.Writer) (err error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := catalog.Load(cfgPath)
	if err != nil {
		return err
	}
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return fmt.Errorf("create CPU profile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("start CPU profile: %w", err)
		}
		defer func() {
			pprof.StopCPUProfile()
			if cerr := f.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("write CPU profile: %w", cerr)
			}
		}()
	}
	log := zerolog.New(zerolog.ConsoleWriter{Out: stderr}).With().Timestamp().Str("component", "pgaccel").Logger().Level(zerolog.WarnLevel)
	a, err := app.Start(cfg, log)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if serr := a.Shutdown(sctx); serr != nil && err == nil {
			err = serr
		}
		if memprofile != "" && err == nil {
			err = writeHeapProfile(memprofile)
		}
	}()
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := a.WaitReady(wctx); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s%s\n", childReady, a.Addr())
	<-ctx.Done()
	return nil
}
