// Package measure reports benchmark samples as medians and 95th
// percentiles, which say more than testing.B's mean on a shared, noisy
// machine, and reads the resident memory and CPU time of processes.
package measure

import (
	"bufio"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Report adds p50 and p95 of samples, in milliseconds, to b's result
// line, named prefix-p50-ms and prefix-p95-ms.
func Report(b *testing.B, prefix string, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	q := func(p float64) float64 {
		i := int(p * float64(len(s)-1))
		return float64(s[i]) / float64(time.Millisecond)
	}
	b.ReportMetric(q(0.50), prefix+"-p50-ms")
	b.ReportMetric(q(0.95), prefix+"-p95-ms")
}

// RSS returns the process's resident set size in bytes, from
// /proc/self/status (0 where that is not available).
func RSS() int64 { return kBField("/proc/self/status", "VmRSS:") }

// PSS returns the process's proportional set size in bytes, from
// /proc/self/smaps_rollup (0 where that is not available). Unlike RSS, it
// counts a page mapped at several addresses of the process (an image that
// many sessions map copy-on-write) once, not once per mapping.
func PSS() int64 { return kBField("/proc/self/smaps_rollup", "Pss:") }

// kBField reads the first line of file starting with name, a figure in
// kB, in bytes.
func kBField(file, name string) int64 {
	f, err := os.Open(file)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), name); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// clockTicks is the unit of /proc/<pid>/stat's CPU times (USER_HZ, 100
// on every Linux architecture Go runs on).
const clockTicks = 100

// CPU returns the CPU time (user and system) the processes pids have used
// so far, from /proc/<pid>/stat; a process that is gone counts nothing.
func CPU(pids ...int) time.Duration {
	var ticks int64
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		// The command name (field 2) may hold spaces; fields count from
		// the last ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		// After ')': state is field 3, so utime (14) and stime (15) are
		// at 11 and 12.
		if len(f) < 13 {
			continue
		}
		u, err1 := strconv.ParseInt(f[11], 10, 64)
		st, err2 := strconv.ParseInt(f[12], 10, 64)
		if err1 == nil && err2 == nil {
			ticks += u + st
		}
	}
	return time.Duration(ticks) * time.Second / clockTicks
}
