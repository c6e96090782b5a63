//go:build linux

package wasm

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/codeport/codeport/port"
)

// A page the session wrote that is swapped out when its instance is
// recycled is put back too: pagemap shows it swapped, not present.
func TestRecycleResetsSwappedPages(t *testing.T) {
	swaps, err := os.ReadFile("/proc/swaps")
	if err != nil || len(strings.Split(strings.TrimSpace(string(swaps)), "\n")) < 2 {
		t.Skip("this host has no swap: a written page cannot be swapped out")
	}
	a := newTestAdapter(t, func(c Config) Config { return c.WithWarmPool(0, nil) })
	id := newSession(t, a)
	res := run(t, a, id, spoil)
	expect(t, res, res.Stdout, 0, port.OutcomeCompleted)
	s, err := a.d.lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	mem := s.interp.alloc.mem.region[:s.interp.alloc.mem.open]
	if err := unix.Madvise(mem, unix.MADV_PAGEOUT); err != nil {
		t.Skipf("MADV_PAGEOUT: %v", err)
	}
	written, err := s.interp.alloc.writtenPages()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, w := range written {
		if w {
			n++
		}
	}
	if n == 0 {
		t.Fatal("no written page is seen after the page-out")
	}
	recycled := a.d.eng.recycled.Load()
	destroy(t, a, id)
	if a.d.eng.recycled.Load() != recycled+1 {
		t.Fatal("not recycled")
	}
	checkIsImage(t, a.d.eng)
}
