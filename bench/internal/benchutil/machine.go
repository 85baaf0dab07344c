package benchutil

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"github.com/pgaccel/pgaccel/app"
)

// CPUModel is the first "model name" of /proc/cpuinfo, "unknown" when
// there is none.
func CPUModel() string {
	return procField("/proc/cpuinfo", "model name", "unknown")
}

// MemTotal is MemTotal of /proc/meminfo in GiB, "unknown" when unread.
func MemTotal() string {
	v := procField("/proc/meminfo", "MemTotal", "")
	var kb int64
	if _, err := fmt.Sscanf(v, "%d kB", &kb); err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
}

// Kernel is the kernel release, "" when unread.
func Kernel() string {
	return strings.TrimSpace(ReadFile("/proc/sys/kernel/osrelease"))
}

// LoadAvg is the 1, 5 and 15 minute load average, "unknown" when unread.
func LoadAvg() string {
	f := strings.Fields(ReadFile("/proc/loadavg"))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// GoVersion is the Go release and platform the benchmark was built with.
func GoVersion() string {
	return runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}

// Revision is `git describe --always --dirty` of the working directory.
func Revision(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "describe", "--always", "--dirty").Output()
	if err != nil {
		return "unknown (not a git checkout)"
	}
	return strings.TrimSpace(string(out))
}

// DuckDBVersion is "DuckDB " and the version a's engine reports, "" when
// it cannot be read.
func DuckDBVersion(ctx context.Context, a *app.App) string {
	rows, err := a.Engine.Query(ctx, "SELECT version()")
	if err != nil {
		return ""
	}
	defer rows.Close()
	if rows.Next() {
		return "DuckDB " + fmt.Sprint(rows.Values()[0])
	}
	return ""
}

// ReadFile is the file's contents, "" when it cannot be read.
func ReadFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

// procField is the value of the first "key: value" line of the file whose
// key is key, fallback when there is none.
func procField(path, key, fallback string) string {
	sc := bufio.NewScanner(strings.NewReader(ReadFile(path)))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return fallback
}

// SelfStatus is a size field of /proc/self/status ("VmRSS", "VmHWM") in
// bytes, 0 when it cannot be read.
func SelfStatus(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || k != field {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
