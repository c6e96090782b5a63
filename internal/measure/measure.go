// Package measure reports benchmark samples as medians and 95th
// percentiles, which say more than testing.B's mean on a shared, noisy
// machine, and reads the process's resident memory.
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
func RSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
