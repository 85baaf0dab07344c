// Package refresh schedules and runs dataset refreshes: intervals, cron,
// jitter, on-demand requests, retries with backoff, and the refresh modes of
// the data-refresh spec (full, append, changes, caching, snapshot), plus
// retention checks.
//
// refresh may import catalog and accelerator; it must never import proxy or
// planner.
package refresh
