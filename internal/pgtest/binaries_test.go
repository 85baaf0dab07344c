package pgtest

import (
	"errors"
	"strings"
	"testing"
)

func TestNotInstalledError_SaysHowToInstall(t *testing.T) {
	err := notInstalledError([]string{"/usr/lib/postgresql/*/bin"})
	if !errors.Is(err, errNotInstalled) {
		t.Errorf("error does not wrap errNotInstalled: %v", err)
	}
	for _, want := range []string{"apt-get update && apt-get install -y postgresql", "initdb", "/usr/lib/postgresql/*/bin"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestVersionKey_OrdersMajorVersions(t *testing.T) {
	tests := []struct{ lower, higher string }{
		{"/usr/lib/postgresql/9.6/bin", "/usr/lib/postgresql/10/bin"},
		{"/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin"},
		{"/usr/lib/postgresql/9.5/bin", "/usr/lib/postgresql/9.6/bin"},
	}
	for _, tt := range tests {
		if versionKey(tt.lower) >= versionKey(tt.higher) {
			t.Errorf("versionKey(%s) >= versionKey(%s)", tt.lower, tt.higher)
		}
	}
}

func TestFindBinDir_FindsInstalledServer(t *testing.T) {
	dir, err := findBinDir(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !hasServerBinaries(dir) {
		t.Errorf("findBinDir returned %s, which lacks the server programs", dir)
	}
}

func TestConnString_EscapesAndSocket(t *testing.T) {
	tests := []struct{ host, user, password, want string }{
		{"127.0.0.1", "app", "p@ss/w:rd", "postgres://app:p%40ss%2Fw%3Ard@127.0.0.1:5432/db?sslmode=disable"},
		{"127.0.0.1", "trustuser", "", "postgres://trustuser@127.0.0.1:5432/db?sslmode=disable"},
		{"/tmp/pgtest-1", "postgres", "", "postgres://postgres@/db?host=%2Ftmp%2Fpgtest-1&port=5432&sslmode=disable"},
	}
	for _, tt := range tests {
		if got := connString(tt.host, 5432, tt.user, tt.password, "db"); got != tt.want {
			t.Errorf("connString(%s, %s) = %s, want %s", tt.host, tt.user, got, tt.want)
		}
	}
}
