package testwait

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestContextEndsBeforeTheBinary(t *testing.T) {
	ctx, cancel := Context(t)
	d, ok := t.Deadline()
	got, has := ctx.Deadline()
	if ok != has || (ok && !got.Before(d)) {
		t.Errorf("context deadline %v (%v), test binary's %v (%v)", got, has, d, ok)
	}
	cancel()
	if ctx.Err() == nil {
		t.Error("cancel did not end the context")
	}
}

func TestMargin(t *testing.T) {
	for _, c := range []struct{ left, want time.Duration }{
		{30 * time.Minute, time.Minute},
		{5 * time.Minute, 30 * time.Second},
		{0, 0},
	} {
		if got := margin(c.left); got != c.want {
			t.Errorf("margin(%v) = %v, want %v", c.left, got, c.want)
		}
	}
}

func TestPoll(t *testing.T) {
	n := 0
	if err := Poll(t.Context(), time.Millisecond, func() bool { n++; return n == 3 }); err != nil || n != 3 {
		t.Errorf("Poll: %v after %d calls, want nil after 3", err, n)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := Poll(ctx, time.Millisecond, func() bool { return false }); !errors.Is(err, context.Canceled) {
		t.Errorf("Poll on an ended context: %v", err)
	}
	For(t, "a condition that holds", func() bool { return true })
}

func TestContextOutlivesTheTestsOwn(t *testing.T) {
	var ctx context.Context
	var cancel context.CancelFunc
	t.Run("sub", func(t *testing.T) {
		ctx, cancel = Context(t)
		t.Cleanup(func() {
			if ctx.Err() != nil {
				t.Errorf("the context ended before the cleanups: %v", ctx.Err())
			}
		})
	})
	cancel()
}

func TestDeadline(t *testing.T) {
	_, ok := t.Deadline()
	if d := Deadline(t); d.IsZero() == ok {
		t.Errorf("Deadline %v with a test deadline: %v", d, ok)
	}
}

// A Body's bytes come once it is released, not before; releasing twice
// is no fault.
func TestBody(t *testing.T) {
	src := &countingReader{r: strings.NewReader("bytes")}
	b := NewBody(src)
	got := make(chan string, 1)
	go func() {
		data, _ := io.ReadAll(b)
		got <- string(data)
	}()
	<-b.Started()
	// Started is closed before the first read of the source, which then
	// waits for the release.
	if n := src.reads.Load(); n != 0 {
		t.Fatalf("the source was read %d times before the release", n)
	}
	select {
	case s := <-got:
		t.Fatalf("read %q before the release", s)
	default:
	}
	b.Release()
	b.Release()
	if s := <-got; s != "bytes" {
		t.Errorf("read %q", s)
	}
}

// countingReader counts the reads of r.
type countingReader struct {
	r     io.Reader
	reads atomic.Int32
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads.Add(1)
	return c.r.Read(p)
}
