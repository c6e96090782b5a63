package workspace

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/codeport/codeport/port"
)

func TestQuotaReserveRelease(t *testing.T) {
	q := NewQuota(100)
	if q.Limit() != 100 {
		t.Fatalf("Limit = %d, want 100", q.Limit())
	}
	if err := q.Reserve(60); err != nil {
		t.Fatalf("Reserve(60): %v", err)
	}
	err := q.Reserve(41)
	if !errors.Is(err, port.ErrFileTooLarge) {
		t.Fatalf("Reserve(41) = %v, want ErrFileTooLarge", err)
	}
	var qe *QuotaError
	if !errors.As(err, &qe) || qe.Limit != 100 || qe.Used != 60 || qe.Requested != 41 {
		t.Fatalf("Reserve(41) error = %#v, want QuotaError{100, 60, 41}", err)
	}
	if !strings.Contains(err.Error(), "100 bytes") {
		t.Errorf("error %q does not mention the limit", err)
	}
	if q.Used() != 60 {
		t.Fatalf("Used after refusal = %d, want 60", q.Used())
	}
	if q.Refusals() != 1 {
		t.Errorf("Refusals = %d, want 1", q.Refusals())
	}
	if err := q.Reserve(40); err != nil {
		t.Fatalf("Reserve(40) to the limit: %v", err)
	}
	if q.Used() != 100 {
		t.Fatalf("Used = %d, want 100", q.Used())
	}
	for _, n := range []int64{0, -5} {
		if err := q.Reserve(n); err != nil {
			t.Errorf("Reserve(%d) at the limit = %v, want nil", n, err)
		}
	}
	q.Release(30)
	if q.Used() != 70 {
		t.Fatalf("Used after Release(30) = %d, want 70", q.Used())
	}
	q.Release(-10)
	if q.Used() != 70 {
		t.Fatalf("Used after Release(-10) = %d, want 70", q.Used())
	}
	q.Release(1000)
	if q.Used() != 0 {
		t.Fatalf("Used after over-release = %d, want 0", q.Used())
	}
}

func TestQuotaUnlimited(t *testing.T) {
	for _, limit := range []int64{0, -1} {
		q := NewQuota(limit)
		if q.Limit() != 0 {
			t.Errorf("NewQuota(%d).Limit() = %d, want 0", limit, q.Limit())
		}
		if err := q.Reserve(1 << 50); err != nil {
			t.Errorf("unlimited Reserve: %v", err)
		}
		if got := q.reserveUpTo(10); got != 10 {
			t.Errorf("unlimited reserveUpTo(10) = %d", got)
		}
		if q.Used() != 1<<50+10 {
			t.Errorf("Used = %d", q.Used())
		}
	}
}

func TestQuotaReserveUpTo(t *testing.T) {
	q := NewQuota(10)
	if got := q.reserveUpTo(4); got != 4 {
		t.Fatalf("reserveUpTo(4) = %d", got)
	}
	if got := q.reserveUpTo(10); got != 6 {
		t.Fatalf("reserveUpTo(10) with 6 free = %d, want 6", got)
	}
	if got := q.reserveUpTo(1); got != 0 {
		t.Fatalf("reserveUpTo(1) when full = %d, want 0", got)
	}
	if q.Used() != 10 {
		t.Fatalf("Used = %d, want 10", q.Used())
	}
	q.adjust(5, 2) // reserved 5, used 2
	if q.Used() != 7 {
		t.Fatalf("Used after adjust(5, 2) = %d, want 7", q.Used())
	}
	q.adjust(0, 4) // bytes already on disk are charged even over the limit
	if q.Used() != 11 {
		t.Fatalf("Used after adjust(0, 4) = %d, want 11", q.Used())
	}
}

func TestQuotaOpenFileTracking(t *testing.T) {
	q := NewQuota(0)
	q.charge(30)
	k := fileKey{dev: 1, ino: 2}
	q.fileOpened(k)
	q.fileOpened(k)
	if !q.isOpen(k) {
		t.Fatal("isOpen = false after fileOpened")
	}
	q.fileRemoved(k, 10) // removed while open: stays charged
	if q.Used() != 30 {
		t.Fatalf("Used after removing an open file = %d, want 30", q.Used())
	}
	q.fileClosed(k, 12)
	if q.Used() != 30 {
		t.Fatalf("Used after first close = %d, want 30", q.Used())
	}
	q.fileClosed(k, 12) // last close releases the current size
	if q.Used() != 18 {
		t.Fatalf("Used after last close = %d, want 18", q.Used())
	}
	if q.isOpen(k) {
		t.Fatal("isOpen = true after last close")
	}
	q.fileRemoved(k, 8) // not open: released at once
	if q.Used() != 10 {
		t.Fatalf("Used after removing a closed file = %d, want 10", q.Used())
	}
	q.fileClosed(fileKey{dev: 9, ino: 9}, 5) // unknown: ignored
	if q.Used() != 10 {
		t.Fatalf("Used after closing an unknown file = %d, want 10", q.Used())
	}
	// Files without an inode number are not tracked.
	z := fileKey{}
	q.fileOpened(z)
	if q.isOpen(z) {
		t.Fatal("a file without inode number is tracked")
	}
	q.fileRemoved(z, 10)
	if q.Used() != 0 {
		t.Fatalf("Used = %d, want 0", q.Used())
	}
}

func TestQuotaConcurrent(t *testing.T) {
	const limit, workers, tries = 5000, 50, 200
	q := NewQuota(limit)
	var ok atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range tries {
				if q.Reserve(1) == nil {
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if ok.Load() != limit || q.Used() != limit {
		t.Fatalf("succeeded %d, Used %d, want %d each", ok.Load(), q.Used(), limit)
	}
	if q.Refusals() != workers*tries-limit {
		t.Fatalf("Refusals = %d, want %d", q.Refusals(), workers*tries-limit)
	}
	for range workers {
		wg.Go(func() {
			for range limit / workers {
				q.Release(1)
			}
		})
	}
	wg.Wait()
	if q.Used() != 0 {
		t.Fatalf("Used after releasing all = %d, want 0", q.Used())
	}
}
