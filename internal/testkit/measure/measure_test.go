package measure

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestCPUCountsThisProcess(t *testing.T) {
	before := CPU(os.Getpid())
	// Burn a little CPU; the clock only moves in 10 ms ticks. 200 ms of
	// CPU by the kernel's other count (getrusage), not of wall time, which
	// on a loaded machine may hold less CPU than a tick.
	start := selfCPU(t)
	n := 0
	for selfCPU(t)-start < 200*time.Millisecond {
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

// selfCPU is the CPU time this process has used, user and system, as
// getrusage reports it.
func selfCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestDiskUse(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "b", "f"), make([]byte, 10000), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "g"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	files, bytes := DiskUse(dir)
	if files != 2 || bytes < 10000 {
		t.Fatalf("DiskUse = %d files, %d bytes; want 2 files and at least 10000 bytes", files, bytes)
	}
	if files, bytes := DiskUse(filepath.Join(dir, "missing")); files != 0 || bytes != 0 {
		t.Fatalf("a missing directory: %d files, %d bytes", files, bytes)
	}
}
