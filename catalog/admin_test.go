package catalog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadAdmin_IgnoresProblemsOutsideAdmin(t *testing.T) {
	t.Setenv("PGACCEL_TEST_ADMIN_TOKEN", "s3cret")
	for _, c := range []struct {
		name, body       string
		wantListen, want string // want: "" for no error, else a substring of it
		wantToken        string
	}{
		{name: "unset env in origin.dsn",
			body:       "origin:\n  dsn: ${env:PGACCEL_TEST_UNSET_DSN}\nadmin:\n  listen: 127.0.0.1:9999\n  token: ${env:PGACCEL_TEST_ADMIN_TOKEN}\n",
			wantListen: "127.0.0.1:9999", wantToken: "s3cret"},
		{name: "no admin block", body: "datasets:\n  - from: mysql:x\n", wantListen: DefaultAdminListen},
		{name: "unset env in admin.token",
			body: "origin:\n  dsn: postgres://x@h/db\nadmin:\n  token: ${env:PGACCEL_TEST_UNSET_TOKEN}\n", want: "admin.token"},
		{name: "bad admin.listen", body: "admin:\n  listen: nowhere\n", want: "admin.listen"},
		{name: "unknown admin key", body: "admin:\n  tokn: x\n", want: "tokn"},
		{name: "syntax error", body: "admin: [\n", want: "bad.yaml"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.yaml")
			if err := os.WriteFile(path, []byte(c.body), 0o600); err != nil {
				t.Fatal(err)
			}
			a, err := LoadAdmin(path)
			if c.want != "" {
				var ve *ValidationError
				if !errors.As(err, &ve) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("LoadAdmin: want a *ValidationError naming %q, got %v", c.want, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadAdmin: %v", err)
			}
			if a.Listen != c.wantListen || a.Token != c.wantToken {
				t.Errorf("LoadAdmin = %+v, want listen %q token %q", a, c.wantListen, c.wantToken)
			}
		})
	}
	if _, err := LoadAdmin(filepath.Join(t.TempDir(), "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadAdmin of a missing file: %v", err)
	}
}
