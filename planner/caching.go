package planner

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/pgaccel/pgaccel/catalog"
)

// ReasonCachingVolatile: a read of a refresh_mode: caching dataset that
// calls a function the origin declares VOLATILE (or whose volatility could
// not be read): its answer is not kept.
const ReasonCachingVolatile = "caching_volatile"

// VolatilityChecker says whether any function of the given names may be
// volatile at the origin. A Resolver that implements it (OriginResolver)
// lets the planner keep the origin's answers of reads calling functions
// it does not know (refresh_mode: caching); without it, such reads are
// not kept.
type VolatilityChecker interface {
	AnyVolatile(ctx context.Context, names []string) (bool, error)
}

// readThrough reports whether the origin's answer to the read a may be
// kept by the results cache (refresh_mode: caching): a plain SELECT that
// writes nothing, locks nothing and calls no function the planner knows
// to depend on the session, the transaction or the clock; what keeps it
// from the acceleration may only be DuckDB's (syntax or exactness it
// lacks), since the origin answers it. Sampling never is.
func readThrough(a *analysis) bool {
	if a.kind != KindSelect || a.writes || a.nondeterministic || len(a.rels) == 0 {
		return false
	}
	return a.reason == "" || a.reason == ReasonUnsupported
}

// cachingDecision decides a read of refresh_mode: caching datasets: when
// every table it reads is a dataset that may serve, one of them caching,
// the origin answers it through the results cache (Decision.Caching). ok
// is false when the read is none of that: the usual planning goes on.
func (p *Planner) cachingDecision(ctx context.Context, a *analysis, s *Session, d Decision) (Decision, bool) {
	r, reason := p.resolve(ctx, a, s)
	if reason != "" || !slices.ContainsFunc(r.datasets, func(u usedDataset) bool {
		return u.ds.Acceleration.RefreshMode == catalog.RefreshCaching
	}) {
		return d, false
	}
	d.Tables, d.Datasets = r.tables, r.datasetNames()
	if s.TxWrote {
		d.Reason, d.Detail = ReasonTxWrote, "the transaction has written, run DDL or locked"
		return d, true
	}
	if d, refused := p.refusedSelect(ctx, s, r.tables, d); refused {
		return d, true
	}
	if len(a.clocks) > 0 {
		// The acceleration answers now() as of each statement; a kept
		// answer would be of the time it was kept.
		d.Reason, d.Detail = ReasonCachingVolatile, "the read uses now(), CURRENT_DATE or their kin: a kept answer would be of another time"
		return d, true
	}
	if len(a.funcs) > 0 {
		vc, ok := p.res.(VolatilityChecker)
		if !ok {
			d.Reason, d.Detail = ReasonCachingVolatile, "the volatility of "+strings.Join(a.funcs, ", ")+" cannot be read"
			return d, true
		}
		volatile, err := vc.AnyVolatile(ctx, a.funcs)
		switch {
		case err != nil:
			d.Reason, d.Detail = ReasonCachingVolatile, "reading the volatility of "+strings.Join(a.funcs, ", ")+" failed: "+err.Error()
			return d, true
		case volatile:
			d.Reason, d.Detail = ReasonCachingVolatile, "a function named "+strings.Join(a.funcs, ", ")+" is VOLATILE at the origin"
			return d, true
		}
	}
	d.Route, d.Reason, d.Detail, d.Caching = RouteAccelerate, "", "", true
	d.Detail = mixedCachingDetail(r)
	return d, true
}

// mixedCachingDetail says, for a read that joins a caching dataset with
// datasets the acceleration holds, that the origin answers all of it (no
// part of it is read from the acceleration); "" otherwise.
func mixedCachingDetail(r resolution) string {
	var caching, held []string
	for _, u := range r.datasets {
		if u.ds.Acceleration.RefreshMode == catalog.RefreshCaching {
			caching = append(caching, u.ds.Name)
		} else {
			held = append(held, u.ds.Name)
		}
	}
	if len(held) == 0 {
		return ""
	}
	return "the read joins caching dataset " + strings.Join(caching, ", ") + " with accelerated " + strings.Join(held, ", ") +
		": the origin answers the whole read (through the cache), none of it is read from the acceleration"
}

// volatileSQL says whether a function of one of the names $1 is VOLATILE
// (in any schema: the statement's search path is not resolved for
// functions, so a namesake anywhere counts).
const volatileSQL = `SELECT coalesce(bool_or(provolatile = 'v'), false) FROM pg_catalog.pg_proc WHERE proname = ANY($1::text[])`

// AnyVolatile reports whether a function of one of names is VOLATILE at
// the origin; answers are cached as relation lookups are, apart from them.
func (o *OriginResolver) AnyVolatile(ctx context.Context, names []string) (bool, error) {
	sorted := slices.Sorted(slices.Values(names))
	key := strings.Join(sorted, "\x00")
	return o.volatile.get(ctx, key, func(ctx context.Context) (bool, error) {
		var v bool
		if err := o.pool.QueryRow(ctx, volatileSQL, sorted).Scan(&v); err != nil {
			return false, fmt.Errorf("read the volatility of %s: %w", strings.Join(sorted, ", "), err)
		}
		return v, nil
	})
}
