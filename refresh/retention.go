package refresh

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/pgaccel/pgaccel/accelerator"
	"github.com/pgaccel/pgaccel/catalog"
)

// retention is a dataset's retention policy: rows older than period by
// time_column, and rows matching retention_sql's predicate. Either may be
// unset; not both.
type retention struct {
	timeColumn string
	format     timeFormat
	period     time.Duration
	predicate  string // retention_sql's WHERE, "" when unset
}

// retentionRefusal is one of the spec's three refusals to schedule
// retention passes: the setting that is missing and why.
type retentionRefusal struct{ setting, why string }

func (r retentionRefusal) Error() string { return r.setting + " " + r.why }

// retentionRefusals checks the retention settings of a dataset with
// retention_check_enabled: true, as the spec lists them; nil when a pass
// can be scheduled.
func retentionRefusals(ds *catalog.Dataset) []retentionRefusal {
	a := &ds.Acceleration
	var out []retentionRefusal
	if a.RetentionPeriod <= 0 && ds.RetentionPredicate() == "" {
		out = append(out, retentionRefusal{"retention_period or retention_sql",
			"is not set to a valid value, so nothing says which rows to delete"})
	}
	if a.RetentionPeriod > 0 && ds.TimeColumn == "" {
		out = append(out, retentionRefusal{"time_column", "is not set, so retention_period has nothing to compare against the cutoff"})
	}
	if a.RetentionCheckInterval <= 0 {
		out = append(out, retentionRefusal{"retention_check_interval", "is missing or not a valid duration (it has no default)"})
	}
	return out
}

// errNoRetention is returned by retentionPolicy for a dataset without
// retention settings.
var errNoRetention = errors.New("no retention policy")

// retentionPolicy builds the dataset's policy over the columns cols (the
// loaded ones). It is returned whether or not retention checks are
// enabled: on_zero_results needs its inverse either way.
func retentionPolicy(ds *catalog.Dataset, cols []accelerator.ColumnSpec) (*retention, error) {
	a := &ds.Acceleration
	p := &retention{predicate: ds.RetentionPredicate()}
	if a.RetentionPeriod > 0 && ds.TimeColumn != "" {
		tf, err := timeFormatOf(ds.TimeColumn, ds.TimeFormat, cols)
		if err != nil {
			return nil, err
		}
		p.timeColumn, p.format, p.period = ds.TimeColumn, tf, a.RetentionPeriod
	}
	if p.period == 0 && p.predicate == "" {
		return nil, errNoRetention
	}
	return p, nil
}

// duckPredicates are the DuckDB predicates of the rows to delete at now:
// time_column before now - retention_period (NULLs stay), and
// retention_sql's condition.
func (p *retention) duckPredicates(now time.Time) []string {
	var out []string
	if p.period > 0 {
		_, lit := p.format.literals(now.Add(-p.period))
		col := p.format.duckValue(quoteIdent(p.timeColumn))
		if p.format == catalog.TimeFormatDate {
			// A date is kept while its midnight (UTC) is at or after the
			// cutoff, as the origin compares a date with a timestamptz.
			_, lit = timeFormat(catalog.TimeFormatTimestamp).literals(now.Add(-p.period))
			col = "CAST(" + col + " AS TIMESTAMP)"
		}
		out = append(out, col+" < "+lit)
	}
	if p.predicate != "" {
		out = append(out, p.predicate)
	}
	return out
}

// describe says what the policy deletes, for logs.
func (p *retention) describe() string {
	s := ""
	if p.period > 0 {
		s = p.timeColumn + " older than " + strconv.FormatFloat(p.period.Hours(), 'f', -1, 64) + "h"
	}
	if p.predicate != "" {
		if s != "" {
			s += ", and "
		}
		s += "rows where " + p.predicate
	}
	return s
}

// retain is a dataset's retention goroutine: with retention_check_enabled,
// it evicts rows every retention_check_interval. When a setting the policy
// needs is missing it logs a [retention] error naming it and schedules no
// pass.
func (r *Runner) retain(ctx context.Context, t *task) {
	ds := t.dataset()
	if refusals := retentionRefusals(ds); len(refusals) > 0 {
		for _, f := range refusals {
			r.log.Error().Str("dataset", ds.Name).Str("missing", f.setting).
				Msgf("[retention] dataset %s: no retention pass is scheduled: %s", ds.Name, f.Error())
		}
		return
	}
	interval := ds.Acceleration.RetentionCheckInterval
	for {
		timer := r.clock.NewTimer(interval)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C():
		}
		if err := r.retainOnce(ctx, t); err != nil && ctx.Err() == nil {
			r.log.Warn().Str("dataset", ds.Name).Str("error", r.sc.text(err)).Msg("[retention] pass failed; the next one runs on schedule")
		}
	}
}

// RetainNow runs one retention pass of the dataset now (for tests and
// operators).
func (r *Runner) RetainNow(ctx context.Context, dataset string) error {
	t, err := r.task(dataset)
	if err != nil {
		return err
	}
	return r.retainOnce(ctx, t)
}

func (r *Runner) retainOnce(ctx context.Context, t *task) error {
	t.refreshMu.Lock()
	defer t.refreshMu.Unlock()
	ds := t.dataset()
	if st, _ := r.reg.State(ds.Name); !st.Loaded && t.stored == nil {
		return nil
	}
	info, err := r.eng.Stored(ctx, ds.Name)
	if err != nil || info == nil {
		return err
	}
	pol, err := retentionPolicy(ds, info.Specs)
	if err != nil {
		return err
	}
	preds := pol.duckPredicates(r.clock.Now())
	deleted, total, err := r.eng.DeleteWhere(ctx, ds.Name, preds)
	if err != nil {
		return err
	}
	r.metrics.retained(ds.Name, deleted, total)
	if deleted > 0 {
		r.reg.Update(ds.Name, func(st *catalog.DatasetState) {
			st.Rows = total
			st.Generation++
			st.DataGeneration++
		})
	}
	r.log.Info().Str("dataset", ds.Name).Int64("deleted", deleted).Int64("rows", total).
		Str("policy", pol.describe()).Msg("[retention] pass done")
	return nil
}
