package refresh

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/pgaccel/pgaccel/catalog"
)

// This file connects to the source of a dataset that serves its stored
// acceleration at start, in the background, as the spec's "Serving an
// Existing Acceleration While the Source Is Unavailable" asks: status Error
// after a failed attempt and Ready once reconnected, attempts again after
// the backoff (about 1 s growing to at most 5 min), a warning on the first
// failure and then at most every five minutes, and an error at once for a
// failure of the configuration (rejected credentials, TLS), which is not
// retried.

// warnLimit is when a dataset's failures to reach its source were last
// logged as a warning: at most every warnEvery, debug in between.
type warnLimit struct{ last time.Time }

// event is a warning when one is due at now, else debug.
func (w *warnLimit) event(log *zerolog.Logger, now time.Time) *zerolog.Event {
	if w.last.IsZero() || now.Sub(w.last) >= warnEvery {
		w.last = now
		return log.Warn()
	}
	return log.Debug()
}

// reset lets the next failure warn at once (the source answered).
func (w *warnLimit) reset() { w.last = time.Time{} }

// reachSource connects to t's source until it answers, while t serves the
// acceleration it found stored and its first refresh is not due before
// until (zero: none is scheduled). It returns when the source answered,
// when a configuration error was logged (not retried: the scheduled or an
// on-demand refresh tries again), when until comes (the refresh takes
// over, with its own retries), or on an on-demand request (kicked). ok is
// false when ctx is done.
func (r *Runner) reachSource(ctx context.Context, t *task, log zerolog.Logger, until time.Time, warn *warnLimit) (ok, kicked bool) {
	ds := t.dataset()
	for attempt := 1; ; attempt++ {
		err := r.ping(ctx, ds)
		if ctx.Err() != nil {
			return false, false
		}
		if err == nil {
			t.markReached()
			r.reg.Update(ds.Name, func(st *catalog.DatasetState) {
				st.SchemaResolved = true
				if st.Loaded && (st.Status == catalog.StatusError || st.Status == catalog.StatusInitializing) {
					st.Status, st.Error = catalog.StatusReady, ""
				}
			})
			if attempt > 1 {
				log.Info().Int("attempts", attempt).
					Msgf("Reconnected to the source for dataset %s; refreshes resume on its schedule.", ds.Name)
			} else {
				log.Debug().Msg("connected to the source")
			}
			warn.reset()
			return true, false
		}
		now := r.clock.Now()
		reason, transient := classify(err)
		msg := r.sc.text(err)
		r.reg.Update(ds.Name, func(st *catalog.DatasetState) {
			st.Status, st.Error = catalog.StatusError, msg
		})
		if !transient {
			ev := log.Error().Str("reason", reason).Str("error", msg)
			if reason == reasonAuth || reason == reasonTLS {
				ev.Msgf("Dataset '%s' cannot connect to its source because of its configuration, so it is served from its existing acceleration and will not refresh until the configuration is fixed. %s", ds.Name, msg)
			} else {
				ev.Msgf("Dataset '%s' cannot read its source with its configuration, so it is served from its existing acceleration; not retried until the next scheduled or on-demand refresh. %s", ds.Name, msg)
			}
			return true, false
		}
		wait := r.backoff.delay(attempt, r.rnd)
		warn.event(&log, now).Str("reason", reason).Str("error", msg).Int("attempt", attempt).Dur("retry_in", wait).
			Msgf("Failed to connect to the source for dataset %s. Serving data from the existing acceleration for %s while retrying the connection. %s", ds.Name, ds.Name, msg)
		at := now.Add(wait)
		if !until.IsZero() && until.Before(at) {
			at = until
		}
		ok, kicked := r.sleep(ctx, t, at)
		if !ok || kicked {
			return ok, kicked
		}
		if !until.IsZero() && !r.clock.Now().Before(until) {
			return true, false
		}
	}
}

// pingTimeout bounds one attempt to reach the source (an origin that
// accepts connections and never answers).
const pingTimeout = 30 * time.Second

// ping connects to the origin and reads the columns of ds's table: the
// source is reached and the table's schema resolved.
func (r *Runner) ping(ctx context.Context, ds *catalog.Dataset) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	conn, err := connectOrigin(ctx, r.cfg.Origin.DSN)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = originColumns(ctx, conn, ds.Schema, ds.Table)
	return err
}
