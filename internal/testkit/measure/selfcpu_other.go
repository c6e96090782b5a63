//go:build !unix

package measure

import "time"

// SelfCPU is 0 where getrusage(2) is missing: no CPU time is reported.
func SelfCPU() time.Duration { return 0 }
