package refresh

import (
	"context"
	"strings"
	"time"

	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/catalog"
)

func (r *Runner) acquire(ctx context.Context) error {
	select {
	case r.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *Runner) release() { <-r.sem }

// run is a dataset's goroutine: its refresh mode's (modeOf, modes.go).
func (r *Runner) run(ctx context.Context, t *task) {
	if m := t.dataset().Acceleration.RefreshMode; !ModeImplemented(m) {
		r.log.Warn().Str("dataset", t.dataset().Name).Str("refresh_mode", m).Msg("refresh mode not implemented yet; refreshing in full")
	}
	modeOf(t.dataset()).live(ctx, r, t)
}

// attachFirst attaches t's acceleration at the start of its goroutine and
// returns what was stored; ok is false when it cannot be attached (logged).
func (r *Runner) attachFirst(ctx context.Context, t *task) (info *accelerator.TableInfo, ok bool) {
	info, err := r.attach(ctx, t)
	t.attachFinished()
	if err != nil {
		r.log.Error().Str("dataset", t.dataset().Name).Str("error", r.sc.text(err)).Msg("cannot attach the acceleration")
		return nil, false
	}
	return info, true
}

// runScheduled is the goroutine of a scheduled mode (full, append,
// snapshot) once attachFirst attached the acceleration (a file-mode
// dataset with stored data serves it at once; info is what was stored). It loops: wait until the
// next refresh is due or requested, run it, and schedule the next one.
//
// The first refresh: at once with atStart (a snapshot dataset looks for a
// newer snapshot at startup); with stored data and refresh_on_startup: auto, the
// schedule continues from the stored last refresh (at once when that is
// overdue, never without a schedule), unless refresh_sql changed since, or
// the mode is append (an append dataset is not ready before its first
// append after start). Otherwise at once, after the initial jitter.
//
// After a failure: transient errors are retried after a Fibonacci backoff
// (1, 2, 3, 5, 8 ... s, at most 5 min, randomized) while
// refresh_retry_enabled and up to refresh_retry_max_attempts retries;
// configuration errors, and transient ones past the limit, wait for the
// next scheduled refresh. next_refresh keeps the due time of a refresh that
// has not succeeded yet.
func (r *Runner) runScheduled(ctx context.Context, t *task, info *accelerator.TableInfo, atStart bool) {
	ds := t.dataset()
	log := r.log.With().Str("dataset", ds.Name).Logger()
	now := r.clock.Now()
	var next plan
	reach := false // connect to the source in the background first
	switch {
	case atStart:
		next = plan{due: now, start: now}
	case info != nil && ds.Acceleration.RefreshOnStartup != catalog.RefreshOnStartupAlways &&
		info.RefreshSQL == ds.Acceleration.RefreshSQL && !modeOf(ds).waitsForSource():
		next = r.scheduled(t, info.LastRefresh) // none without a schedule: serve what is stored
		reach = next.start.IsZero() || next.start.After(now)
	case info != nil && info.RefreshSQL != ds.Acceleration.RefreshSQL && ds.Acceleration.RefreshOnStartup != catalog.RefreshOnStartupAlways:
		log.Info().Msg("refresh_sql changed since the stored refresh; refreshing now")
		next = plan{due: now, start: now}
	default:
		next = plan{due: now, start: now.Add(t.sched.initialDelay())}
	}
	if !t.sched.scheduled() {
		next.due = time.Time{} // next_refresh only for scheduled refreshes
	}
	log.Debug().Str("schedule", describeSchedule(&ds.Acceleration)).Time("first", next.start).Msg("refresh scheduled")

	retries := 0
	var warn warnLimit
	if reach {
		// The stored acceleration serves; the source is connected to in
		// the background until it answers or the first refresh is due.
		r.setNext(ds.Name, next.due)
		ok, kicked := r.reachSource(ctx, t, log, next.start, &warn)
		if !ok {
			return
		}
		if kicked {
			next.start, next.announce = r.clock.Now(), false
		}
	}
	for {
		if !r.wait(ctx, t, next) {
			return
		}
		err := r.runOnce(ctx, t)
		if ctx.Err() != nil {
			return
		}
		now := r.clock.Now()
		if err == nil {
			if retries > 0 {
				log.Info().Int("retries", retries).Msg("refresh recovered")
			}
			retries = 0
			warn.reset()
			next = r.scheduled(t, now)
			continue
		}
		reason, transient := classify(err)
		acc := ds.Acceleration
		msg := r.sc.text(err)
		st, _ := r.reg.State(ds.Name)
		// Until the source has answered once in this process, a source
		// that cannot be reached is retried without limit (the dataset is
		// registered, or resumes refreshing, once it answers).
		connecting := !t.connected() && sourceUnreachable(reason)
		switch {
		case !transient:
			ev := log.Error().Str("reason", reason).Str("error", msg)
			if st.Loaded && (reason == reasonAuth || reason == reasonTLS) {
				ev.Msgf("Dataset '%s' cannot connect to its source because of its configuration, so it is served from its existing acceleration and will not refresh until the configuration is fixed. %s", ds.Name, msg)
			} else {
				ev.Msg("refresh failed with an error that retrying cannot fix; not retried until the next scheduled or on-demand refresh")
			}
		case connecting || acc.RefreshRetryEnabled && (acc.RefreshRetryMaxAttempts == 0 || retries < acc.RefreshRetryMaxAttempts):
			retries++
			wait := r.backoff.delay(retries, r.rnd)
			ev := warn.event(&log, now).Str("reason", reason).Str("error", msg).Int("retry", retries).Dur("retry_in", wait)
			switch {
			case sourceUnreachable(reason) && st.Loaded:
				// At start, or in a later outage: the spec's words.
				ev.Msgf("Failed to connect to the source for dataset %s. Serving data from the existing acceleration for %s while retrying the connection. %s", ds.Name, ds.Name, msg)
			case connecting:
				ev.Msgf("Failed to connect to the source for dataset %s. It has no acceleration to serve yet: queries on it go to the origin until the source answers; retrying the connection. %s", ds.Name, msg)
			default:
				ev.Msg("refresh failed; the previous acceleration, if any, keeps serving; retrying")
			}
			// next_refresh keeps the due time that has not succeeded.
			next = plan{due: next.due, start: now.Add(wait)}
			continue
		default:
			log.Warn().Str("reason", reason).Str("error", msg).Int("retries", retries).
				Msg("refresh failed and retries are exhausted or disabled; waiting for the next scheduled or on-demand refresh")
		}
		retries = 0
		after := r.scheduled(t, now)
		if !next.due.IsZero() && !after.due.IsZero() {
			after.due, after.announce = next.due, false // kept until a refresh succeeds
		}
		next = after
	}
}

// plan is when the next refresh runs.
type plan struct {
	due   time.Time // reported as next_refresh; zero when none is scheduled
	start time.Time // when it starts; zero: only on demand
	// announce: report start once due passes (a cron time followed by
	// jitter).
	announce bool
}

// scheduled plans the refresh the schedule has after from.
func (r *Runner) scheduled(t *task, from time.Time) plan {
	due, start := t.sched.next(from)
	return plan{due: due, start: start, announce: start.After(due)}
}

// wait publishes next_refresh and waits until p.start (forever when zero)
// or an on-demand request; it reports false when ctx is done.
func (r *Runner) wait(ctx context.Context, t *task, p plan) bool {
	r.setNext(t.dataset().Name, p.due)
	if p.announce {
		ok, kicked := r.sleep(ctx, t, p.due)
		if !ok || kicked {
			return ok
		}
		r.setNext(t.dataset().Name, p.start)
	}
	ok, _ := r.sleep(ctx, t, p.start)
	return ok
}

// sleep waits until at (forever when zero), an on-demand request, or ctx;
// ok is false when ctx is done.
func (r *Runner) sleep(ctx context.Context, t *task, at time.Time) (ok, kicked bool) {
	var timeout <-chan time.Time
	if !at.IsZero() {
		d := at.Sub(r.clock.Now())
		if d <= 0 {
			return ctx.Err() == nil, false
		}
		timer := r.clock.NewTimer(d)
		defer timer.Stop()
		timeout = timer.C()
	}
	select {
	case <-ctx.Done():
		return false, false
	case <-t.kick:
		return true, true
	case <-timeout:
		return true, false
	}
}

// runOnce runs one refresh of t in a concurrency slot. An on-demand
// request that arrives while it runs cancels it and starts a new one; the
// callers waiting get the outcome of the refresh that completes.
func (r *Runner) runOnce(ctx context.Context, t *task) error {
	for {
		if err := r.acquire(ctx); err != nil {
			return err
		}
		select { // requests so far are served by this refresh
		case <-t.kick:
		default:
		}
		waiters := t.takeWaiters()
		runCtx, cancel := context.WithCancelCause(ctx)
		done := make(chan error, 1)
		go func() { done <- r.refresh(runCtx, t) }()
		var err error
		superseded := false
		select {
		case err = <-done:
		case <-t.kick:
			cancel(errSuperseded)
			err = <-done
			superseded = true
		}
		cancel(nil)
		r.release()
		if superseded && ctx.Err() == nil {
			r.log.Info().Str("dataset", t.dataset().Name).Msg("refresh in progress cancelled: an on-demand refresh replaces it")
			t.requeue(waiters)
			continue
		}
		for _, w := range waiters {
			w <- err
		}
		return err
	}
}

// describeSchedule says when a dataset refreshes, for logs.
func describeSchedule(a *catalog.Acceleration) string {
	var parts []string
	if a.RefreshCheckInterval > 0 {
		parts = append(parts, "every "+a.RefreshCheckInterval.String())
	}
	if a.RefreshCron != "" {
		parts = append(parts, "at cron '"+a.RefreshCron+"'")
	}
	if len(parts) == 0 {
		return "once, then on demand"
	}
	return strings.Join(parts, " ")
}
