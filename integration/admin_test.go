package integration

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
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
