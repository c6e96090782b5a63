//go:build unix

package measure

import (
	"syscall"
	"time"
)

// SelfCPU returns the CPU time (user and system) this process has used so
// far, to the microsecond: what a benchmark reports beside wall time,
// which a busy machine stretches while the CPU an operation needs stays
// about the same.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
