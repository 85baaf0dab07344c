package catalog

import (
	"strings"
	"testing"
	"time"
)

// handBuilt returns a valid config as a caller would build it without a
// file, with one dataset at line 7.
func handBuilt() *Config {
	return &Config{
		Origin:  Origin{DSN: "host=db dbname=shop"},
		Server:  Server{Listen: DefaultServerListen, MaxMessageBytes: DefaultMaxMessageBytes, ShutdownGrace: DefaultShutdownGrace},
		Admin:   Admin{Listen: DefaultAdminListen},
		Runtime: Runtime{DataDir: DefaultDataDir, ReadyState: ReadyOnLoad},
		Datasets: []*Dataset{{
			From: "postgres:public.orders", Schema: "public", Table: "orders", Name: "orders",
			ReadyState: ReadyOnLoad,
			Acceleration: Acceleration{
				Enabled: true, Engine: EngineDuckDB, Mode: ModeMemory, RefreshMode: RefreshFull,
				RefreshCheckInterval: 10 * time.Minute, RefreshOnStartup: RefreshOnStartupAuto,
				RefreshRetryEnabled: true, OnZeroResults: ZeroResultsReturnEmpty,
				ReadyState: ReadyOnLoad, Snapshots: SnapshotsDisabled,
			},
			Line: 7,
		}},
	}
}

func TestValidate_HandBuiltConfig(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		want   []wantProblem
	}{
		{"valid", func(*Config) {}, nil},
		{"cron with interval", func(c *Config) { c.Datasets[0].Acceleration.RefreshCron = "0 * * * *" },
			[]wantProblem{{7, "orders", "acceleration.refresh_cron", "cannot be combined with refresh_check_interval"}}},
		{"retries disabled in changes mode", func(c *Config) {
			a := &c.Datasets[0].Acceleration
			a.RefreshMode, a.RefreshCheckInterval, a.RefreshRetryEnabled, a.PrimaryKey = RefreshChanges, 0, false, []string{"id"}
		}, []wantProblem{{7, "orders", "acceleration.refresh_retry_enabled", "has no effect with refresh_mode: changes"}}},
		{"negative values", func(c *Config) {
			a := &c.Datasets[0].Acceleration
			a.RefreshRetryMaxAttempts, a.RetentionCheckInterval = -1, -time.Second
			c.Server.ShutdownGrace = -time.Second
		}, []wantProblem{
			{0, "", "server.shutdown_grace", "must not be negative"},
			{7, "orders", "acceleration.retention_check_interval", "must not be negative"},
			{7, "orders", "acceleration.refresh_retry_max_attempts", "must be at least 1"},
		}},
		{"duckdb_file shared and in memory", func(c *Config) {
			other := *c.Datasets[0]
			other.Name, other.Table, other.From, other.Line = "orders_copy", "orders_copy", "postgres:orders_copy", 20
			c.Datasets[0].Acceleration.Params = map[string]string{paramDuckDBFile: "a.db"}
			other.Acceleration.Params = map[string]string{paramDuckDBFile: "a.db"}
			other.Acceleration.Mode = ModeFile
			c.Datasets = append(c.Datasets, &other)
		}, []wantProblem{
			{7, "orders", "acceleration.params.duckdb_file", "is used only with mode: file"},
			{20, "orders_copy", "acceleration.params.duckdb_file", `a.db is already the file of dataset "orders"`},
		}},
		{"snapshots opt-in without the block", func(c *Config) {
			a := &c.Datasets[0].Acceleration
			a.Mode, a.Snapshots = ModeFile, SnapshotsEnabled
		}, []wantProblem{{7, "orders", "acceleration.snapshots", "needs the top-level snapshots block"}}},
		{"snapshots block disabled", func(c *Config) {
			c.Snapshots = &Snapshots{Enabled: false, BootstrapOnFailureBehavior: SnapshotFailureWarn}
			a := &c.Datasets[0].Acceleration
			a.Mode, a.RefreshMode, a.Snapshots = ModeFile, RefreshSnapshot, SnapshotsEnabled
		}, []wantProblem{{7, "orders", "acceleration.snapshots", "refresh_mode: snapshot needs the top-level snapshots block"}}},
		{"ready_state conflict", func(c *Config) { c.Datasets[0].Acceleration.ReadyState = ReadyOnRegistration },
			[]wantProblem{{7, "orders", "acceleration.ready_state", "conflicts with the dataset's ready_state"}}},
		{"retention_sql names another table", func(c *Config) {
			a := &c.Datasets[0].Acceleration
			a.RetentionCheckEnabled, a.RetentionCheckInterval, a.RetentionSQL = true, time.Hour, "DELETE FROM public.users WHERE true"
		}, []wantProblem{{7, "orders", "acceleration.retention_sql", "deletes from public.users, not from this dataset"}}},
		{"retention_sql by schema and table", func(c *Config) {
			a := &c.Datasets[0].Acceleration
			a.RetentionCheckEnabled, a.RetentionCheckInterval, a.RetentionSQL = true, time.Hour, `DELETE FROM "public".ORDERS WHERE archived`
		}, nil},
		{"refresh_sql names another table", func(c *Config) {
			c.Datasets[0].Acceleration.RefreshSQL = "SELECT * FROM users"
		}, []wantProblem{{7, "orders", "acceleration.refresh_sql", "reads from users, not from this dataset"}}},
		{"unnamed dataset without from", func(c *Config) {
			d := c.Datasets[0]
			d.From, d.Schema, d.Table, d.Name = "", "", "", ""
		}, []wantProblem{{7, "", "datasets[0].from", "is required"}}},
		{"DSN that does not parse", func(c *Config) { c.Origin.DSN = "host=db port=notaport" },
			[]wantProblem{{0, "", "origin.dsn", "is not a valid Postgres connection string"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := handBuilt()
			tt.change(c)
			err := c.Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			assertProblems(t, err, tt.want)
		})
	}
}

// TestParse_Params: a params key pgaccel reads in the other block, or a
// near miss of one it reads, is an error; any other key is a warning; none
// is ignored silently.
func TestParse_Params(t *testing.T) {
	const head = "origin: {dsn: host=db}\ndatasets:\n  - from: postgres:public.orders\n"
	tests := []struct {
		name     string
		body     string
		problems []wantProblem
		warnings []wantProblem
	}{
		{"pg_publication under acceleration.params",
			"    acceleration:\n      refresh_mode: changes\n      primary_key: [id]\n      params:\n        pg_publication: orders_pub\n",
			[]wantProblem{{8, "orders", "acceleration.params.pg_publication", "is read from params.pg_publication, not from acceleration.params.pg_publication: here it would be ignored"}}, nil},
		{"the changes params where they belong",
			"    params:\n      pg_publication: orders_pub\n      pg_replication_slot: orders_slot\n      pg_replication_ready_lag: 1s\n    acceleration:\n      refresh_mode: changes\n      primary_key: [id]\n",
			nil, nil},
		{"duckdb_file in the dataset's params",
			"    params:\n      duckdb_file: /data/orders.db\n",
			[]wantProblem{{5, "orders", "params.duckdb_file", "is read from acceleration.params.duckdb_file"}}, nil},
		{"a typo of a dataset param",
			"    params:\n      pg_publicaton: orders_pub\n",
			[]wantProblem{{5, "orders", "params.pg_publicaton", "is not a parameter pgaccel reads"}}, nil},
		{"a typo of an acceleration param",
			"    acceleration:\n      mode: file\n      params:\n        duckdb_fille: /data/orders.db\n",
			[]wantProblem{{7, "orders", "acceleration.params.duckdb_fille", "is not a parameter pgaccel reads"}}, nil},
		{"the spec's connector params",
			"    params:\n      pg_host: db.example.com\n      pg_db: shop\n",
			nil, []wantProblem{
				{5, "orders", "params.pg_host", "is not a parameter pgaccel reads: it is ignored"},
				{6, "orders", "params.pg_db", "is not a parameter pgaccel reads: it is ignored"},
			}},
		{"an engine param pgaccel does not know",
			"    acceleration:\n      params:\n        duckdb_memory_limit: 1GB\n",
			nil, []wantProblem{{6, "orders", "acceleration.params.duckdb_memory_limit", "is not a parameter pgaccel reads: it is ignored"}}},
		{"duckdb_file, checked and not used",
			"    acceleration:\n      mode: file\n      params:\n        duckdb_file: /data/orders.db\n",
			nil, []wantProblem{{7, "orders", "acceleration.params.duckdb_file", "is checked but not used yet"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse([]byte(head+tt.body), "f.yaml")
			if tt.problems != nil {
				assertProblems(t, err, tt.problems)
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			ws := cfg.Warnings()
			if len(ws) != len(tt.warnings) {
				t.Fatalf("warnings %v, want %d", ws, len(tt.warnings))
			}
			for i, w := range tt.warnings {
				p := ws[i]
				if p.Line != w.line || p.Dataset != w.dataset || p.Key != w.key || !strings.Contains(p.Message, w.message) || p.Fix == "" {
					t.Errorf("warning %d: %s, want line %d %s: %s", i, p.Format("f.yaml"), w.line, w.key, w.message)
				}
			}
		})
	}
}
