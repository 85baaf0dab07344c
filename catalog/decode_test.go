package catalog

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// envOf returns a lookup function over vars.
func envOf(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

func TestExpandEnv_References(t *testing.T) {
	env := envOf(map[string]string{"USER": "app", "EMPTY": "", "PASS": "s3cr3t"})
	tests := []struct {
		name, in, want string
		problem        string // part of the one expected problem, "" for none
	}{
		{"no reference", "plain value", "plain value", ""},
		{"one reference", "${env:USER}", "app", ""},
		{"references inside text", "postgres://${env:USER}:${env:PASS}@db/shop", "postgres://app:s3cr3t@db/shop", ""},
		{"empty variable", "x${env:EMPTY}y", "xy", ""},
		{"escaped", "cost $${env:USER}", "cost ${env:USER}", ""},
		{"bare dollar", "$5 and $USER", "$5 and $USER", ""},
		{"unset variable", "${env:NOPE}", "", "environment variable NOPE is not set"},
		{"secrets reference", "${secrets:PG_PASSWORD}", "", "${secrets:PG_PASSWORD} is not supported"},
		{"reference without prefix", "${USER}", "", "${USER} is not supported"},
		{"bad variable name", "${env:1X}", "", "does not name an environment variable"},
		{"unterminated", "${env:USER", "", "unterminated ${ reference"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problems := expandEnv(tt.in, env)
			if tt.problem == "" {
				if len(problems) > 0 || got != tt.want {
					t.Errorf("expandEnv(%q) = %q, %v; want %q", tt.in, got, problems, tt.want)
				}
				return
			}
			if len(problems) != 1 || !strings.Contains(problems[0].message, tt.problem) || problems[0].fix == "" {
				t.Errorf("expandEnv(%q) problems = %+v, want one containing %q with a fix", tt.in, problems, tt.problem)
			}
		})
	}
}

func TestParse_EnvInTypedValues(t *testing.T) {
	env := envOf(map[string]string{"ATTEMPTS": "5", "INTERVAL": "1d", "RETRY": "false", "PG_PASSWORD": "hunter2"})
	src := `origin:
  dsn: host=db password=${env:PG_PASSWORD}
datasets:
  - from: postgres:orders
    acceleration:
      refresh_check_interval: ${env:INTERVAL}
      refresh_retry_enabled: ${env:RETRY}
      refresh_retry_max_attempts: ${env:ATTEMPTS}
`
	cfg, err := parse([]byte(src), "pgaccel.yaml", env)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	a := cfg.Datasets[0].Acceleration
	if a.RefreshCheckInterval != 24*time.Hour || a.RefreshRetryEnabled || a.RefreshRetryMaxAttempts != 5 {
		t.Errorf("acceleration = %+v", a)
	}
	if cfg.Origin.DSN != "host=db password=hunter2" {
		t.Errorf("DSN = %q", cfg.Origin.DSN)
	}
}

func TestParse_SecretsNeverInProblems(t *testing.T) {
	const secret = "hunter2"
	env := envOf(map[string]string{"PG_PASSWORD": secret})
	tests := []struct{ name, src string }{
		{"bad DSN URL", "origin:\n  dsn: postgres://app:" + secret + "@db:notaport/shop\n"},
		{"bad DSN from env", "origin:\n  dsn: postgres://app:${env:PG_PASSWORD}@db:x/shop\n"},
		{"bad DSN keywords", "origin:\n  dsn: host=db password=" + secret + " sslmode=sometimes\n"},
		{"env value in a bool", "origin: {dsn: host=db}\ndatasets:\n  - from: postgres:t\n    acceleration:\n      enabled: ${env:PG_PASSWORD}\n"},
		{"env value in a duration", "origin: {dsn: host=db}\ndatasets:\n  - from: postgres:t\n    acceleration:\n      retention_period: ${env:PG_PASSWORD}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse([]byte(tt.src), "pgaccel.yaml", env)
			if err == nil {
				t.Fatal("parse succeeded, want a problem")
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("problem reveals the secret: %v", err)
			}
		})
	}
}

func TestParse_AnchorsAndMergeKeys(t *testing.T) {
	src := `origin: {dsn: host=db}
datasets:
  - from: postgres:public.orders
    time_column: updated_at
    acceleration: &defaults
      refresh_mode: append
      refresh_check_interval: 5m
      primary_key: id
  - from: postgres:public.invoices
    time_column: issued_at
    acceleration:
      <<: *defaults
      refresh_check_interval: 1h
`
	cfg, err := parse([]byte(src), "pgaccel.yaml", noEnv)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	a := cfg.Datasets[1].Acceleration
	if a.RefreshMode != RefreshAppend || a.RefreshCheckInterval != time.Hour || len(a.PrimaryKey) != 1 {
		t.Errorf("merged acceleration = %+v", a)
	}
}

func TestParse_ShapeProblems(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []wantProblem
	}{
		{"root is a list", "- a\n- b\n", []wantProblem{{0, "", "origin.dsn", "is required"}, {1, "", "", "must be a block of key: value lines"}}},
		{"two documents", "origin: {dsn: host=db}\n---\nserver: {}\n", []wantProblem{{2, "", "", "more than one YAML document"}}},
		{"datasets is a mapping", "origin: {dsn: host=db}\ndatasets:\n  orders: {}\n", []wantProblem{{3, "", "datasets", "must be a list of datasets"}}},
		{"unknown key with no close match", "origin: {dsn: host=db}\nzzz: 1\n", []wantProblem{{2, "", "zzz", `unknown key "zzz"`}}},
		{"float for a number", "origin: {dsn: host=db}\nserver: {max_message_bytes: 1.5}\n", []wantProblem{{2, "", "server.max_message_bytes", "must be a whole number, got 1.5"}}},
		{"list for a string", "origin: {dsn: [a, b]}\n", []wantProblem{{1, "", "origin.dsn", "must be a single value"}}},
		{"params value is a block", "origin: {dsn: host=db}\ndatasets:\n  - from: postgres:t\n    params:\n      a: {b: c}\n",
			[]wantProblem{{5, "t", "params.a", "must be a single value"}}},
		{"negative duration", "origin: {dsn: host=db}\nserver: {shutdown_grace: -1s}\n", []wantProblem{{2, "", "server.shutdown_grace", "not a duration"}}},
		{"duplicate params key", "origin: {dsn: host=db}\nsnapshots:\n  location: s3://b/s\n  params:\n    s3_region: a\n    s3_region: b\n",
			[]wantProblem{{6, "", "snapshots.params.s3_region", "given twice (first on line 5)"}}},
		{"empty primary key list", "origin: {dsn: host=db}\ndatasets:\n  - from: postgres:t\n    acceleration:\n      primary_key: []\n",
			[]wantProblem{{5, "t", "acceleration.primary_key", "lists no column"}}},
		{"dataset without from or name", "origin: {dsn: host=db}\ndatasets:\n  - acceleration: {enabled: nope}\n",
			[]wantProblem{{3, "", "datasets[0].acceleration.enabled", "must be true or false"}, {3, "", "datasets[0].from", "is required"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse([]byte(tt.src), "pgaccel.yaml", noEnv)
			assertProblems(t, err, tt.want)
		})
	}
}

func TestParse_EmptyFile(t *testing.T) {
	for _, src := range []string{"", "# only a comment\n", "---\n"} {
		_, err := parse([]byte(src), "pgaccel.yaml", noEnv)
		assertProblems(t, err, []wantProblem{{0, "", "origin.dsn", "is required"}})
	}
}

func TestSuggest_CloseKeys(t *testing.T) {
	known := []string{"refresh_mode", "refresh_check_interval", "refresh_cron", "retention_period", "primary_key"}
	tests := []struct{ in, want string }{
		{"refresh-mode", "refresh_mode"},
		{"Refresh_Mode", "refresh_mode"},
		{"refresh_interval", "refresh_check_interval"},
		{"refresh_crn", "refresh_cron"},
		{"primarykey", "primary_key"},
		{"colour", ""},
	}
	for _, tt := range tests {
		if got := suggest(tt.in, known); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParse_AliasLimits(t *testing.T) {
	// Ten levels, each merging ten copies of the level before: 10^9 keys
	// if expanded.
	var bomb strings.Builder
	bomb.WriteString("origin: {dsn: host=db}\ndatasets:\n  - from: postgres:t0\n    acceleration: &l0\n      enabled: true\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&bomb, "  - from: postgres:t%d\n    acceleration: &l%d\n      <<: [", i, i)
		for j := range 10 {
			if j > 0 {
				bomb.WriteString(", ")
			}
			fmt.Fprintf(&bomb, "*l%d", i-1)
		}
		bomb.WriteString("]\n")
	}
	tests := []struct {
		name string
		src  string
		want []wantProblem
	}{
		{"merge of itself", "origin: {dsn: host=db}\ndatasets:\n  - from: postgres:t\n    acceleration: &a\n      <<: *a\n",
			[]wantProblem{{5, "t", "acceleration", "merge keys nest too deeply"}}},
		{"block that contains itself", "origin: {dsn: host=db}\nserver: &s\n  tls: *s\n", []wantProblem{
			{3, "", "server.tls.tls", `unknown key "tls"`},
			{3, "", "server.tls.cert_file", "is required when server.tls is set"},
			{3, "", "server.tls.key_file", "is required when server.tls is set"},
		}},
		{"billion laughs", bomb.String(), []wantProblem{{5, "t6", "acceleration", "expand to too many keys"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse([]byte(tt.src), "pgaccel.yaml", noEnv)
			assertProblems(t, err, tt.want)
		})
	}
}

// server.event_loops: unset is nil (the proxy's default), 0 and a count are
// kept, a negative number is a problem.
func TestParse_EventLoops(t *testing.T) {
	for src, want := range map[string]string{
		"origin: {dsn: host=db}\n":                           "unset",
		"origin: {dsn: host=db}\nserver: {event_loops: 0}\n": "0",
		"origin: {dsn: host=db}\nserver: {event_loops: 3}\n": "3",
	} {
		cfg, err := parse([]byte(src), "pgaccel.yaml", noEnv)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		got := "unset"
		if cfg.Server.EventLoops != nil {
			got = fmt.Sprint(*cfg.Server.EventLoops)
		}
		if got != want {
			t.Errorf("%q: event_loops %s, want %s", src, got, want)
		}
	}
	_, err := parse([]byte("origin: {dsn: host=db}\nserver:\n  event_loops: -1\n"), "pgaccel.yaml", noEnv)
	assertProblems(t, err, []wantProblem{{3, "", "server.event_loops", "must be at least 0, got -1"}})
}

// An admin.token that is written but empty (a variable set to "") is a
// problem: it would leave the admin port without a token.
func TestParse_EmptyAdminToken(t *testing.T) {
	t.Setenv("PGACCEL_TEST_EMPTY_TOKEN", "")
	_, err := Parse([]byte("origin: {dsn: host=db}\nadmin:\n  token: ${env:PGACCEL_TEST_EMPTY_TOKEN}\n"), "pgaccel.yaml")
	assertProblems(t, err, []wantProblem{{3, "", "admin.token", "is empty, which would leave the admin port without a token"}})
	if _, err := Parse([]byte("origin: {dsn: host=db}\nadmin:\n  listen: 127.0.0.1:8091\n"), "pgaccel.yaml"); err != nil {
		t.Errorf("no token: %v", err)
	}
}
