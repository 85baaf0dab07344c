package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/pgaccel/pgaccel/admin"
	"github.com/pgaccel/pgaccel/catalog"
)

// reloadState is what a reload needs of the running process: the config
// file and the configuration running now.
type reloadState struct {
	mu   sync.Mutex
	path string
	cur  *catalog.Config
	// accelerated: the proxy started with an accelerated dataset (without
	// one, sessions are relayed without the routing hook, and a dataset
	// added later would serve none of them).
	accelerated bool
}

// ErrReloadRefused is a reload that changed nothing because the new
// configuration changes what only a restart applies.
var ErrReloadRefused = errors.New("reload refused")

// Reload reads the config file again and applies its datasets: those
// added start loading (and serve once ready), those removed stop being
// read and refreshed at once (their DuckDB database is detached), those
// changed are refreshed again with the new configuration while the data
// loaded serves (a change of table, mode, refresh_mode or enabled reloads
// them from nothing). Sessions stay. A file that is invalid, or that
// changes a setting outside datasets (or a refresh_mode: caching dataset),
// changes nothing: the error says what, and ErrReloadRefused is wrapped
// for the latter.
func (a *App) Reload(ctx context.Context) (admin.ReloadResult, error) {
	rs := &a.reload
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.path == "" || rs.path == "-" {
		return admin.ReloadResult{}, fmt.Errorf("%w: pgaccel was not started from a config file it can read again", ErrReloadRefused)
	}
	n, err := catalog.Load(rs.path)
	if err != nil {
		return admin.ReloadResult{}, fmt.Errorf("the config file is not valid; nothing was reloaded:\n%w", err)
	}
	d := rs.cur.Diff(n)
	if len(d.Restart) > 0 {
		return admin.ReloadResult{}, fmt.Errorf("%w: %s changed, which only a restart applies; nothing was reloaded (restart pgaccel, or undo the change and reload)",
			ErrReloadRefused, strings.Join(d.Restart, ", "))
	}
	var refuse []string
	check := func(ds *catalog.Dataset, what string) {
		if ds.Acceleration.Enabled && ds.Acceleration.RefreshMode == catalog.RefreshCaching {
			refuse = append(refuse, fmt.Sprintf("dataset %s (refresh_mode: caching) %s: the results cache's policies are set at start", ds.Name, what))
		}
		if ds.Acceleration.Enabled && !rs.accelerated && what != "removed" {
			refuse = append(refuse, fmt.Sprintf("dataset %s %s: pgaccel started without an accelerated dataset, so its sessions are relayed without routing (runtime.statement_stats.without_datasets: true routes them)", ds.Name, what))
		}
	}
	for _, ds := range d.Added {
		check(ds, "added")
	}
	for _, ds := range d.Removed {
		check(ds, "removed")
	}
	for _, c := range d.Changed {
		check(c[0], "changed")
		check(c[1], "changed")
	}
	if len(refuse) > 0 {
		return admin.ReloadResult{}, fmt.Errorf("%w: %s; nothing was reloaded (restart pgaccel to apply it)", ErrReloadRefused, strings.Join(refuse, "; "))
	}
	var res admin.ReloadResult
	var errs []error
	for _, ds := range d.Removed {
		if err := a.removeDataset(ctx, ds); err != nil {
			errs = append(errs, err)
		}
		res.Removed = append(res.Removed, ds.Name)
	}
	for _, c := range d.Changed {
		o, nw := c[0], c[1]
		if rebuilt(o, nw) {
			if err := a.removeDataset(ctx, o); err != nil {
				errs = append(errs, err)
			}
			if err := a.addDataset(nw); err != nil {
				errs = append(errs, err)
			}
		} else if err := a.replaceDataset(ctx, nw); err != nil {
			errs = append(errs, err)
		}
		res.Changed = append(res.Changed, nw.Name)
	}
	for _, ds := range d.Added {
		if err := a.addDataset(ds); err != nil {
			errs = append(errs, err)
		}
		res.Added = append(res.Added, ds.Name)
	}
	rs.cur = n
	res.Message = reloadMessage(res)
	a.log.Info().Strs("added", res.Added).Strs("removed", res.Removed).Strs("changed", res.Changed).Str("config", rs.path).Msg("configuration reloaded")
	return res, errors.Join(errs...)
}

func reloadMessage(r admin.ReloadResult) string {
	if len(r.Added)+len(r.Removed)+len(r.Changed) == 0 {
		return "Configuration reloaded: no dataset changed."
	}
	var parts []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"added", r.Added}, {"removed", r.Removed}, {"changed", r.Changed}} {
		if len(p.names) > 0 {
			parts = append(parts, p.what+" "+strings.Join(p.names, ", "))
		}
	}
	return "Configuration reloaded: " + strings.Join(parts, "; ") + "."
}

// rebuilt reports whether a dataset changed from o to n is loaded again
// from nothing (its data cannot serve under the new configuration).
func rebuilt(o, n *catalog.Dataset) bool {
	oa, na := o.Acceleration, n.Acceleration
	return o.Name != n.Name || o.Schema != n.Schema || o.Table != n.Table || oa.Enabled != na.Enabled || oa.Mode != na.Mode ||
		oa.RefreshMode != na.RefreshMode || oa.Engine != na.Engine
}

func (a *App) addDataset(ds *catalog.Dataset) error {
	if !a.Registry.AddDataset(ds) {
		return fmt.Errorf("dataset %s: its name or table is registered already", ds.Name)
	}
	return a.Runner.AddDataset(ds)
}

func (a *App) removeDataset(ctx context.Context, ds *catalog.Dataset) error {
	a.Registry.RemoveDataset(ds.Name)
	err := a.Runner.RemoveDataset(ctx, ds.Name)
	a.points.Forget(ds.Name)
	if derr := a.Engine.Detach(ctx, ds.Name); derr != nil && err == nil {
		err = derr
	}
	return err
}

// replaceDataset applies n, a dataset's new configuration of the same
// table, mode and refresh mode: the data loaded keeps serving while its
// refresh task starts again with n and reloads it.
func (a *App) replaceDataset(ctx context.Context, n *catalog.Dataset) error {
	if err := a.Runner.RemoveDataset(ctx, n.Name); err != nil {
		return err
	}
	if !a.Registry.ReplaceDataset(n) {
		return fmt.Errorf("dataset %s: not registered", n.Name)
	}
	if err := a.Runner.AddDataset(n); err != nil {
		return err
	}
	if !n.Acceleration.Enabled || n.Acceleration.RefreshMode == catalog.RefreshDisabled {
		return nil
	}
	return a.Runner.TriggerFull(n.Name)
}
