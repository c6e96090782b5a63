package measure

import (
	"os"
	"testing"
	"time"
)

func TestCPUCountsThisProcess(t *testing.T) {
	before := CPU(os.Getpid())
	// Burn a little CPU; the clock only moves in 10 ms ticks.
	deadline := time.Now().Add(200 * time.Millisecond)
	n := 0
	for time.Now().Before(deadline) {
		n++
	}
	after := CPU(os.Getpid())
	if after <= before {
		t.Fatalf("CPU did not move: %s then %s (%d spins)", before, after, n)
	}
	if CPU(-1) != 0 {
		t.Fatal("a missing process counts CPU")
	}
}
