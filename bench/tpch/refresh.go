package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/pgaccel/pgaccel/app"
	"github.com/pgaccel/pgaccel/bench/internal/benchutil"
	"github.com/pgaccel/pgaccel/bench/internal/tpchdata"
	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// tlsDSN is origin's superuser DSN with sslmode=require: the origin link
// of the TLS refresh measurement.
func tlsDSN(origin *pgtest.Server) string {
	return strings.Replace(origin.SuperDSN(), "sslmode=disable", "sslmode=require", 1)
}

// refreshRound is one round of the refresh measurement.
type refreshRound struct {
	copy, refresh time.Duration
	rssBefore     int64 // bytes
	rssPeak       int64 // the highest 10 ms sample of VmRSS
	hwmPeak       int64 // VmHWM after resetting it; 0 if it could not be reset
}

// measureRefresh times, opts.refreshRounds times interleaved, a full
// refresh of lineitem by a and a plain binary COPY of it into io.Discard
// over a connection to copyDSN (the origin link a uses: plain or TLS), and
// samples the process's RSS during each refresh.
func measureRefresh(ctx context.Context, a *app.App, copyDSN string, opts options, progress func(string, ...any)) (rounds []refreshRound, idle int64, err error) {
	conn, err := pgconn.Connect(ctx, copyDSN)
	if err != nil {
		return nil, 0, fmt.Errorf("connect for COPY: %w", err)
	}
	defer conn.Close(context.Background())
	copyOnce := func() (time.Duration, error) {
		began := time.Now()
		if _, err := conn.CopyTo(ctx, io.Discard, "COPY lineitem TO STDOUT (FORMAT binary)"); err != nil {
			return 0, fmt.Errorf("COPY lineitem TO STDOUT: %w", err)
		}
		return time.Since(began), nil
	}
	refreshOnce := func(rr *refreshRound) error {
		settle(ctx)
		rr.rssBefore = benchutil.SelfStatus("VmRSS")
		hwmReset := resetHWM() == nil
		stop := make(chan struct{})
		peak := make(chan int64)
		go sampleRSS(stop, peak)
		began := time.Now()
		err := a.Runner.Refresh(ctx, "lineitem")
		rr.refresh = time.Since(began)
		close(stop)
		rr.rssPeak = <-peak
		if hwmReset {
			rr.hwmPeak = benchutil.SelfStatus("VmHWM")
		}
		if err != nil {
			return fmt.Errorf("refresh lineitem: %w", err)
		}
		return nil
	}
	settle(ctx)
	idle = benchutil.SelfStatus("VmRSS")
	for i := range opts.refreshRounds {
		var rr refreshRound
		if i%2 == 0 {
			if rr.copy, err = copyOnce(); err == nil {
				err = refreshOnce(&rr)
			}
		} else {
			if err = refreshOnce(&rr); err == nil {
				rr.copy, err = copyOnce()
			}
		}
		if err != nil {
			return rounds, idle, err
		}
		progress("refresh round %d: COPY %v, refresh %v, RSS %d → %d MiB",
			i+1, rr.copy.Round(time.Millisecond), rr.refresh.Round(time.Millisecond), rr.rssBefore>>20, max(rr.rssPeak, rr.hwmPeak)>>20)
		rounds = append(rounds, rr)
	}
	return rounds, idle, nil
}

// measureTLSRefresh is measureRefresh over a TLS origin link: a second
// pgaccel, holding only lineitem, whose origin.dsn has sslmode=require,
// against a plain COPY over TLS. It is shut down before it returns.
func measureTLSRefresh(ctx context.Context, origin *pgtest.Server, dataDir string, logs *logCapture, opts options, progress func(string, ...any)) (rounds []refreshRound, idle int64, err error) {
	dir, err := os.MkdirTemp(dataDir, "tls-")
	if err != nil {
		return nil, 0, err
	}
	var lineitem []tpchdata.Table
	for _, t := range tpchdata.Tables {
		if t.Name == "lineitem" {
			lineitem = append(lineitem, t)
		}
	}
	a, _, err := startPgaccel(ctx, tlsDSN(origin), lineitem, dir, logs, "", false)
	if a != nil {
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if serr := a.Shutdown(sctx); serr != nil && err == nil {
				err = fmt.Errorf("shut the TLS pgaccel down: %w", serr)
			}
		}()
	}
	if err != nil {
		return nil, 0, err
	}
	return measureRefresh(ctx, a, tlsDSN(origin), opts, progress)
}

// settleTime is how long the process rests before its RSS is read as the
// baseline of a refresh, so that memory freed by what ran before (the
// previous refresh, the COPY) can go back to the OS first.
const settleTime = 2 * time.Second

// settle returns the Go heap's free memory to the OS and waits settleTime.
func settle(ctx context.Context) {
	debug.FreeOSMemory()
	select {
	case <-ctx.Done():
	case <-time.After(settleTime):
	}
}

// sampleRSS reads VmRSS every 10 ms until stop is closed, then sends the
// highest value on peak.
func sampleRSS(stop <-chan struct{}, peak chan<- int64) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	hi := benchutil.SelfStatus("VmRSS")
	for {
		select {
		case <-stop:
			peak <- max(hi, benchutil.SelfStatus("VmRSS"))
			return
		case <-t.C:
			hi = max(hi, benchutil.SelfStatus("VmRSS"))
		}
	}
}

// resetHWM resets VmHWM to the current RSS (proc(5), clear_refs value 5).
func resetHWM() error {
	err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	if err != nil {
		return errors.New("cannot write /proc/self/clear_refs")
	}
	return nil
}
