package integration

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pgaccel/pgaccel/internal/pgtest"
)

// adminPost posts to the admin port and returns the status and message.
func adminPost(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	resp, err := http.Post("http://"+addr+path, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Message string }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("%s: body is not JSON: %v", path, err)
	}
	return resp.StatusCode, body.Message
}

func TestAdmin_OnDemandRefresh(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, "  - from: postgres:public.acc_customers\n  - from: postgres:public.acc_orders\n    acceleration:\n      enabled: false\n")
	before, _ := a.Registry.State("acc_customers")
	mustExec(t, "INSERT INTO acc_customers SELECT g, 'admin ' || g, 'DE', NULL FROM generate_series(1001, 1010) g")
	t.Cleanup(func() { mustExec(t, "DELETE FROM acc_customers WHERE id BETWEEN 1001 AND 1010") })

	code, msg := adminPost(t, a.AdminAddr(), "/v1/datasets/acc_customers/acceleration/refresh")
	if code != http.StatusCreated || msg != "Dataset refresh triggered for acc_customers." {
		t.Fatalf("refresh: %d %q", code, msg)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, _ := a.Registry.State("acc_customers")
		if st.Generation > before.Generation && st.Rows == before.Rows+10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the triggered refresh did not complete: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code, msg := adminPost(t, a.AdminAddr(), "/v1/datasets/nope/acceleration/refresh"); code != http.StatusNotFound || msg == "" {
		t.Errorf("unknown dataset: %d %q", code, msg)
	}
	if code, msg := adminPost(t, a.AdminAddr(), "/v1/datasets/acc_orders/acceleration/refresh"); code != http.StatusBadRequest || !strings.Contains(msg, "not accelerated") {
		t.Errorf("dataset not accelerated: %d %q", code, msg)
	}
}

// adminGet gets path with an optional bearer token and returns the status
// and body.
func adminGet(t *testing.T, addr, path, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestAdmin_ReadinessFollowsReadyState(t *testing.T) {
	mustExec(t, accelSchema)
	mustExec(t, "DROP TABLE IF EXISTS adm_gone; CREATE TABLE adm_gone (id int); INSERT INTO adm_gone VALUES (1)")
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS adm_gone") })

	// A dataset that cannot load keeps /v1/ready at 503 with on_load ...
	a := startAppNoWait(t, "  - from: postgres:public.acc_customers\n  - from: postgres:public.adm_missing\n")
	if err := a.Runner.WaitReady(ctxT(t), "acc_customers"); err != nil {
		t.Fatal(err)
	}
	_ = a.Runner.WaitReady(ctxT(t), "adm_missing")
	if code, body := adminGet(t, a.AdminAddr(), "/v1/ready", ""); code != 503 || body != "not ready" {
		t.Errorf("on_load with a dataset not loaded: %d %q", code, body)
	}
	// ... but not with on_registration, whose queries go to the origin
	// until it loads.
	b := startAppNoWait(t, "  - from: postgres:public.acc_customers\n  - from: postgres:public.adm_missing\n    ready_state: on_registration\n")
	if err := b.Runner.WaitReady(ctxT(t), "acc_customers"); err != nil {
		t.Fatal(err)
	}
	if code, body := adminGet(t, b.AdminAddr(), "/v1/ready", ""); code != 200 || body != "ready" {
		t.Errorf("on_registration: %d %q", code, body)
	}

	// on_schema_resolved: ready once the origin's columns were read, even
	// though the load itself fails (columns n and N, which DuckDB cannot
	// hold side by side).
	mustExec(t, `DROP TABLE IF EXISTS adm_nan; CREATE TABLE adm_nan (id int, n int, "N" int); INSERT INTO adm_nan VALUES (1, 2, 3)`)
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS adm_nan") })
	for _, rs := range []struct {
		state string
		code  int
	}{{"on_schema_resolved", 200}, {"on_load", 503}} {
		s := startAppNoWait(t, "  - from: postgres:public.adm_nan\n    ready_state: "+rs.state+"\n")
		_ = s.Runner.WaitReady(ctxT(t), "adm_nan")
		if st, _ := s.Registry.State("adm_nan"); st.Loaded || !st.SchemaResolved {
			t.Fatalf("adm_nan: %+v", st)
		}
		if code, _ := adminGet(t, s.AdminAddr(), "/v1/ready", ""); code != rs.code {
			t.Errorf("ready_state %s with the schema read and the load failed: %d, want %d", rs.state, code, rs.code)
		}
	}

	// A dataset that has been Ready once keeps the runtime ready when a
	// later refresh fails.
	c := startApp(t, "  - from: postgres:public.adm_gone\n")
	mustExec(t, "DROP TABLE adm_gone")
	if err := c.Runner.Refresh(ctxT(t), "adm_gone"); err == nil {
		t.Fatal("refresh of a dropped table succeeded")
	}
	code, body := adminGet(t, c.AdminAddr(), "/v1/datasets?status=true", "")
	var ds []map[string]any
	if err := json.Unmarshal([]byte(body), &ds); err != nil || code != 200 || len(ds) != 1 {
		t.Fatalf("datasets: %d %s", code, body)
	}
	if ds[0]["status"] != "Error" || ds[0]["from"] != "postgres:public.adm_gone" || ds[0]["acceleration_enabled"] != true ||
		ds[0]["refresh_mode"] != "full" || ds[0]["rows"] != float64(1) || ds[0]["last_refresh"] == nil ||
		!strings.Contains(ds[0]["error_message"].(string), "table not found") {
		t.Errorf("dataset after a failed refresh: %v", ds[0])
	}
	if code, body := adminGet(t, c.AdminAddr(), "/v1/ready", ""); code != 200 || body != "ready" {
		t.Errorf("after Ready once, then Error: %d %q", code, body)
	}
	// Without ?status=true, no status.
	_, body = adminGet(t, c.AdminAddr(), "/v1/datasets", "")
	if strings.Contains(body, `"status"`) || !strings.Contains(body, `"name": "adm_gone"`) {
		t.Errorf("datasets without status=true: %s", body)
	}
	// The status metric.
	_, metrics := adminGet(t, c.AdminAddr(), "/metrics", "")
	for _, want := range []string{`dataset_acceleration_status{dataset="adm_gone",status="Error"} 1`,
		`dataset_acceleration_refresh_errors_total{dataset="adm_gone",reason="schema"} 1`,
		`dataset_acceleration_last_refresh_unix_time_ms{dataset="adm_gone"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestAdmin_TokenAndPatchRefreshSQL(t *testing.T) {
	mustExec(t, accelSchema)
	const token = "s3cr3t-t0ken"
	a := startAppTop(t, "admin:\n  listen: 127.0.0.1:0\n  token: "+token+"\n", "  - from: postgres:public.acc_customers\n", true)
	addr := a.AdminAddr()
	for _, path := range []string{"/v1/datasets", "/v1/datasets?status=true", "/metrics"} {
		if code, _ := adminGet(t, addr, path, ""); code != http.StatusUnauthorized {
			t.Errorf("%s without token: %d", path, code)
		}
		if code, _ := adminGet(t, addr, path, "wrong"); code != http.StatusUnauthorized {
			t.Errorf("%s with a wrong token: %d", path, code)
		}
		if code, _ := adminGet(t, addr, path, token); code != http.StatusOK {
			t.Errorf("%s with the token: %d", path, code)
		}
	}
	for _, path := range []string{"/health", "/v1/ready"} {
		if code, _ := adminGet(t, addr, path, ""); code != http.StatusOK {
			t.Errorf("%s needs no token: %d", path, code)
		}
	}
	before, _ := a.Registry.State("acc_customers")
	if code, _ := adminPost(t, addr, "/v1/datasets/acc_customers/acceleration/refresh"); code != http.StatusUnauthorized {
		t.Errorf("refresh without token: %d", code)
	}
	time.Sleep(200 * time.Millisecond)
	if st, _ := a.Registry.State("acc_customers"); st.Generation != before.Generation {
		t.Errorf("a refresh ran without the token")
	}

	patch := func(body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPatch, "http://"+addr+"/v1/datasets/acc_customers/acceleration", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m struct{ Message string }
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m.Message
	}
	for _, bad := range []struct{ body, want string }{
		{`{"refresh_sql": "SELECT id AS x FROM acc_customers"}`, "not expressions or aliases"},
		{`{"refresh_sql": "SELECT * FROM acc_orders"}`, "not from this dataset"},
		{`{"refresh_sql": "SELECT * FROM acc_customers WHERE id IN (SELECT 1)"}`, "subqueries"},
		{`{"refresh": 1}`, "must be a JSON object"},
	} {
		if code, msg := patch(bad.body); code != http.StatusBadRequest || !strings.Contains(msg, bad.want) {
			t.Errorf("PATCH %s: %d %q, want 400 with %q", bad.body, code, msg, bad.want)
		}
	}
	if code, msg := patch(`{"refresh_sql": "SELECT * FROM acc_customers WHERE id <= 10"}`); code != http.StatusOK {
		t.Fatalf("PATCH: %d %q", code, msg)
	}
	pgtest.WaitFor(t, "the refresh with the new refresh_sql", func() bool {
		st, _ := a.Registry.State("acc_customers")
		return st.Rows == 10
	})
	c := connect(t, appDSN(a, appUser, appPass))
	var n int
	if r := routeOf(t, a, func() {
		if err := c.QueryRow(ctxT(t), "SELECT count(*) FROM acc_customers").Scan(&n); err != nil {
			t.Fatal(err)
		}
	}); r != acc || n != 10 {
		t.Errorf("after PATCH: %d rows via %s", n, r)
	}
}

// pgaccel_client_sessions counts the sessions past authentication.
func TestAdmin_ClientSessionsGauge(t *testing.T) {
	mustExec(t, accelSchema)
	a := startApp(t, "  - from: postgres:public.acc_customers\n")
	sessions := func() float64 {
		mfs, err := a.Metrics.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "pgaccel_client_sessions" {
				return mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		return -1
	}
	c1 := connect(t, appDSN(a, appUser, appPass))
	c2 := connect(t, appDSN(a, appUser, appPass))
	pgtest.WaitFor(t, "two sessions", func() bool { return sessions() == 2 })
	c1.Close(ctxT(t))
	c2.Close(ctxT(t))
	pgtest.WaitFor(t, "no sessions", func() bool { return sessions() == 0 })
}

// TestAdmin_DatasetWithNothingToAccelerate: a dataset none of whose
// columns can be accelerated loads as far as it can (it holds nothing) and
// is Ready, saying so, instead of failing every refresh and keeping
// /v1/ready at 503 for the life of the process; its reads go to the origin.
func TestAdmin_DatasetWithNothingToAccelerate(t *testing.T) {
	mustExec(t, `DROP TABLE IF EXISTS adm_unacc; CREATE TABLE adm_unacc (p point, m money);
		INSERT INTO adm_unacc VALUES (point(1, 2), 1.5), (point(3, 4), 2.5), (NULL, NULL);
		GRANT SELECT ON adm_unacc TO app;`)
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS adm_unacc") })
	a := startAppNoWait(t, "  - from: postgres:public.adm_unacc\n")
	pgtest.WaitFor(t, "/v1/ready 200", func() bool {
		code, _ := adminGet(t, a.AdminAddr(), "/v1/ready", "")
		return code == 200
	})
	if err := a.WaitReady(ctxT(t)); err != nil {
		t.Errorf("WaitReady: %v", err)
	}
	d := datasetStatus(t, a.AdminAddr(), "", "adm_unacc")
	notes, _ := json.Marshal(d["notes"])
	cols, _ := d["columns_not_accelerated"].([]any)
	if d["status"] != "Ready" || d["error_message"] != nil || len(cols) != 2 || !strings.Contains(string(notes), "None of its columns can be accelerated") {
		t.Errorf("status: %v", d)
	}
	c := connect(t, appDSN(a, appUser, appPass))
	if got := strings.Join(mustQuery(t, c, "SELECT count(*) FROM adm_unacc"), ","); got != "3" {
		t.Errorf("count: %s", got)
	}
	if got := lastRoute(t, c, false); !strings.HasPrefix(got, "origin: column_not_accelerated") {
		t.Errorf("route of a read: %q", got)
	}
	// A later refresh keeps it so.
	if err := a.Runner.Refresh(ctxT(t), "adm_unacc"); err != nil {
		t.Errorf("refresh: %v", err)
	}
	if st, _ := a.Registry.State("adm_unacc"); st.Status.Display() != "Ready" || st.Servable() {
		t.Errorf("after a refresh: %+v", st)
	}
}

// adminPostBody posts body to the admin port and returns the status and
// message.
func adminPostBody(t *testing.T, addr, path, body string) (int, string) {
	t.Helper()
	resp, err := http.Post("http://"+addr+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m struct{ Message string }
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("%s: body is not JSON: %v", path, err)
	}
	return resp.StatusCode, m.Message
}

// TestAdmin_FullReloadOfAnAppendDataset: an append refresh never removes
// rows, so after rows are deleted or the table truncated at the origin the
// acceleration holds rows the source no longer has (its status says it
// may); an on-demand full reload, through the admin API or pgaccel
// refresh -full, brings it back in line.
func TestAdmin_FullReloadOfAnAppendDataset(t *testing.T) {
	mustExec(t, `DROP TABLE IF EXISTS adm_log; CREATE TABLE adm_log (id int PRIMARY KEY, v text, at timestamptz);
		INSERT INTO adm_log SELECT g, 'v' || g, timestamptz '2026-01-01 00:00:00+00' + g * interval '1 minute' FROM generate_series(1, 100) g;
		GRANT SELECT ON adm_log TO app;`)
	t.Cleanup(func() { mustExec(t, "DROP TABLE IF EXISTS adm_log") })
	mustExec(t, accelSchema)
	a := startApp(t, `  - from: postgres:public.adm_log
    time_column: at
    acceleration:
      refresh_mode: append
      primary_key: id
  - from: postgres:public.acc_customers
`)
	c := connect(t, appDSN(a, appUser, appPass))
	count := func() string { return strings.Join(mustQuery(t, c, "SELECT count(*) FROM adm_log"), ",") }
	rows := func() int64 { st, _ := a.Registry.State("adm_log"); return st.Rows }
	d := datasetStatus(t, a.AdminAddr(), "", "adm_log")
	notes, _ := json.Marshal(d["notes"])
	if !strings.Contains(string(notes), "may hold rows the source has since deleted or truncated") || !strings.Contains(string(notes), "pgaccel refresh -full adm_log") {
		t.Errorf("notes of an append dataset: %s", notes)
	}
	if d := datasetStatus(t, a.AdminAddr(), "", "acc_customers"); d["notes"] != nil {
		t.Errorf("notes of a full dataset: %v", d["notes"])
	}

	// Deleted at the origin: an append refresh keeps the rows.
	mustExec(t, "DELETE FROM adm_log WHERE id <= 30")
	if err := a.Runner.Refresh(ctxT(t), "adm_log"); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != "100" {
		t.Fatalf("after an append refresh: %s rows, want the 100 it held", got)
	}
	// pgaccel refresh -full reloads it.
	gen := func() uint64 { st, _ := a.Registry.State("adm_log"); return st.Generation }
	before := gen()
	code, out, errOut := cliResult(t, []string{"PGACCEL_ADMIN_TOKEN="}, "refresh", "-admin", a.AdminAddr(), "-full", "adm_log")
	if code != 0 || !strings.Contains(out, "adm_log") || !strings.Contains(out, "full") {
		t.Fatalf("pgaccel refresh -full: exit %d\n%s%s", code, out, errOut)
	}
	pgtest.WaitFor(t, "the full reload", func() bool { return gen() > before })
	if got, n := count(), rows(); got != "70" || n != 70 {
		t.Errorf("after pgaccel refresh -full: %s rows (status %d), want 70", got, n)
	}
	// Truncated and refilled: the admin API's full reload.
	mustExec(t, `TRUNCATE adm_log; INSERT INTO adm_log SELECT g, 'w' || g, timestamptz '2025-01-01 00:00:00+00' + g * interval '1 minute' FROM generate_series(1, 5) g`)
	before = gen()
	if code, msg := adminPostBody(t, a.AdminAddr(), "/v1/datasets/adm_log/acceleration/refresh", `{"refresh_mode": "full"}`); code != http.StatusCreated || !strings.Contains(msg, "adm_log") {
		t.Fatalf("POST refresh_mode full: %d %q", code, msg)
	}
	pgtest.WaitFor(t, "the second full reload", func() bool { return gen() > before })
	if got, n := count(), rows(); got != "5" || n != 5 {
		t.Errorf("after a full reload of the truncated table: %s rows (status %d), want 5", got, n)
	}
	// The next append refresh appends again.
	mustExec(t, "INSERT INTO adm_log VALUES (6, 'new', timestamptz '2025-01-01 01:00:00+00')")
	if err := a.Runner.Refresh(ctxT(t), "adm_log"); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != "6" {
		t.Errorf("an append after the full reload: %s rows, want 6", got)
	}
	// Bodies it refuses.
	for _, body := range []string{`{"refresh_mode": "sideways"}`, `{"refresh_sql": "SELECT 1"}`, `not json`} {
		if code, msg := adminPostBody(t, a.AdminAddr(), "/v1/datasets/adm_log/acceleration/refresh", body); code != http.StatusBadRequest || msg == "" {
			t.Errorf("body %s: %d %q, want 400", body, code, msg)
		}
	}
	if code, msg := adminPostBody(t, a.AdminAddr(), "/v1/datasets/acc_customers/acceleration/refresh", `{"refresh_mode": "append"}`); code != http.StatusBadRequest || !strings.Contains(msg, "refresh_mode") {
		t.Errorf("refresh_mode append for a full dataset: %d %q, want 400", code, msg)
	}
	if code, _ := adminPostBody(t, a.AdminAddr(), "/v1/datasets/acc_customers/acceleration/refresh", `{"refresh_mode": "full"}`); code != http.StatusCreated {
		t.Errorf("refresh_mode full for a full dataset: %d, want 201", code)
	}
}
