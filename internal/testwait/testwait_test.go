package testwait

import (
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
