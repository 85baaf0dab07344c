package catalog

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

const testDSN = "postgres://app:secret@db.example.com:5432/shop"

// exported returns a copy of c without the unexported bookkeeping, so it
// can be compared with a literal.
func exported(c *Config) Config {
	out := *c
	out.file, out.keys = "", nil
	out.Datasets = nil
	for _, d := range c.Datasets {
		dc := *d
		dc.keys, dc.index = nil, 0
		out.Datasets = append(out.Datasets, &dc)
	}
	return out
}

func TestLoad_ValidFullExample(t *testing.T) {
	t.Setenv("PGACCEL_TEST_DSN", testDSN)
	got, err := Load("testdata/valid_full.yaml")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := Config{
		Origin: Origin{DSN: testDSN},
		Server: Server{
			Listen:          "0.0.0.0:6432",
			TLS:             &TLS{CertFile: "testdata/tls/cert.pem", KeyFile: "testdata/tls/key.pem"},
			MaxMessageBytes: 1 << 20,
			ShutdownGrace:   30 * time.Second,
		},
		Admin: Admin{Listen: "127.0.0.1:9090"},
		Runtime: Runtime{DataDir: "/var/lib/pgaccel", ReadyState: ReadyOnRegistration, RefreshConcurrency: 2, PointReads: PointReadsOrigin,
			ResultsCache:   ResultsCache{Enabled: true, MaxBytes: DefaultResultsCacheBytes, MaxEntryBytes: DefaultResultsCacheEntryBytes},
			PointIndex:     PointIndex{Enabled: true, MaxBytes: DefaultPointIndexBytes},
			ReadYourWrites: ReadYourWrites{Scope: RYWSession, MaxWait: DefaultRYWMaxWait},
			StatementStats: StatementStats{Enabled: true, MaxStatements: DefaultMaxStatements},
			Verify:         Verify{SampleRate: DefaultVerifySampleRate, SampleRateText: "1%", OriginTimePerMinute: DefaultVerifyOriginTime}},
		Auth: Auth{Mode: AuthOrigin, CacheTTL: DefaultAuthCacheTTL, MaxStale: DefaultAuthMaxStale, OriginIdleTimeout: DefaultAuthOriginIdleTimeout},
		Snapshots: &Snapshots{
			Enabled:                    true,
			Location:                   "s3://my-bucket/snapshots/",
			BootstrapOnFailureBehavior: SnapshotFailureRetry,
			Params:                     map[string]string{"s3_auth": "iam_role"},
			Line:                       21,
		},
		Datasets: []*Dataset{
			{
				From: "postgres:public.orders", Schema: "public", Table: "orders", Name: "orders",
				TimeColumn: "updated_at", TimeFormat: TimeFormatTimestamptz,
				TimePartitionColumn: "created_day", TimePartitionFormat: TimeFormatDate,
				ReadyState: ReadyOnLoad,
				Params:     map[string]string{"statement_timeout": "5min"},
				Acceleration: Acceleration{
					Enabled: true, Engine: EngineDuckDB, Mode: ModeFile, RefreshMode: RefreshAppend,
					RefreshCheckInterval:    time.Minute,
					RefreshSQL:              "SELECT id, status, updated_at FROM orders WHERE status <> 'draft'",
					RefreshDataWindow:       30 * 24 * time.Hour,
					RefreshAppendOverlap:    5 * time.Minute,
					RefreshOnStartup:        RefreshOnStartupAlways,
					RefreshRetryEnabled:     true,
					RefreshRetryMaxAttempts: 10,
					RefreshJitterEnabled:    true,
					RefreshJitterMax:        10 * time.Second,
					RetentionCheckEnabled:   true,
					RetentionPeriod:         90 * 24 * time.Hour,
					RetentionSQL:            "DELETE FROM orders WHERE deleted_at IS NOT NULL",
					RetentionCheckInterval:  10 * time.Minute,
					OnZeroResults:           ZeroResultsUseSource,
					PrimaryKey:              []string{"id"},
					ReadyState:              ReadyOnLoad,
					Snapshots:               SnapshotsEnabled,
					Params:                  map[string]string{"duckdb_file": "/var/lib/pgaccel/orders.db"},
				},
				Line: 28,
			},
			{
				From: `postgres:Sales."Customer List"`, Schema: "sales", Table: "Customer List", Name: "customers",
				ReadyState: ReadyOnSchemaResolved,
				Acceleration: Acceleration{
					Enabled: true, Engine: EngineDuckDB, Mode: ModeMemory, RefreshMode: RefreshChanges,
					RefreshSQL:          "SELECT id, tenant_id, \"Display Name\" FROM customers\n",
					RefreshOnStartup:    RefreshOnStartupAuto,
					RefreshRetryEnabled: true,
					OnZeroResults:       ZeroResultsReturnEmpty,
					PrimaryKey:          []string{"tenant_id", "id"},
					ReadyState:          ReadyOnSchemaResolved,
					Snapshots:           SnapshotsDisabled,
				},
				Line: 62,
			},
			{
				From: "postgres:products", Schema: "public", Table: "products", Name: "products",
				ReadyState: ReadyOnLoad,
				Acceleration: Acceleration{
					Enabled: true, Engine: EngineDuckDB, Mode: ModeMemory, RefreshMode: RefreshFull,
					RefreshCron:          "0 12 * * 1-5",
					RefreshOnStartup:     RefreshOnStartupAuto,
					RefreshRetryEnabled:  false,
					RefreshJitterEnabled: true,
					RefreshJitterMax:     90 * time.Minute,
					OnZeroResults:        ZeroResultsReturnEmpty,
					ReadyState:           ReadyOnLoad,
					Snapshots:            SnapshotsDisabled,
				},
				Line: 72,
			},
			{
				From: "postgres:public.prices", Schema: "public", Table: "prices", Name: "prices",
				ReadyState: ReadyOnLoad,
				Acceleration: Acceleration{
					Enabled: true, Engine: EngineDuckDB, Mode: ModeFile, RefreshMode: RefreshSnapshot,
					RefreshCheckInterval: DefaultSnapshotPollInterval,
					RefreshOnStartup:     RefreshOnStartupAuto,
					RefreshRetryEnabled:  true,
					OnZeroResults:        ZeroResultsReturnEmpty,
					ReadyState:           ReadyOnLoad,
					Snapshots:            SnapshotsBootstrapOnly,
				},
				Line: 79,
			},
		},
	}
	if g := exported(got); !reflect.DeepEqual(g, want) {
		for i := range min(len(g.Datasets), len(want.Datasets)) {
			if !reflect.DeepEqual(g.Datasets[i], want.Datasets[i]) {
				t.Errorf("dataset %d:\n got %+v\nwant %+v", i, *g.Datasets[i], *want.Datasets[i])
			}
		}
		g.Datasets, want.Datasets = nil, nil
		t.Errorf("config:\n got %+v\nwant %+v", g, want)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Validate of a loaded config: %v", err)
	}
}

func TestParse_Defaults(t *testing.T) {
	got, err := parse([]byte("origin:\n  dsn: host=localhost\ndatasets:\n  - from: postgres:orders\n"), "pgaccel.yaml", noEnv)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	want := Config{
		Origin: Origin{DSN: "host=localhost"},
		Server: Server{Listen: "127.0.0.1:15432", MaxMessageBytes: 64 << 20, ShutdownGrace: 10 * time.Second},
		Admin:  Admin{Listen: "127.0.0.1:8090"},
		Runtime: Runtime{DataDir: "./.pgaccel", ReadyState: ReadyOnLoad, RefreshConcurrency: 2, PointReads: PointReadsOrigin,
			ResultsCache:   ResultsCache{Enabled: true, MaxBytes: DefaultResultsCacheBytes, MaxEntryBytes: DefaultResultsCacheEntryBytes},
			PointIndex:     PointIndex{Enabled: true, MaxBytes: DefaultPointIndexBytes},
			ReadYourWrites: ReadYourWrites{Scope: RYWSession, MaxWait: DefaultRYWMaxWait},
			StatementStats: StatementStats{Enabled: true, MaxStatements: DefaultMaxStatements},
			Verify:         Verify{SampleRate: DefaultVerifySampleRate, SampleRateText: "1%", OriginTimePerMinute: DefaultVerifyOriginTime}},
		Auth: Auth{Mode: AuthOrigin, CacheTTL: DefaultAuthCacheTTL, MaxStale: DefaultAuthMaxStale, OriginIdleTimeout: DefaultAuthOriginIdleTimeout},
		Datasets: []*Dataset{{
			From: "postgres:orders", Schema: "public", Table: "orders", Name: "orders",
			ReadyState: ReadyOnLoad,
			Acceleration: Acceleration{
				Enabled: true, Engine: "duckdb", Mode: "memory", RefreshMode: "full",
				RefreshOnStartup: "auto", RefreshRetryEnabled: true, RefreshJitterEnabled: false,
				OnZeroResults: "return_empty", ReadyState: "on_load", Snapshots: "disabled",
			},
			Line: 4,
		}},
	}
	if g := exported(got); !reflect.DeepEqual(g, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", g, want)
	}
}

func TestParse_DerivedDefaults(t *testing.T) {
	tests := []struct {
		name, acceleration string
		check              func(*Dataset) bool
	}{
		{"jitter max is 10% of the interval", "refresh_check_interval: 10m\n      refresh_jitter_enabled: true",
			func(d *Dataset) bool { return d.Acceleration.RefreshJitterMax == time.Minute }},
		{"jitter max stays unset without jitter", "refresh_check_interval: 10m",
			func(d *Dataset) bool { return d.Acceleration.RefreshJitterMax == 0 }},
		{"snapshot mode polls every minute", "mode: file\n      refresh_mode: snapshot\n      snapshots: enabled",
			func(d *Dataset) bool { return d.Acceleration.RefreshCheckInterval == time.Minute }},
		{"acceleration.ready_state sets the dataset's", "ready_state: on_registration",
			func(d *Dataset) bool { return d.ReadyState == ReadyOnRegistration }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "origin: {dsn: host=db}\nsnapshots: {location: s3://b/snapshots/}\ndatasets:\n  - from: postgres:t\n    acceleration:\n      " + tt.acceleration + "\n"
			cfg, err := parse([]byte(src), "pgaccel.yaml", noEnv)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if d := cfg.Datasets[0]; !tt.check(d) {
				t.Errorf("unexpected dataset: %+v", *d)
			}
		})
	}
}

// wantProblem is an expected problem: its line, dataset, key, and a part of
// its message.
type wantProblem struct {
	line    int
	dataset string
	key     string
	message string
}

func TestLoad_InvalidFixtures(t *testing.T) {
	tests := []struct {
		file string
		want []wantProblem
	}{
		{"testdata/invalid_keys.yaml", []wantProblem{
			{3, "", "origin.password", `unknown key "password"`},
			{5, "", "server.listen", "${secrets:LISTEN} is not supported"},
			{6, "", "server.max_message_bytes", `must be a whole number, got "lots"`},
			{7, "", "server.shutdown_grace", "a duration needs a unit, got 10"},
			{9, "", "admin.listn", `unknown key "listn"`},
			{13, "orders", "primary_key", `unknown key "primary_key"`},
			{15, "orders", "acceleration.refresh-mode", `unknown key "refresh-mode"`},
			{16, "orders", "acceleration.refresh_check_interval", `not a duration, got "ten minutes"`},
			{17, "orders", "acceleration.refresh_retry_enabled", `must be true or false, got "yes"`},
			{18, "orders", "acceleration.refresh_retry_max_attempts", "must be at least 1, got 0"},
			{19, "orders", "acceleration.time_format", `unknown key "time_format"`},
			{20, "orders", "acceleration.retention_period", "must be longer than zero"},
			{21, "orders", "acceleration.primary_key", "names an empty column"},
			{23, "orders", "acceleration.enabled", "given twice (first on line 22)"},
			{25, "users", "name", "environment variable PGACCEL_UNSET_NAME is not set"},
			{26, "users", "acceleration", "must be a block of key: value lines"},
			{27, "", "datasets[2]", "a dataset must be a block of key: value lines"},
			{28, "", "refresh_mode", `unknown key "refresh_mode"`},
		}},
		{"testdata/invalid_rules.yaml", []wantProblem{
			{8, "orders", "acceleration.refresh_mode", "append needs the dataset's time_column"},
			{10, "orders", "acceleration.refresh_cron", "cannot be combined with refresh_check_interval"},
			{11, "orders", "acceleration.refresh_data_window", "needs the dataset's time_column"},
			{14, "orders", "acceleration.retention_sql", "deletes from customers, not from this dataset"},
			{19, "events", "acceleration.refresh_cron", `"every day at noon" is not a cron schedule`},
			{20, "events", "acceleration.refresh_append_overlap", "has no effect with refresh_mode: full"},
			{21, "events", "acceleration.refresh_jitter_max", "has no effect while refresh_jitter_enabled is false"},
			{25, "customers", "acceleration.refresh_mode", "changes needs primary_key"},
			{26, "customers", "acceleration.refresh_sql", "may choose columns but not filter rows"},
			{27, "customers", "acceleration.refresh_jitter_enabled", "needs refresh_jitter_max"},
			{27, "customers", "acceleration.refresh_jitter_enabled", "has no effect with refresh_mode: changes"},
			{28, "customers", "acceleration.retention_sql", "must be a statement of the form DELETE FROM <table> WHERE <condition>"},
			{31, "prices", "acceleration.snapshots", "must be enabled or bootstrap_only with refresh_mode: snapshot"},
			{31, "prices", "acceleration.mode", "must be file with refresh_mode: snapshot"},
			{31, "prices", "acceleration.snapshots", "refresh_mode: snapshot needs the top-level snapshots block"},
			{32, "prices", "acceleration.refresh_cron", "has no effect with refresh_mode: snapshot"},
			{33, "", "datasets[4].from", `connector "mysql" is not supported: only postgres: is supported`},
			{34, "Events", "from", `table "public"."events" is already accelerated by dataset "events" (line 15)`},
			{35, "Events", "name", "is already the name of the dataset on line 15"},
			{36, "Events", "time_format", `"unix_micros" is not one of`},
			{36, "Events", "time_format", "has no effect without time_column"},
			{38, "Events", "acceleration.engine", `"sqlite" is not supported: the only engine is duckdb`},
			{39, "Events", "acceleration.mode", `"file_create" is not one of memory, file`},
			{40, "Events", "acceleration.refresh_mode", `"fulll" is not one of`},
			{41, "Events", "acceleration.refresh_on_startup", `"never" is not one of auto, always`},
			{42, "Events", "acceleration.on_zero_results", `"use_cache" is not one of return_empty, use_source`},
			{43, "Events", "acceleration.snapshots", "needs the top-level snapshots block"},
			{47, "Events", "acceleration.refresh_jitter_max", "must be shorter than refresh_check_interval (10s)"},
			{48, "2fast", "name", `"2fast" is not a valid SQL identifier`},
			{49, "2fast", "from", `"a.b.c" has 3 parts`},
		}},
		{"testdata/invalid_top.yaml", []wantProblem{
			{0, "", "origin.dsn", "is required"},
			{2, "", "server.listen", `"localhost" is not a host:port address`},
			{3, "", "server.tls.key_file", "is required when server.tls is set"},
			{4, "", "server.tls.cert_file", "file testdata/tls/missing.pem does not exist"},
			{5, "", "server.max_message_bytes", "must be at least 4096, got 100"},
			{7, "", "admin.listen", `"localhost" is not a host:port address`},
			{9, "", "runtime.data_dir", "must not be empty"},
			{10, "", "runtime.ready_state", `"on_schema_resolved" is not on_load or on_registration`},
			{11, "", "runtime.point_reads", `"fastest" is not origin or acceleration`},
			{12, "", "snapshots.location", "is required when snapshots are enabled"},
			{13, "", "snapshots.bootstrap_on_failure_behavior", `"retyr" is not warn, retry or fallback`},
			{15, "", "auth.mode", `"cache" is not origin or proxy`},
		}},
		{"testdata/invalid_syntax.yaml", []wantProblem{
			{5, "", "", "invalid YAML: ',' or ']' must be specified"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			cfg, err := Load(tt.file)
			if cfg != nil {
				t.Errorf("Load returned a config along with problems")
			}
			assertProblems(t, err, tt.want)
			var ve *ValidationError
			if errors.As(err, &ve) && ve.File != tt.file {
				t.Errorf("File = %q, want %q", ve.File, tt.file)
			}
		})
	}
}

// assertProblems checks that err is a *ValidationError with exactly the
// wanted problems, in order, each with a fix.
func assertProblems(t *testing.T, err error, want []wantProblem) {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v (%T) is not a *ValidationError", err, err)
	}
	for i := 0; i < max(len(ve.Problems), len(want)); i++ {
		switch {
		case i >= len(want):
			t.Errorf("unexpected problem: %s", ve.Problems[i].Format("f"))
		case i >= len(ve.Problems):
			t.Errorf("missing problem: line %d, dataset %q, %s: %s", want[i].line, want[i].dataset, want[i].key, want[i].message)
		default:
			p, w := ve.Problems[i], want[i]
			if p.Line != w.line || p.Dataset != w.dataset || p.Key != w.key || !strings.Contains(p.Message, w.message) {
				t.Errorf("problem %d:\n got line %d, dataset %q, %s: %s\nwant line %d, dataset %q, %s: ...%s...",
					i, p.Line, p.Dataset, p.Key, p.Message, w.line, w.dataset, w.key, w.message)
			}
			if p.Fix == "" {
				t.Errorf("problem %d (%s) says nothing about how to fix it", i, p.Format("f"))
			}
		}
	}
}

func TestValidationError_Format(t *testing.T) {
	err := &ValidationError{File: "pgaccel.yaml", Problems: []Problem{
		{Line: 12, Dataset: "orders", Key: "acceleration.refresh_cron", Message: "cannot be combined with refresh_check_interval", Fix: "remove one of them"},
		{Key: "origin.dsn", Message: "is required"},
	}}
	want := "pgaccel.yaml:12: dataset \"orders\": acceleration.refresh_cron: cannot be combined with refresh_check_interval; remove one of them\n" +
		"pgaccel.yaml: origin.dsn: is required"
	if got := err.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
	if got, want := err.Problems[0].Error(), `line 12: dataset "orders": acceleration.refresh_cron: cannot be combined with refresh_check_interval; remove one of them`; got != want {
		t.Errorf("Problem.Error() = %q, want %q", got, want)
	}
}

func TestLoad_MissingFile(t *testing.T) {
	_, err := Load("testdata/does-not-exist.yaml")
	var ve *ValidationError
	if err == nil || errors.As(err, &ve) {
		t.Fatalf("Load of a missing file: %v, want a read error", err)
	}
}

func TestDataset_Helpers(t *testing.T) {
	t.Setenv("PGACCEL_TEST_DSN", testDSN)
	cfg, err := Load("testdata/valid_full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	orders, customers := cfg.Dataset("ORDERS"), cfg.Dataset("customers")
	if orders == nil || customers == nil || cfg.Dataset("nope") != nil {
		t.Fatalf("Dataset lookup: orders=%v customers=%v", orders, customers)
	}
	if got, want := customers.QualifiedTable(), `"sales"."Customer List"`; got != want {
		t.Errorf("QualifiedTable = %s, want %s", got, want)
	}
	if got, want := orders.RetentionPredicate(), "deleted_at IS NOT NULL"; got != want {
		t.Errorf("RetentionPredicate = %q, want %q", got, want)
	}
	cols, where, ok := orders.RefreshSelect()
	if !ok || !reflect.DeepEqual(cols, []string{"id", "status", "updated_at"}) || where != "status <> 'draft'" {
		t.Errorf("RefreshSelect = %q, %q, %v", cols, where, ok)
	}
	cols, where, ok = customers.RefreshSelect()
	if !ok || !reflect.DeepEqual(cols, []string{"id", "tenant_id", "Display Name"}) || where != "" {
		t.Errorf("RefreshSelect = %q, %q, %v", cols, where, ok)
	}
	if _, _, ok := cfg.Dataset("products").RefreshSelect(); ok {
		t.Errorf("RefreshSelect without refresh_sql reported ok")
	}
}

// noEnv is an empty environment.
func noEnv(string) (string, bool) { return "", false }

// TestParse_AuthBlock reads the auth block's keys.
func TestParse_AuthBlock(t *testing.T) {
	cfg, err := Parse([]byte("origin:\n  dsn: host=localhost\nauth:\n  mode: origin\n  cache_ttl: 30s\n  max_stale: 0s\n  persist: true\n  origin_idle_timeout: 0s\n"), "a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Auth{Mode: AuthOrigin, CacheTTL: 30 * time.Second, MaxStale: 0, Persist: true}); cfg.Auth != want {
		t.Fatalf("auth = %+v, want %+v", cfg.Auth, want)
	}
	if cfg, err = Parse([]byte("origin:\n  dsn: host=localhost\nauth:\n  mode: proxy\n"), "a.yaml"); err != nil || cfg.Auth.Mode != AuthProxy {
		t.Fatalf("mode: proxy: %+v %v", cfg.Auth, err)
	}
	if _, err = Parse([]byte("origin:\n  dsn: host=localhost\nauth:\n  mode: bogus\n"), "a.yaml"); err == nil || !strings.Contains(err.Error(), "auth.mode") {
		t.Fatalf("mode: bogus: %v", err)
	}
}

func TestParse_SnapshotsTrigger(t *testing.T) {
	doc := func(acc string) []byte {
		return []byte("origin:\n  dsn: host=localhost\ndatasets:\n  - from: postgres:public.t\n    acceleration:\n      primary_key: id\n" + acc)
	}
	for _, tc := range []struct {
		acc   string
		trig  string
		every time.Duration
		err   string
	}{
		{acc: "", trig: SnapshotsTriggerRefresh},
		{acc: "      refresh_mode: changes\n", trig: SnapshotsTriggerInterval, every: DefaultSnapshotsInterval},
		{acc: "      snapshots_trigger: time_interval\n      snapshots_trigger_threshold: 30s\n", trig: SnapshotsTriggerInterval, every: 30 * time.Second},
		{acc: "      refresh_mode: changes\n      snapshots_trigger: refresh_complete\n", err: "refresh_complete never fires with refresh_mode: changes"},
		{acc: "      snapshots_trigger_threshold: 5m\n", err: "has no effect with snapshots_trigger: refresh_complete"},
		{acc: "      snapshots_trigger: hourly\n", err: `"hourly" is not one of refresh_complete, time_interval`},
	} {
		cfg, err := Parse(doc(tc.acc), "a.yaml")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want %q", tc.acc, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.acc, err)
			continue
		}
		if trig, every := cfg.Datasets[0].Acceleration.SnapshotTrigger(); trig != tc.trig || every != tc.every {
			t.Errorf("%q: trigger %s every %v, want %s every %v", tc.acc, trig, every, tc.trig, tc.every)
		}
	}
}

// The snapshots block's location and params are checked at validate, not
// first at run.
func TestParse_SnapshotsLocation(t *testing.T) {
	doc := func(block string) []byte {
		return []byte("origin:\n  dsn: host=localhost\nsnapshots:\n  enabled: true\n" + block)
	}
	for _, tc := range []struct{ block, err string }{
		{block: "  location: s3://bucket/p/\n  params:\n    s3_endpoint: http://127.0.0.1:7070\n    s3_path_style: true\n"},
		{block: "  location: file:///var/snaps\n"},
		{block: "  location: gs://bucket/p\n", err: "is not a file:// or s3:// URL"},
		{block: "  location: s3:///p\n", err: "names no bucket"},
		{block: "  location: file://\n", err: "names no directory"},
		{block: "  location: file:///d\n  params:\n    s3_region: x\n", err: "a file:// location takes none"},
		{block: "  location: s3://b/\n  params:\n    s3_endpiont: x\n", err: `snapshots.params.s3_endpiont: is not a snapshot parameter`},
		{block: "  location: s3://b/\n  params:\n    s3_auth: anonymous\n", err: `"anonymous" is not key, iam_role or public`},
		{block: "  location: s3://b/\n  params:\n    s3_path_style: yes\n", err: `"yes" is not true or false`},
	} {
		_, err := Parse(doc(tc.block), "a.yaml")
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%q: %v, want %q", tc.block, err, tc.err)
		}
	}
}

func TestParse_ResultsCache(t *testing.T) {
	doc := func(block string) []byte {
		return []byte("origin:\n  dsn: host=localhost\nruntime:\n  results_cache:\n" + block)
	}
	for _, tc := range []struct {
		block string
		want  ResultsCache
		err   string
	}{
		{block: "    enabled: false\n", want: ResultsCache{MaxBytes: DefaultResultsCacheBytes, MaxEntryBytes: DefaultResultsCacheEntryBytes, Line: 5}},
		{block: "    max_bytes: 1GB\n    max_entry_bytes: 100KB\n", want: ResultsCache{Enabled: true, MaxBytes: 1e9, MaxEntryBytes: 100e3, Line: 5}},
		{block: "    max_bytes: 64\n", err: "not a size"},
		{block: "    max_bytes: lots\n", err: "not a size"},
		{block: "    max_bytes: 0MiB\n", err: "must be larger than zero"},
		{block: "    max_bytes: 512KiB\n", err: "is larger than max_bytes"},
		{block: "    max_entry_bytes: 2MiB\n", err: "larger answers are streamed"},
		{block: "    max_byte: 1MiB\n", err: "max_byte"},
	} {
		cfg, err := Parse(doc(tc.block), "a.yaml")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want %q", tc.block, err, tc.err)
			}
			continue
		}
		if err != nil || cfg.Runtime.ResultsCache != tc.want {
			t.Errorf("%q: %v %+v, want %+v", tc.block, err, cfg.Runtime.ResultsCache, tc.want)
		}
	}
}

// refresh_mode: caching: its freshness defaults (30 s fresh, as long
// again stale while revalidated, 10 minutes through an origin outage),
// given values kept, 0s accepted, and the keys refused in other modes.
func TestParse_CachingDefaults(t *testing.T) {
	base := "origin:\n  dsn: host=localhost\ndatasets:\n  - from: postgres:public.t\n    acceleration:\n"
	cfg, err := Parse([]byte(base+"      refresh_mode: caching\n"), "a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Datasets[0].Acceleration
	if a.RefreshCheckInterval != DefaultCachingTTL || a.CachingStaleWhileRevalidate != DefaultCachingTTL || a.CachingStaleIfError != DefaultCachingStaleIfError {
		t.Errorf("defaults: %v %v %v", a.RefreshCheckInterval, a.CachingStaleWhileRevalidate, a.CachingStaleIfError)
	}
	cfg, err = Parse([]byte(base+"      refresh_mode: caching\n      refresh_check_interval: 5s\n      caching_stale_while_revalidate: 0s\n      caching_stale_if_error: 1h\n"), "a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a = cfg.Datasets[0].Acceleration
	if a.RefreshCheckInterval != 5*time.Second || a.CachingStaleWhileRevalidate != 0 || a.CachingStaleIfError != time.Hour {
		t.Errorf("given: %v %v %v", a.RefreshCheckInterval, a.CachingStaleWhileRevalidate, a.CachingStaleIfError)
	}
	if _, err := Parse([]byte(base+"      refresh_mode: full\n      caching_stale_if_error: 1h\n"), "a.yaml"); err == nil ||
		!strings.Contains(err.Error(), "caching_stale_if_error: has no effect with refresh_mode: full") {
		t.Errorf("caching_stale_if_error with full: %v", err)
	}
}

func TestParse_DuckDB(t *testing.T) {
	doc := func(block string) []byte {
		return []byte("origin:\n  dsn: host=localhost\nruntime:\n  duckdb:\n" + block)
	}
	for _, tc := range []struct {
		block string
		want  DuckDB
		err   string
	}{
		{block: "    memory_limit: 4GiB\n", want: DuckDB{MemoryLimit: 4 << 30, Line: 5}},
		{block: "    temp_directory: /var/tmp/pgaccel\n", want: DuckDB{TempDirectory: "/var/tmp/pgaccel", Line: 5}},
		{block: "    memory_limit: 1MiB\n", err: "must be at least 64MiB"},
		{block: "    memory_limit: plenty\n", err: "not a size"},
		{block: "    memory_limt: 1GiB\n", err: "memory_limit"},
	} {
		cfg, err := Parse(doc(tc.block), "a.yaml")
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want %q", tc.block, err, tc.err)
			}
			continue
		}
		if err != nil || cfg.Runtime.DuckDB != tc.want {
			t.Errorf("%q: %v %+v, want %+v", tc.block, err, cfg.Runtime.DuckDB, tc.want)
		}
	}
}
