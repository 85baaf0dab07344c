package catalog

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// paramDuckDBFile is the acceleration param naming a file-mode dataset's
// DuckDB file.
const paramDuckDBFile = "duckdb_file"

// Allowed values of the enumerated dataset settings.
var (
	timeFormats = []string{TimeFormatTimestamp, TimeFormatTimestamptz, TimeFormatUnixSeconds, TimeFormatUnixMillis, TimeFormatISO8601, TimeFormatDate}
	readyStates = []string{ReadyOnLoad, ReadyOnRegistration, ReadyOnSchemaResolved}
	modes       = []string{ModeMemory, ModeFile}
	refreshes   = []string{RefreshFull, RefreshAppend, RefreshChanges, RefreshCaching, RefreshSnapshot, RefreshDisabled}
	startups    = []string{RefreshOnStartupAuto, RefreshOnStartupAlways}
	zeroResults = []string{ZeroResultsReturnEmpty, ZeroResultsUseSource}
	snapshotOpt = []string{SnapshotsEnabled, SnapshotsDisabled, SnapshotsBootstrapOnly, SnapshotsCreateOnly}
)

// modeBound lists the acceleration keys that only some refresh modes use,
// per the spec's "Supported in refresh_mode" tables. set reports whether a
// hand-built Config gives the key.
var modeBound = []struct {
	key   string
	modes []string
	set   func(a *Acceleration) bool
}{
	{"refresh_check_interval", []string{RefreshFull, RefreshAppend, RefreshCaching, RefreshSnapshot}, func(a *Acceleration) bool { return a.RefreshCheckInterval != 0 }},
	{"refresh_cron", []string{RefreshFull, RefreshAppend}, func(a *Acceleration) bool { return a.RefreshCron != "" }},
	{"caching_stale_while_revalidate", []string{RefreshCaching}, func(a *Acceleration) bool { return a.CachingStaleWhileRevalidate != 0 }},
	{"caching_stale_if_error", []string{RefreshCaching}, func(a *Acceleration) bool { return a.CachingStaleIfError != 0 }},
	{"refresh_data_window", []string{RefreshFull, RefreshAppend}, func(a *Acceleration) bool { return a.RefreshDataWindow != 0 }},
	{"refresh_append_overlap", []string{RefreshAppend}, func(a *Acceleration) bool { return a.RefreshAppendOverlap != 0 }},
	{"refresh_retry_enabled", []string{RefreshFull, RefreshAppend}, func(a *Acceleration) bool { return !a.RefreshRetryEnabled }},
	{"refresh_retry_max_attempts", []string{RefreshFull, RefreshAppend}, func(a *Acceleration) bool { return a.RefreshRetryMaxAttempts != 0 }},
	{"refresh_jitter_enabled", []string{RefreshFull, RefreshAppend}, func(a *Acceleration) bool { return a.RefreshJitterEnabled }},
	{"refresh_jitter_max", []string{RefreshFull, RefreshAppend}, func(a *Acceleration) bool { return a.RefreshJitterMax != 0 }},
}

// datasetCheck validates one dataset.
type datasetCheck struct {
	v      *validator
	d      *Dataset
	label  string // the dataset's name, "" when it has none
	prefix string // "datasets[i]." for a dataset without a name
}

// add reports a problem with key (relative to the dataset) at its line.
func (c *datasetCheck) add(key, message, fix string) {
	c.v.list = append(c.v.list, Problem{
		Line:    datasetLine(c.d, key),
		Dataset: c.label,
		Key:     c.prefix + key,
		Message: message,
		Fix:     fix,
	})
}

// warn reports a warning about key (relative to the dataset) at its line:
// something pgaccel accepts and ignores (Config.Warnings).
func (c *datasetCheck) warn(key, message, fix string) {
	c.v.warnings = append(c.v.warnings, Problem{
		Line:    datasetLine(c.d, key),
		Dataset: c.label,
		Key:     c.prefix + key,
		Message: message,
		Fix:     fix,
	})
}

// addNear reports a problem with key at its line or, when the file does not
// give key, at the line of near (the setting that requires key).
func (c *datasetCheck) addNear(key, near, message, fix string) {
	if _, ok := c.d.keys[key]; !ok {
		if line := lookupLine(c.d.keys, near); line > 0 {
			c.v.list = append(c.v.list, Problem{Line: line, Dataset: c.label, Key: c.prefix + key, Message: message, Fix: fix})
			return
		}
	}
	c.add(key, message, fix)
}

// given reports whether the dataset sets key: in a parsed config, whether the
// file has the key; in a hand-built one, whether the value is not the zero
// value (set).
func (c *datasetCheck) given(key string, set bool) bool {
	if c.d.keys == nil {
		return set
	}
	_, ok := c.d.keys[key]
	return ok
}

// oneOf reports a value outside allowed.
func (c *datasetCheck) oneOf(key, value string, allowed []string) bool {
	if slices.Contains(allowed, value) {
		return true
	}
	c.add(key, fmt.Sprintf("%q is not one of %s", value, strings.Join(allowed, ", ")), choose(value, allowed...))
	return false
}

func (c *datasetCheck) check() {
	c.source()
	c.timeColumns()
	c.enums()
	c.schedule()
	c.modeRules()
	c.retention()
	c.refreshSQL()
	c.snapshots()
	c.params()
}

// source checks from and name.
func (c *datasetCheck) source() {
	d := c.d
	_, _, err := parseFrom(d.From)
	switch {
	case err == errNoFrom:
		c.add("from", "is required", "name the origin table, as in from: postgres:public.orders")
	case err != nil:
		c.add("from", err.Error(), "write it as postgres:schema.table, as in from: postgres:public.orders")
	}
	if d.Name == "" {
		if err == nil || c.given("name", false) {
			c.add("name", "must not be empty", "remove it to use the table name, or give a name such as orders")
		}
		return
	}
	if !validName(d.Name) {
		c.add("name", fmt.Sprintf("%q is not a valid SQL identifier", d.Name),
			fmt.Sprintf("use letters, digits and _ (at most %d, not starting with a digit), such as orders_2024", maxIdentLen))
	}
}

// timeColumns checks time_column, time_partition_column and their formats.
func (c *datasetCheck) timeColumns() {
	d := c.d
	for _, k := range []struct{ key, col string }{{"time_column", d.TimeColumn}, {"time_partition_column", d.TimePartitionColumn}} {
		if k.col == "last_modified" {
			c.add(k.key, "last_modified is an object-store feature (the modification time of files) that a Postgres table does not have",
				"name a timestamp column of the table that changes when a row is written, such as updated_at")
		}
	}
	if d.TimeFormat != "" {
		c.oneOf("time_format", d.TimeFormat, timeFormats)
		if d.TimeColumn == "" {
			c.add("time_format", "has no effect without time_column", "set time_column to the column it describes, or remove time_format")
		}
	}
	if d.TimePartitionFormat != "" {
		c.oneOf("time_partition_format", d.TimePartitionFormat, timeFormats)
		if d.TimePartitionColumn == "" {
			c.add("time_partition_format", "has no effect without time_partition_column", "set time_partition_column, or remove time_partition_format")
		}
	}
	if d.TimePartitionColumn != "" && d.TimeColumn == "" {
		c.add("time_partition_column", "is used in addition to time_column, which is not set", "set time_column to the row's timestamp column")
	}
}

// enums checks every enumerated setting.
func (c *datasetCheck) enums() {
	d, a := c.d, &c.d.Acceleration
	c.oneOf("ready_state", d.ReadyState, readyStates)
	if c.oneOf("acceleration.ready_state", a.ReadyState, readyStates) && a.ReadyState != d.ReadyState {
		c.add("acceleration.ready_state", fmt.Sprintf("%q conflicts with the dataset's ready_state %q", a.ReadyState, d.ReadyState),
			"set ready_state once, on the dataset, and remove acceleration.ready_state")
	}
	if a.Engine != EngineDuckDB {
		c.add("acceleration.engine", fmt.Sprintf("%q is not supported: the only engine is duckdb", a.Engine), "write engine: duckdb, or remove the key")
	}
	c.oneOf("acceleration.mode", a.Mode, modes)
	c.oneOf("acceleration.refresh_mode", a.RefreshMode, refreshes)
	c.oneOf("acceleration.refresh_on_startup", a.RefreshOnStartup, startups)
	c.oneOf("acceleration.on_zero_results", a.OnZeroResults, zeroResults)
	c.oneOf("acceleration.snapshots", a.Snapshots, snapshotOpt)
	if trig, _ := a.SnapshotTrigger(); c.oneOf("acceleration.snapshots_trigger", trig, []string{SnapshotsTriggerRefresh, SnapshotsTriggerInterval}) {
		switch {
		case trig == SnapshotsTriggerRefresh && a.RefreshMode == RefreshChanges:
			c.add("acceleration.snapshots_trigger", "refresh_complete never fires with refresh_mode: changes (its changes stream in; no refresh completes)",
				"set snapshots_trigger: time_interval (the default for changes)")
		case trig == SnapshotsTriggerRefresh && a.SnapshotsTriggerThreshold != 0:
			c.add("acceleration.snapshots_trigger_threshold", "has no effect with snapshots_trigger: refresh_complete",
				"set snapshots_trigger: time_interval, or remove snapshots_trigger_threshold")
		case trig == SnapshotsTriggerInterval && a.SnapshotsTriggerThreshold < 0:
			c.add("acceleration.snapshots_trigger_threshold", "must be positive with snapshots_trigger: time_interval", "e.g. snapshots_trigger_threshold: 10m")
		}
	}
	for _, col := range a.PrimaryKey {
		if strings.TrimSpace(col) == "" {
			c.add("acceleration.primary_key", "names an empty column", "list column names, as in primary_key: [tenant_id, id]")
			break
		}
	}
	durations := []struct {
		key string
		d   time.Duration
	}{
		{"refresh_check_interval", a.RefreshCheckInterval},
		{"refresh_data_window", a.RefreshDataWindow},
		{"refresh_append_overlap", a.RefreshAppendOverlap},
		{"refresh_jitter_max", a.RefreshJitterMax},
		{"retention_period", a.RetentionPeriod},
		{"retention_check_interval", a.RetentionCheckInterval},
		{"caching_stale_while_revalidate", a.CachingStaleWhileRevalidate},
		{"caching_stale_if_error", a.CachingStaleIfError},
	}
	for _, dur := range durations {
		if dur.d < 0 {
			c.add("acceleration."+dur.key, "must not be negative", durationExample)
		}
	}
	if a.RefreshRetryMaxAttempts < 0 {
		c.add("acceleration.refresh_retry_max_attempts", "must be at least 1", "remove it to retry without limit")
	}
}

// schedule checks refresh_cron, refresh_check_interval and jitter.
func (c *datasetCheck) schedule() {
	a := &c.d.Acceleration
	hasInterval := c.given("acceleration.refresh_check_interval", a.RefreshCheckInterval != 0)
	if c.given("acceleration.refresh_cron", a.RefreshCron != "") {
		if _, err := cron.ParseStandard(a.RefreshCron); err != nil {
			c.add("acceleration.refresh_cron", fmt.Sprintf("%q is not a cron schedule: %v", a.RefreshCron, err),
				"use five fields, minute hour day-of-month month day-of-week, as in '0 12 * * 1-5'")
		}
		if hasInterval {
			c.add("acceleration.refresh_cron", "cannot be combined with refresh_check_interval", "remove one of them")
		}
	}
	jitterMaxGiven := c.given("acceleration.refresh_jitter_max", a.RefreshJitterMax != 0)
	switch {
	case jitterMaxGiven && !a.RefreshJitterEnabled:
		c.add("acceleration.refresh_jitter_max", "has no effect while refresh_jitter_enabled is false", "set refresh_jitter_enabled: true, or remove refresh_jitter_max")
	case a.RefreshJitterEnabled && a.RefreshJitterMax == 0 && a.RefreshCheckInterval == 0 && !jitterMaxGiven:
		c.add("acceleration.refresh_jitter_enabled", "needs refresh_jitter_max: without refresh_check_interval there is no interval to take 10% of",
			"set refresh_jitter_max, such as 30s")
	case a.RefreshJitterEnabled && a.RefreshCheckInterval > 0 && a.RefreshJitterMax >= a.RefreshCheckInterval:
		c.add("acceleration.refresh_jitter_max", fmt.Sprintf("must be shorter than refresh_check_interval (%s)", formatDuration(a.RefreshCheckInterval)),
			"lower it; the default is 10% of refresh_check_interval")
	}
}

// modeRules checks the requirements of each refresh mode and the keys that
// have no effect in the mode chosen.
func (c *datasetCheck) modeRules() {
	d, a := c.d, &c.d.Acceleration
	if !slices.Contains(refreshes, a.RefreshMode) {
		return // already reported; the rules below would only add noise
	}
	switch a.RefreshMode {
	case RefreshAppend:
		if d.TimeColumn == "" {
			c.add("acceleration.refresh_mode", "append needs the dataset's time_column to find new rows", "set time_column on the dataset, such as time_column: updated_at")
		}
	case RefreshChanges:
		if len(a.PrimaryKey) == 0 {
			c.add("acceleration.refresh_mode", "changes needs primary_key to apply updates and deletes", "set acceleration.primary_key to the table's key columns")
		}
	}
	if c.given("acceleration.refresh_data_window", a.RefreshDataWindow != 0) && d.TimeColumn == "" {
		c.add("acceleration.refresh_data_window", "needs the dataset's time_column to filter by", "set time_column on the dataset, or remove refresh_data_window")
	}
	for _, b := range modeBound {
		key := "acceleration." + b.key
		if !slices.Contains(b.modes, a.RefreshMode) && c.given(key, b.set(a)) {
			c.add(key, fmt.Sprintf("has no effect with refresh_mode: %s; it applies only with refresh_mode: %s", a.RefreshMode, strings.Join(b.modes, ", ")),
				"remove it, or change refresh_mode")
		}
	}
	if a.RetentionCheckEnabled && !slices.Contains([]string{RefreshFull, RefreshAppend, RefreshChanges}, a.RefreshMode) {
		c.add("acceleration.retention_check_enabled", fmt.Sprintf("retention checks do not run with refresh_mode: %s; they apply only with full, append and changes", a.RefreshMode),
			"remove retention_check_enabled, or change refresh_mode")
	}
}

// retention checks the retention policy.
func (c *datasetCheck) retention() {
	d, a := c.d, &c.d.Acceleration
	periodGiven := c.given("acceleration.retention_period", a.RetentionPeriod != 0)
	sqlGiven := c.given("acceleration.retention_sql", a.RetentionSQL != "")
	// A retention policy missing a setting (no period or SQL, a period
	// without time_column, no check interval) is not a config error: as
	// the spec says, the runtime logs a [retention] error naming the
	// missing setting and schedules no pass.
	_ = periodGiven
	if !sqlGiven {
		return
	}
	stmt, err := parseRetentionSQL(a.RetentionSQL)
	if err != nil {
		c.add("acceleration.retention_sql", err.Error(), "write it as DELETE FROM "+c.tableWord()+" WHERE <condition>")
		return
	}
	if d.Table != "" && !namesDataset(stmt.target, d) {
		c.add("acceleration.retention_sql", fmt.Sprintf("deletes from %s, not from this dataset", strings.Join(stmt.target, ".")),
			"write DELETE FROM "+c.tableWord()+" WHERE <condition>")
	}
}

// refreshSQL checks the shape of refresh_sql.
func (c *datasetCheck) refreshSQL() {
	d, a := c.d, &c.d.Acceleration
	if !c.given("acceleration.refresh_sql", a.RefreshSQL != "") {
		return
	}
	stmt, err := parseRefreshSQL(a.RefreshSQL)
	if err != nil {
		c.add("acceleration.refresh_sql", err.Error(), "write it as SELECT * FROM "+c.tableWord()+" WHERE <condition>")
		return
	}
	if d.Table != "" && !namesDataset(stmt.target, d) {
		c.add("acceleration.refresh_sql", fmt.Sprintf("reads from %s, not from this dataset", strings.Join(stmt.target, ".")),
			"refresh_sql may read only this dataset: write SELECT * FROM "+c.tableWord()+" WHERE <condition>")
	}
	if a.RefreshMode == RefreshChanges && stmt.where != "" {
		c.add("acceleration.refresh_sql", "with refresh_mode: changes, refresh_sql may choose columns but not filter rows", "remove the WHERE clause")
	}
}

// snapshots checks snapshot mode and acceleration.snapshots.
func (c *datasetCheck) snapshots() {
	a := &c.d.Acceleration
	optIn := a.Snapshots != SnapshotsDisabled && slices.Contains(snapshotOpt, a.Snapshots)
	snapshotMode := a.RefreshMode == RefreshSnapshot
	if !optIn && !snapshotMode {
		return
	}
	if optIn && a.RefreshMode == RefreshCaching {
		c.add("acceleration.snapshots", "has nothing to snapshot with refresh_mode: caching: its answers are kept in memory, not loaded into a file",
			"remove acceleration.snapshots, or change refresh_mode")
		return
	}
	// Problems about keys the file leaves out point at the setting that
	// needs them.
	near, why, needs := "acceleration.snapshots", "acceleration.snapshots: "+a.Snapshots, "needs"
	if snapshotMode {
		near, why, needs = "acceleration.refresh_mode", "refresh_mode: snapshot", "refresh_mode: snapshot needs"
		if a.Snapshots != SnapshotsEnabled && a.Snapshots != SnapshotsBootstrapOnly {
			c.addNear("acceleration.snapshots", near, fmt.Sprintf("must be enabled or bootstrap_only with refresh_mode: snapshot, got %s", a.Snapshots),
				"set acceleration.snapshots: enabled")
		}
	}
	if a.Mode != ModeFile && slices.Contains(modes, a.Mode) {
		c.addNear("acceleration.mode", near, fmt.Sprintf("must be file with %s: snapshots are files", why), "set acceleration.mode: file")
	}
	if !c.v.snapshotsEnabled() {
		c.addNear("acceleration.snapshots", near, needs+" the top-level snapshots block, enabled, with a location",
			"add at the top of the file: snapshots: {enabled: true, location: s3://my-bucket/snapshots/}")
	}
}

// params checks the two params blocks: the acceleration params pgaccel
// reads (duckdb_file), the dataset params of refresh_mode: changes, and
// every other key. A key of the other block is an error (it would be
// ignored where it is: pg_publication under acceleration.params), and so is
// a near miss of a key pgaccel reads (a typo); any other key is a warning,
// since the spec's connectors and engines take params that pgaccel has no
// use for (pg_host: every table is read through origin.dsn).
func (c *datasetCheck) params() {
	a := &c.d.Acceleration
	c.unknownParams("acceleration.params.", a.Params, accelerationParams, "params.", datasetParams)
	c.unknownParams("params.", c.d.Params, datasetParams, "acceleration.params.", accelerationParams)
	if _, ok := a.Params[paramDuckDBFile]; ok {
		if a.Mode == ModeMemory {
			c.add("acceleration.params."+paramDuckDBFile, "is used only with mode: file", "set acceleration.mode: file, or remove duckdb_file")
		} else {
			c.warn("acceleration.params."+paramDuckDBFile, "is checked but not used yet: the acceleration's file is <runtime.data_dir>/"+c.d.Name+".duckdb",
				"remove it to silence this warning")
		}
	}
	for _, k := range []string{ParamPublication, ParamReplicationSlot} {
		v, ok := c.d.Params[k]
		if !ok {
			continue
		}
		switch {
		case a.RefreshMode != RefreshChanges:
			c.add("params."+k, "is used only with refresh_mode: changes", "remove it, or set acceleration.refresh_mode: changes")
		case !validReplicationName(v):
			c.add("params."+k, fmt.Sprintf("%q is not a name Postgres takes for it: 1 to 63 lower-case letters, digits and underscores", v),
				"name an existing "+strings.TrimPrefix(k, "pg_")+" of the origin, or remove the key to let pgaccel create one")
		}
	}
	if v, ok := c.d.Params[ParamReadyLag]; ok {
		switch d, err := ParseDuration(v); {
		case a.RefreshMode != RefreshChanges:
			c.add("params."+ParamReadyLag, "is used only with refresh_mode: changes", "remove it, or set acceleration.refresh_mode: changes")
		case err != nil || d <= 0:
			c.add("params."+ParamReadyLag, fmt.Sprintf("%q is not a positive duration", v), "write a duration such as 2s or 500ms")
		}
	}
}

// The params pgaccel reads, by block.
var (
	accelerationParams = []string{paramDuckDBFile}
	datasetParams      = []string{ParamPublication, ParamReplicationSlot, ParamReadyLag}
)

// unknownParams reports the keys of params (the block at prefix) that are
// not in known: a key of the other block (otherKnown, at otherPrefix) or a
// near miss of a known key is an error, any other key a warning.
func (c *datasetCheck) unknownParams(prefix string, params map[string]string, known []string, otherPrefix string, otherKnown []string) {
	for _, k := range slices.Sorted(maps.Keys(params)) {
		switch {
		case slices.Contains(known, k):
		case slices.Contains(otherKnown, k):
			c.add(prefix+k, fmt.Sprintf("is read from %s%s, not from %s%s: here it would be ignored", otherPrefix, k, prefix, k),
				fmt.Sprintf("move it to %s (%s)", strings.TrimSuffix(otherPrefix, "."), paramsPlace(otherPrefix)))
		case suggest(k, known) != "":
			c.add(prefix+k, "is not a parameter pgaccel reads", fmt.Sprintf("did you mean %q?", suggest(k, known)))
		default:
			fix := "pgaccel reads only " + strings.Join(known, ", ") + " here; remove it to silence this warning"
			if prefix == "params." {
				fix = "pgaccel reads every dataset through origin.dsn, and only " + strings.Join(known, ", ") + " here; remove it to silence this warning"
			}
			c.warn(prefix+k, "is not a parameter pgaccel reads: it is ignored", fix)
		}
	}
}

// paramsPlace says where a params block is written.
func paramsPlace(prefix string) string {
	if prefix == "params." {
		return "the dataset's own params block, beside acceleration:"
	}
	return "the params block inside acceleration:"
}

// Dataset params of refresh_mode: changes.
const (
	// ParamPublication names an existing publication of the origin that
	// holds the table, instead of the one pgaccel creates.
	ParamPublication = "pg_publication"
	// ParamReplicationSlot names the replication slot to stream from
	// instead of the one pgaccel names itself.
	ParamReplicationSlot = "pg_replication_slot"
	// ParamReadyLag is the replication lag under which the dataset is
	// ready (default DefaultReadyLag).
	ParamReadyLag = "pg_replication_ready_lag"
)

// DefaultReadyLag is the replication lag under which a changes dataset is
// ready.
const DefaultReadyLag = 2 * time.Second

// ReadyLag is the dataset's pg_replication_ready_lag, or the default.
func (d *Dataset) ReadyLag() time.Duration {
	if v, ok := d.Params[ParamReadyLag]; ok {
		if dur, err := ParseDuration(v); err == nil && dur > 0 {
			return dur
		}
	}
	return DefaultReadyLag
}

// validReplicationName reports whether s is a valid replication slot name
// (publication names follow the same rule here).
func validReplicationName(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// tableWord is how fixes name the dataset in example SQL.
func (c *datasetCheck) tableWord() string {
	if c.d.Name != "" {
		return c.d.Name
	}
	return "<table>"
}
