package port_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/codeport/codeport/port"
)

func TestCapacityErrorMatchesTheSentinel(t *testing.T) {
	err := fmt.Errorf("create: %w", &port.CapacityError{Resource: "sessions", Limit: 4, RetryAfter: 2 * time.Second})
	var ce *port.CapacityError
	if !errors.Is(err, port.ErrAtCapacity) || !errors.As(err, &ce) || ce.RetryAfter != 2*time.Second {
		t.Fatalf("%v", err)
	}
	if errors.Is(err, port.ErrSessionBusy) {
		t.Fatal("a capacity error is not a busy session")
	}
	if !strings.Contains(err.Error(), "4 sessions") {
		t.Fatalf("message %q", err)
	}
}

// A rate limit is a capacity refusal of the caller's own: it matches both
// sentinels, its code is rate_limited (not at_capacity), and the code
// brings back the same kind of error with its retry hint.
func TestRateLimitIsACapacityErrorOfItsOwn(t *testing.T) {
	err := fmt.Errorf("exec: %w", &port.CapacityError{Resource: "executions per second", Limit: 5, RetryAfter: 300 * time.Millisecond, RateLimited: true})
	if !errors.Is(err, port.ErrRateLimited) || !errors.Is(err, port.ErrAtCapacity) {
		t.Fatalf("%v does not match both sentinels", err)
	}
	if c := port.ErrorCode(err); c != "rate_limited" {
		t.Fatalf("code %q", c)
	}
	if !strings.Contains(err.Error(), "rate limited") {
		t.Fatalf("message %q", err)
	}
	if errors.Is(&port.CapacityError{Resource: "sessions"}, port.ErrRateLimited) {
		t.Fatal("the backend's own capacity refusal matches ErrRateLimited")
	}
	back, ok := port.ErrorFromCode("rate_limited", "slow down", 2*time.Second)
	var ce *port.CapacityError
	if !ok || !errors.As(back, &ce) || !ce.RateLimited || ce.RetryAfter != 2*time.Second || back.Error() != "slow down" {
		t.Fatalf("rebuilt as %#v", back)
	}
}

func TestToolKinds(t *testing.T) {
	for _, k := range []port.ToolKind{port.ToolCodeExecution, port.ToolBashCodeExecution, port.ToolTextEditorExecution} {
		if !k.Known() || k.ResultType() != string(k)+"_tool_result" {
			t.Errorf("%s", k)
		}
	}
	if port.ToolKind("code_execution_v2").Known() || port.ToolKind("").Known() {
		t.Fatal("unknown kinds are known")
	}
}

func TestLimitsTimeoutDefaultsAndClamps(t *testing.T) {
	l := port.Limits{DefaultTimeout: 30 * time.Second, MaxTimeout: time.Minute}
	for _, c := range []struct{ asked, want time.Duration }{
		{0, 30 * time.Second}, {-time.Second, 30 * time.Second}, {5 * time.Second, 5 * time.Second},
		{time.Minute, time.Minute}, {time.Hour, time.Minute},
	} {
		if got := l.Timeout(c.asked); got != c.want {
			t.Errorf("Timeout(%v) = %v, want %v", c.asked, got, c.want)
		}
	}
	if got := (port.Limits{DefaultTimeout: time.Second}).Timeout(time.Hour); got != time.Hour {
		t.Errorf("no ceiling: Timeout(1h) = %v", got)
	}
}

func TestLimitsBoundSessionHints(t *testing.T) {
	l := port.Limits{DefaultIdleTimeout: 10 * time.Minute, MaxIdleTimeout: time.Hour, MaxLifetime: 2 * time.Hour}
	for _, c := range []struct{ hint, idle, life time.Duration }{
		{0, 10 * time.Minute, 2 * time.Hour}, {time.Minute, time.Minute, time.Minute},
		{3 * time.Hour, time.Hour, 2 * time.Hour},
	} {
		if got := l.IdleTimeout(c.hint); got != c.idle {
			t.Errorf("IdleTimeout(%v) = %v, want %v", c.hint, got, c.idle)
		}
		if got := l.Lifetime(c.hint); got != c.life {
			t.Errorf("Lifetime(%v) = %v, want %v", c.hint, got, c.life)
		}
	}
}
