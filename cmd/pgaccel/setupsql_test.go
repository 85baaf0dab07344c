package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSetupSQL_GrantsTheOriginUser prints the lookup SQL for a config
// and checks it grants EXECUTE to origin.dsn's user (quoted) and to no
// one else, and never prints the DSN's password.
func TestSetupSQL_GrantsTheOriginUser(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "pgaccel.yaml")
	if err := os.WriteFile(cfg, []byte("origin:\n  dsn: postgres://Lookup%20User:s3cret@db.example.com/shop\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := runMain([]string{"setup-sql", "-c", cfg}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	sql := out.String()
	for _, want := range []string{
		`GRANT EXECUTE ON FUNCTION pgaccel_auth.lookup_verifier(text, text) TO "Lookup User";`,
		"REVOKE ALL ON FUNCTION pgaccel_auth.lookup_verifier(text, text) FROM PUBLIC;",
		"SECURITY DEFINER",
		"SET search_path = pg_catalog, pg_temp",
	} {
		if !strings.Contains(sql, want) {
			t.Errorf("setup-sql lacks %q:\n%s", want, sql)
		}
	}
	if strings.Contains(sql+errOut.String(), "s3cret") {
		t.Errorf("setup-sql printed the password")
	}
}
