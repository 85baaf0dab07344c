package catalog

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Validate checks the meaning of every setting and the combinations the spec
// forbids. It returns nil or a *ValidationError listing every problem,
// sorted by line. A Config built by hand (not by Parse) is checked the same
// way, with a dataset's Line standing in for the lines of its keys.
func (c *Config) Validate() error {
	if problems := c.problems(); len(problems) > 0 {
		return newValidationError(c.file, problems)
	}
	return nil
}

// Warnings returns what pgaccel accepts in c and ignores (params it does
// not read), sorted by line: pgaccel validate prints them and pgaccel run
// logs them, neither failing.
func (c *Config) Warnings() []Problem {
	return newValidationError(c.file, c.check().warnings).Problems
}

// validator collects the problems and warnings of one config.
type validator struct {
	cfg      *Config
	list     []Problem
	warnings []Problem
}

// problems returns every problem of c, unsorted.
func (c *Config) problems() []Problem {
	return c.check().list
}

// check runs every check of c.
func (c *Config) check() *validator {
	v := &validator{cfg: c}
	v.origin()
	v.listeners()
	v.tls()
	v.runtime()
	v.auth()
	v.snapshots()
	for i, d := range c.Datasets {
		idx := i
		if d.keys != nil {
			idx = d.index
		}
		ds := &datasetCheck{v: v, d: d, label: d.Name}
		if d.Name == "" {
			ds.prefix = fmt.Sprintf("datasets[%d].", idx)
		}
		ds.check()
	}
	v.unique()
	return v
}

// add reports a problem outside datasets, at the line of key or of the
// closest enclosing block that was given.
func (v *validator) add(key, message, fix string) {
	v.list = append(v.list, Problem{Line: lookupLine(v.cfg.keys, key), Key: key, Message: message, Fix: fix})
}

// lookupLine returns the line of key in keys, or of its closest parent
// present, or 0.
func lookupLine(keys map[string]int, key string) int {
	for key != "" {
		if line, ok := keys[key]; ok {
			return line
		}
		i := strings.LastIndexByte(key, '.')
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}

func (v *validator) origin() {
	dsn := v.cfg.Origin.DSN
	if strings.TrimSpace(dsn) == "" {
		v.add("origin.dsn", "is required", "set it to the origin's connection string, as in postgres://user@db.example.com:5432/shop or ${env:PGACCEL_ORIGIN_DSN}")
		return
	}
	if _, err := pgconn.ParseConfig(dsn); err != nil {
		v.add("origin.dsn", "is not a valid Postgres connection string: "+dsnError(err),
			"use a URL such as postgres://user@host:5432/db or keywords such as host=db.example.com dbname=shop")
	}
}

// dsnError describes why a DSN does not parse without repeating the DSN,
// which may hold a password.
func dsnError(err error) string {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return urlErr.Err.Error()
	}
	var pcErr *pgconn.ParseConfigError
	if errors.As(err, &pcErr) {
		// Error() is "cannot parse `<dsn, password masked>`: <reason>".
		msg := pcErr.Error()
		if i := strings.LastIndex(msg, "`: "); i >= 0 {
			return msg[i+3:]
		}
		return "it cannot be parsed"
	}
	return err.Error()
}

func (v *validator) listeners() {
	s := v.cfg.Server
	serverOK := v.hostPort("server.listen", s.Listen)
	adminOK := v.hostPort("admin.listen", v.cfg.Admin.Listen)
	// Port 0 asks the kernel for a free port: two of them never collide.
	if serverOK && adminOK && s.Listen == v.cfg.Admin.Listen && !strings.HasSuffix(s.Listen, ":0") {
		v.add("admin.listen", "is the same address as server.listen", "give the admin port its own address, such as "+DefaultAdminListen)
	}
	if _, written := v.cfg.keys["admin.token"]; written && v.cfg.Admin.Token == "" {
		// ${env:TOKEN} with TOKEN set to "" would turn authentication off.
		v.add("admin.token", "is empty, which would leave the admin port without a token",
			"give it a token (if it comes from ${env:...}, that variable is set to the empty string), or remove the key to run the admin port without one")
	}
	if s.MaxMessageBytes < MinMaxMessageBytes {
		v.add("server.max_message_bytes", fmt.Sprintf("must be at least %d, got %d", MinMaxMessageBytes, s.MaxMessageBytes),
			fmt.Sprintf("remove it to use the default of %d (64 MiB)", DefaultMaxMessageBytes))
	}
	if s.EventLoops != nil && *s.EventLoops < 0 {
		v.add("server.event_loops", fmt.Sprintf("must not be negative, got %d", *s.EventLoops),
			"remove it for one loop per two CPUs, or write 0 to relay every session on goroutines")
	}
	if s.ShutdownGrace < 0 {
		v.add("server.shutdown_grace", "must not be negative", "use a duration such as 10s, or 0s to cancel statements at once")
	}
}

// hostPort checks a listen address, reporting whether it is valid.
func (v *validator) hostPort(key, addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		var n int
		n, err = strconv.Atoi(port)
		if err == nil && (n < 0 || n > 65535) {
			err = errors.New("port out of range")
		}
	}
	if err != nil {
		v.add(key, fmt.Sprintf("%q is not a host:port address", addr), "write it as host:port, such as 127.0.0.1:15432 or :15432 for every interface")
		return false
	}
	return true
}

func (v *validator) tls() {
	t := v.cfg.Server.TLS
	if t == nil {
		return
	}
	for _, f := range []struct{ key, path string }{
		{"server.tls.cert_file", t.CertFile},
		{"server.tls.key_file", t.KeyFile},
	} {
		if f.path == "" {
			v.add(f.key, "is required when server.tls is set", "name a PEM file, or remove server.tls to serve without TLS")
			continue
		}
		info, err := os.Stat(f.path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			v.add(f.key, fmt.Sprintf("file %s does not exist", f.path), "check the path; relative paths start from pgaccel's working directory")
		case err != nil:
			v.add(f.key, fmt.Sprintf("cannot read %s: %v", f.path, err), "check the file's permissions")
		case info.IsDir():
			v.add(f.key, fmt.Sprintf("%s is a directory", f.path), "name the PEM file itself")
		}
	}
}

func (v *validator) runtime() {
	r := v.cfg.Runtime
	if strings.TrimSpace(r.DataDir) == "" {
		v.add("runtime.data_dir", "must not be empty", "remove it to use "+DefaultDataDir)
	}
	if !slices.Contains([]string{ReadyOnLoad, ReadyOnRegistration}, r.ReadyState) {
		v.add("runtime.ready_state", fmt.Sprintf("%q is not on_load or on_registration", r.ReadyState), choose(r.ReadyState, ReadyOnLoad, ReadyOnRegistration))
	}
	if r.RefreshConcurrency < 0 {
		v.add("runtime.refresh_concurrency", "must be at least 1", fmt.Sprintf("remove it to run %d refreshes at once", DefaultRefreshConcurrency))
	}
	if c := r.ResultsCache; c.MaxEntryBytes > c.MaxBytes {
		v.add("runtime.results_cache.max_entry_bytes", fmt.Sprintf("is larger than max_bytes (%d > %d bytes)", c.MaxEntryBytes, c.MaxBytes),
			"make it at most max_bytes")
	} else if c.MaxEntryBytes > DefaultResultsCacheEntryBytes {
		v.add("runtime.results_cache.max_entry_bytes", fmt.Sprintf("is larger than %d bytes: larger answers are streamed to the client as DuckDB returns them, and cannot be kept", DefaultResultsCacheEntryBytes),
			"use 1MiB or less")
	}
	if r.Verify.Enabled && (r.Verify.SampleRate <= 0 || r.Verify.SampleRate > 1) {
		v.add("runtime.verify.sample_rate", fmt.Sprintf("%q is not a share of statements above 0 and at most 100%%", r.Verify.SampleRateText),
			"write a percentage such as 1% or a fraction such as 0.01")
	}
	if r.Verify.Enabled && r.Verify.OriginTimePerMinute <= 0 {
		v.add("runtime.verify.origin_time_per_minute", "must be more than 0", "use a duration such as 1s (the origin time verification may take each minute)")
	}
	if r.PointIndex.MaxBytes < 0 {
		v.add("runtime.point_index.max_bytes", "must not be negative", "use a size such as 256MiB, or enabled: false")
	}
	if m := r.DuckDB.MemoryLimit; m != 0 && m < MinDuckDBMemory {
		v.add("runtime.duckdb.memory_limit", "must be at least 64MiB", "use a size such as 4GiB, or remove it for half the machine's memory")
	}
	if !slices.Contains([]string{"", RYWSession, RYWRole, RYWGlobal, RYWOff}, r.ReadYourWrites.Scope) {
		v.add("runtime.read_your_writes.scope", fmt.Sprintf("%q is not session, role, global or off", r.ReadYourWrites.Scope), choose(r.ReadYourWrites.Scope, RYWSession, RYWRole, RYWGlobal, RYWOff))
	}
	if s := r.StatementStats; s.Enabled && (s.MaxStatements < 100 || s.MaxStatements > 1000000) {
		v.add("runtime.statement_stats.max_statements", fmt.Sprintf("%d is out of range", s.MaxStatements), "use a number from 100 to 1000000 (default 5000), or enabled: false")
	}
	if !slices.Contains([]string{"", PointReadsOrigin, PointReadsAcceleration}, r.PointReads) {
		v.add("runtime.point_reads", fmt.Sprintf("%q is not origin or acceleration", r.PointReads), choose(r.PointReads, PointReadsOrigin, PointReadsAcceleration))
	}
}

func (v *validator) auth() {
	a := v.cfg.Auth
	if a.CacheTTL < 0 {
		v.add("auth.cache_ttl", "must not be negative", "remove it for the default 60s")
	}
	if a.OriginIdleTimeout < 0 {
		v.add("auth.origin_idle_timeout", "must not be negative", "0 keeps a session's origin connection for its life")
	}
	if a.MaxStale < 0 {
		v.add("auth.max_stale", "must not be negative", "0 never serves a verifier the origin could not confirm")
	}
	switch a.Mode {
	case "", AuthOrigin:
	case AuthProxy:
		if a.Persist && strings.TrimSpace(v.cfg.Runtime.DataDir) == "" {
			v.add("auth.persist", "needs runtime.data_dir, where the verifiers are kept", "set runtime.data_dir, or persist: false")
		}
	default:
		v.add("auth.mode", fmt.Sprintf("%q is not origin or proxy", a.Mode), choose(a.Mode, AuthOrigin, AuthProxy))
	}
}

func (v *validator) snapshots() {
	s := v.cfg.Snapshots
	if s == nil {
		return
	}
	if s.Enabled && strings.TrimSpace(s.Location) == "" {
		v.add("snapshots.location", "is required when snapshots are enabled", "set it to where snapshots are stored, such as s3://my-bucket/snapshots/")
	} else if s.Location != "" {
		// The shape only (the snapshot package opens it at run).
		u, err := url.Parse(s.Location)
		switch {
		case err != nil || u.Scheme != "file" && u.Scheme != "s3":
			v.add("snapshots.location", fmt.Sprintf("%q is not a file:// or s3:// URL", s.Location), "write s3://bucket/prefix/ or file:///path/to/dir")
		case u.Scheme == "s3" && u.Host == "":
			v.add("snapshots.location", fmt.Sprintf("%q names no bucket", s.Location), "write s3://bucket/prefix/")
		case u.Scheme == "file" && u.Host+u.Path == "":
			v.add("snapshots.location", fmt.Sprintf("%q names no directory", s.Location), "write file:///path/to/dir")
		case u.Scheme == "file" && len(s.Params) > 0:
			v.add("snapshots.params", "are S3 parameters; a file:// location takes none", "remove them, or use an s3:// location")
		}
	}
	known := []string{"s3_endpoint", "s3_region", "s3_auth", "s3_key", "s3_secret", "s3_session_token", "s3_path_style"}
	for _, k := range slices.Sorted(maps.Keys(s.Params)) {
		if !slices.Contains(known, k) {
			v.add("snapshots.params."+k, "is not a snapshot parameter", choose(k, known...))
		}
	}
	if a := s.Params["s3_auth"]; a != "" && a != "key" && a != "iam_role" && a != "public" {
		v.add("snapshots.params.s3_auth", fmt.Sprintf("%q is not key, iam_role or public", a), choose(a, "key", "iam_role", "public"))
	}
	if p := s.Params["s3_path_style"]; p != "" && p != "true" && p != "false" {
		v.add("snapshots.params.s3_path_style", fmt.Sprintf("%q is not true or false", p), "write true or false")
	}
	if !slices.Contains([]string{SnapshotFailureWarn, SnapshotFailureRetry, SnapshotFailureFallback}, s.BootstrapOnFailureBehavior) {
		v.add("snapshots.bootstrap_on_failure_behavior", fmt.Sprintf("%q is not warn, retry or fallback", s.BootstrapOnFailureBehavior),
			choose(s.BootstrapOnFailureBehavior, SnapshotFailureWarn, SnapshotFailureRetry, SnapshotFailureFallback))
	}
}

// snapshotsEnabled reports whether the top-level snapshots block is present
// and enabled.
func (v *validator) snapshotsEnabled() bool {
	return v.cfg.Snapshots != nil && v.cfg.Snapshots.Enabled
}

// unique reports datasets that share a name, a table or a DuckDB file.
func (v *validator) unique() {
	names := map[string]*Dataset{}
	tables := map[string]*Dataset{}
	files := map[string]*Dataset{}
	for _, d := range v.cfg.Datasets {
		if d.Name != "" {
			key := strings.ToLower(d.Name)
			if first, dup := names[key]; dup {
				v.datasetProblem(d, "name", fmt.Sprintf("is already the name of the dataset on line %d", first.Line), "give each dataset a unique name")
			} else {
				names[key] = d
			}
		}
		if d.Table != "" {
			key := d.QualifiedTable()
			if first, dup := tables[key]; dup {
				v.datasetProblem(d, "from", fmt.Sprintf("table %s is already accelerated by dataset %q (line %d)", key, first.Name, first.Line),
					"accelerate each table once: remove one of them")
			} else {
				tables[key] = d
			}
		}
		if file := d.Acceleration.Params[paramDuckDBFile]; file != "" {
			if first, dup := files[file]; dup {
				v.datasetProblem(d, "acceleration.params."+paramDuckDBFile, fmt.Sprintf("%s is already the file of dataset %q (line %d)", file, first.Name, first.Line),
					"give each dataset its own file")
			} else {
				files[file] = d
			}
		}
	}
}

// datasetProblem reports a problem of dataset d found outside its own checks.
func (v *validator) datasetProblem(d *Dataset, key, message, fix string) {
	v.list = append(v.list, Problem{Line: datasetLine(d, key), Dataset: d.Name, Key: key, Message: message, Fix: fix})
}

// datasetLine returns the line of a dataset's key, of its closest given
// parent, or of the dataset.
func datasetLine(d *Dataset, key string) int {
	if line := lookupLine(d.keys, key); line > 0 {
		return line
	}
	return d.Line
}

// choose suggests the allowed value closest to a bad one, or lists them.
func choose(got string, allowed ...string) string {
	if s := suggest(got, allowed); s != "" && got != "" {
		return fmt.Sprintf("did you mean %q?", s)
	}
	return "use one of " + strings.Join(allowed, ", ")
}
