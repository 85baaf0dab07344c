package accelerator

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
)

// MachineMemory is the memory this process may use, in bytes: the
// machine's (MemTotal) or, when lower, its cgroup's limit (v2 memory.max,
// v1 memory.limit_in_bytes). 0 when it cannot be read.
func MachineMemory() int64 {
	var total int64
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
				if err == nil {
					total = kb << 10
				}
				break
			}
		}
		f.Close()
	}
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err == nil && n > 0 && (total == 0 || n < total) {
			total = n
		}
	}
	return total
}

// MemoryBytes is the memory DuckDB holds now (duckdb_memory(): its buffer
// pool, which memory_limit bounds), -1 when it cannot be read.
func (e *Engine) MemoryBytes(ctx context.Context) int64 {
	var n int64
	if err := e.db.QueryRowContext(ctx, "SELECT coalesce(sum(memory_usage_bytes), 0)::BIGINT FROM duckdb_memory()").Scan(&n); err != nil {
		return -1
	}
	return n
}

// MemoryLimit is DuckDB's memory_limit in bytes, -1 when it cannot be
// read. DuckDB shows it rounded ("11.7 GiB"), so it is exact to that.
func (e *Engine) MemoryLimit(ctx context.Context) int64 {
	var v string
	if err := e.db.QueryRowContext(ctx, "SELECT value FROM duckdb_settings() WHERE name = 'max_memory'").Scan(&v); err != nil {
		return -1
	}
	return parseDuckDBSize(v)
}

// parseDuckDBSize reads a size as DuckDB prints one ("11.7 GiB", "512.0
// MiB", "0 bytes"), -1 when it cannot.
func parseDuckDBSize(s string) int64 {
	num, unit, ok := strings.Cut(strings.TrimSpace(s), " ")
	f, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || f < 0 {
		return -1
	}
	shift := map[string]uint{"bytes": 0, "KiB": 10, "MiB": 20, "GiB": 30, "TiB": 40, "PiB": 50}
	if sh, ok := shift[unit]; ok {
		return int64(f * float64(uint64(1)<<sh))
	}
	dec := map[string]float64{"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15}
	if m, ok := dec[unit]; ok {
		return int64(f * m)
	}
	return -1
}
