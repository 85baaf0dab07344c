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
// read.
func (e *Engine) MemoryLimit(ctx context.Context) int64 {
	var n int64
	if err := e.db.QueryRowContext(ctx, "SELECT value::BIGINT FROM duckdb_settings() WHERE name = 'max_memory'").Scan(&n); err != nil {
		return -1
	}
	return n
}
