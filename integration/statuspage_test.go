package integration

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgaccel/pgaccel/stmtstats"
)

// chromiumPath finds Debian's Chromium; its absence fails the test with
// the install command.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("Chromium is needed for the status page's browser test: apt-get install chromium (Debian), or put chromium on PATH")
	return ""
}

// chromium runs headless Chromium on url with args and returns its
// stdout.
func chromium(t *testing.T, bin, url string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions", "--disable-dev-shm-usage",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), url)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
	}
	return out.Bytes()
}

// The status page in a real browser: headless Chromium, scripts off,
// loads it from a running pgaccel (with the admin token as the basic-auth
// password) and the test checks what it rendered: the datasets, the
// charts, the top statements, the advice, the hit rates, and no value of
// the workload. The harness saves a screenshot (PGACCEL_SCREENSHOT names
// the file; the README's comes from it).
func TestStatusPage_InChromium(t *testing.T) {
	bin := chromiumPath(t)
	obsTables(t)
	const token = "page-t0ken"
	a := obsApp(t, "admin:\n  listen: 127.0.0.1:0\n  token: "+token+"\n")
	simple := connectSimple(t, appDSN(a, appUser, appPass))
	ext := connect(t, appDSN(a, appUser, appPass))
	for i := range 20 {
		mustExecOn(t, simple, "SELECT sum(amount) FROM obs_orders WHERE note <> '"+obsSecretLiteral+"'")
		var n int64
		if err := ext.QueryRow(ctxT(t), "SELECT count(*) FROM obs_orders WHERE id > $1 AND note <> $2", i, obsSecretParam).Scan(&n); err != nil {
			t.Fatal(err)
		}
		mustExecOn(t, simple, "SELECT count(DISTINCT v) FROM obs_c WHERE v > "+obsSecretNumber)
		mustExecOn(t, simple, "SELECT note FROM obs_orders WHERE id = 7")
	}
	waitDescribed(t, a)

	// Without the token: asked for it.
	resp, err := http.Get("http://" + a.AdminAddr() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic") {
		t.Errorf("the page without the token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}

	// No script: the page has none, and its Content-Security-Policy would
	// refuse one (--dump-dom itself needs scripts on, so they stay on).
	req, _ := http.NewRequest(http.MethodGet, "http://"+a.AdminAddr()+"/", nil)
	req.SetBasicAuth("admin", token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || bytes.Contains(bytes.ToLower(raw), []byte("<script")) || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Errorf("the page as served: %d, CSP %q, script: %v", resp.StatusCode, resp.Header.Get("Content-Security-Policy"), bytes.Contains(bytes.ToLower(raw), []byte("<script")))
	}

	url := "http://admin:" + token + "@" + a.AdminAddr() + "/"
	dom := string(chromium(t, bin, url, "--dump-dom"))
	for _, want := range []string{
		"<h2>Datasets</h2>", "obs_orders", "public.obs_orders", `class="status ready"`, ">2000<",
		"<h2>Routes, last hour</h2>", "<svg", "<polyline", "Statements per minute by route",
		"Top statements by origin time", "SELECT count(DISTINCT v) FROM obs_c WHERE v &gt; $1",
		"Top statements by calls", "SELECT sum(amount) FROM obs_orders WHERE note &lt;&gt; $1",
		"What to accelerate next", "public.obs_c", "from: postgres:public.obs_c",
		"point_read", "Results cache hit rate",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks %q", want)
		}
	}
	for _, secret := range []string{obsSecretLiteral, obsSecretParam, obsSecretNumber} {
		if strings.Contains(dom, secret) {
			t.Errorf("a value (%s) on the page", secret)
		}
	}
	if t.Failed() {
		t.Logf("the DOM:\n%s", dom)
	}

	shot := os.Getenv("PGACCEL_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(os.TempDir(), "pgaccel-status-page.png")
	}
	if abs, err := filepath.Abs(shot); err == nil {
		shot = abs
	}
	chromium(t, bin, url, "--hide-scrollbars", "--window-size=1280,2000", "--screenshot="+shot)
	png, err := os.ReadFile(shot)
	if err != nil || len(png) < 10000 || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot %s: %d bytes, %v", shot, len(png), err)
	}
	t.Logf("screenshot of the status page: %s (%d bytes)", shot, len(png))
}

// statsAll reads every statement of the statistics.
var statsAll = stmtstats.Filter{}
