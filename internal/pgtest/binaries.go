package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// InstallHint is the command that installs the PostgreSQL server binaries on
// Debian and Ubuntu. It is part of every "not installed" error.
const InstallHint = "apt-get update && apt-get install -y postgresql"

// errNotInstalled marks the error returned when no PostgreSQL server binaries
// can be found.
var errNotInstalled = errors.New("PostgreSQL server binaries not found")

// serverBinaries are the programs a directory must hold to be usable.
var serverBinaries = []string{"initdb", "pg_ctl", "postgres"}

// findBinDir returns the directory holding initdb, pg_ctl and postgres:
// `pg_config --bindir` if it has them, else the highest-versioned
// /usr/lib/postgresql/*/bin, else the directory of the initdb found on PATH.
func findBinDir(ctx context.Context) (string, error) {
	var looked []string

	if out, err := exec.CommandContext(ctx, "pg_config", "--bindir").Output(); err == nil {
		dir := strings.TrimSpace(string(out))
		if hasServerBinaries(dir) {
			return dir, nil
		}
		looked = append(looked, dir+" (pg_config --bindir)")
	} else {
		looked = append(looked, "pg_config --bindir (pg_config not runnable)")
	}

	if dir := highestDebianBinDir(); dir != "" {
		return dir, nil
	}
	looked = append(looked, "/usr/lib/postgresql/*/bin")

	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			if dir := filepath.Dir(real); hasServerBinaries(dir) {
				return dir, nil
			}
		}
	}
	looked = append(looked, "initdb on PATH")

	return "", notInstalledError(looked)
}

// notInstalledError says what is missing, where it was looked for and how to
// install it.
func notInstalledError(looked []string) error {
	return fmt.Errorf("%w (need %s; looked in %s). Install them with: %s (Debian/Ubuntu)",
		errNotInstalled, strings.Join(serverBinaries, ", "), strings.Join(looked, ", "), InstallHint)
}

// hasServerBinaries reports whether dir holds every program in serverBinaries.
func hasServerBinaries(dir string) bool {
	if dir == "" {
		return false
	}
	for _, name := range serverBinaries {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			return false
		}
	}
	return true
}

// highestDebianBinDir returns the usable /usr/lib/postgresql/<version>/bin
// with the highest version, or "".
func highestDebianBinDir() string {
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(matches, func(i, j int) bool {
		return versionKey(matches[i]) > versionKey(matches[j])
	})
	for _, dir := range matches {
		if hasServerBinaries(dir) {
			return dir
		}
	}
	return ""
}

// versionKey turns /usr/lib/postgresql/9.6/bin into 9006 and .../16/bin into
// 16000, so that 16 sorts above 9.6.
func versionKey(binDir string) int {
	v := filepath.Base(filepath.Dir(binDir))
	major, minor, _ := strings.Cut(v, ".")
	ma, _ := strconv.Atoi(major)
	mi, _ := strconv.Atoi(minor)
	return ma*1000 + mi
}

// initdbSupports reports whether `initdb --help` lists flag, so that newer
// conveniences (--no-instructions, PG 14+) are used only where they exist.
func initdbSupports(ctx context.Context, binDir, flag string) bool {
	out, err := exec.CommandContext(ctx, filepath.Join(binDir, "initdb"), "--help").Output()
	return err == nil && bytes.Contains(out, []byte(flag))
}
