package main

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pgaccel/pgaccel/bench/internal/benchutil"
)

// CPU accounting of a step: who used the machine's CPUs while pgbench
// ran. All from /proc and getrusage; clock ticks are taken as 10 ms
// (USER_HZ 100, as on every Linux the project runs on).
const tick = 10 * time.Millisecond

// cpuSnapshot is the CPU time used so far by the machine (every CPU, not
// idle), this process (pgaccel and the probe), its waited children
// (pgbench runs), and the origin (the postmaster with its reaped children,
// and its live ones).
type cpuSnapshot struct {
	machine, self, children, origin time.Duration
	ok                              bool
}

func (a cpuSnapshot) sub(b cpuSnapshot) cpuSnapshot {
	return cpuSnapshot{machine: a.machine - b.machine, self: a.self - b.self, children: a.children - b.children,
		origin: a.origin - b.origin, ok: a.ok && b.ok}
}

// others is the CPU time of everything else on the machine.
func (a cpuSnapshot) others() time.Duration {
	return max(0, a.machine-a.self-a.children-a.origin)
}

// takeCPU reads a snapshot; postmaster is the origin's postmaster pid (0:
// unknown).
func takeCPU(postmaster int) cpuSnapshot {
	s := cpuSnapshot{self: rusage(syscall.RUSAGE_SELF), children: rusage(syscall.RUSAGE_CHILDREN)}
	var okM, okO bool
	s.machine, okM = machineCPU()
	s.origin, okO = treeCPU(postmaster)
	s.ok = okM && okO
	return s
}

func selfCPU() time.Duration { return rusage(syscall.RUSAGE_SELF) }

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// machineCPU is the busy time of every CPU from /proc/stat (user, nice,
// system, irq, softirq, steal).
func machineCPU() (time.Duration, bool) {
	line, _, _ := strings.Cut(benchutil.ReadFile("/proc/stat"), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, false
	}
	var sum int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, false
		}
		sum += v
	}
	return time.Duration(sum) * tick, true
}

// statFields are the fields of /proc/<pid>/stat after the command name:
// [0] is the state, [1] the ppid, [11..14] utime, stime, cutime, cstime.
func statFields(pid int) []string {
	s := benchutil.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 15 {
		return nil
	}
	return f
}

func ticks(f []string, idx ...int) time.Duration {
	var sum int64
	for _, i := range idx {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		sum += v
	}
	return time.Duration(sum) * tick
}

// procCPU is the user+system CPU time of process pid.
func procCPU(pid int) (time.Duration, bool) {
	f := statFields(pid)
	if pid <= 0 || f == nil {
		return 0, false
	}
	return ticks(f, 11, 12), true
}

// treeCPU is the CPU time of pid, its reaped children and its live
// children (one level: the postmaster's backends and workers).
func treeCPU(pid int) (time.Duration, bool) {
	f := statFields(pid)
	if pid <= 0 || f == nil {
		return 0, false
	}
	total := ticks(f, 11, 12, 13, 14)
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	ppid := strconv.Itoa(pid)
	for _, d := range dirs {
		child, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		if cf := statFields(child); cf != nil && cf[1] == ppid {
			total += ticks(cf, 11, 12)
		}
	}
	return total, true
}

// parentOf is the ppid of pid, 0 when unknown.
func parentOf(pid int) int {
	f := statFields(pid)
	if f == nil {
		return 0
	}
	p, _ := strconv.Atoi(f[1])
	return p
}

// waitBackendsGone waits (up to 5 s) until no session of pgbench is left
// at the origin, and a little more for the postmaster to reap them.
func waitBackendsGone(ctx context.Context, conn *pgx.Conn) {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgbench'").Scan(&n); err != nil || n == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
}
