package refresh

import (
	"context"

	"github.com/pgaccel/pgaccel/catalog"
)

// runCaching runs a refresh_mode: caching dataset. Nothing is loaded: the
// proxy answers reads of it from the origin and keeps the answers in the
// results cache for refresh_check_interval, so the dataset is ready at
// registration. An on-demand refresh drops every answer kept for it (a
// new data generation) and succeeds at once; no schedule runs.
func (r *Runner) runCaching(ctx context.Context, t *task) {
	ds := t.dataset()
	log := r.log.With().Str("dataset", ds.Name).Logger()
	if ds.Acceleration.OnZeroResults == catalog.ZeroResultsUseSource {
		log.Warn().Msg("on_zero_results is ignored with refresh_mode: caching: a miss always asks the source; remove on_zero_results from this dataset to silence this warning")
	}
	r.reg.Update(ds.Name, func(st *catalog.DatasetState) {
		st.Status = catalog.StatusReady
		st.Loaded = true
		st.Error = ""
		st.LastRefresh = r.clock.Now()
		st.Generation++
		st.DataGeneration++
	})
	t.setErr(nil)
	t.markReady()
	log.Info().Dur("ttl", ds.Acceleration.RefreshCheckInterval).Msg("caching dataset ready: reads are answered by the origin and kept for refresh_check_interval")
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.kick:
		}
		waiters := t.takeWaiters()
		r.dropCached(t)
		for _, w := range waiters {
			w <- nil
		}
	}
}

// dropCached is an on-demand refresh of a caching dataset: the answers
// kept for it are dropped (a new data generation).
func (r *Runner) dropCached(t *task) {
	ds := t.dataset()
	r.reg.Update(ds.Name, func(st *catalog.DatasetState) {
		st.LastRefresh = r.clock.Now()
		st.DataGeneration++
	})
	r.log.Info().Str("dataset", ds.Name).Msg("on-demand refresh: the answers kept for this caching dataset are dropped")
}
