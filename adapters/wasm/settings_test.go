package wasm

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codeport/codeport/internal/hostmem"
	"github.com/codeport/codeport/internal/testkit/testcache"
	"github.com/codeport/codeport/internal/testkit/testwait"

	"github.com/codeport/codeport/port"
)

// A Config's settings reach a subprocess worker as JSON (the Settings,
// not the Config, which holds them unexported): every one set with a With
// method survives the trip.
func TestSettingsCrossAProcessBoundaryAsJSON(t *testing.T) {
	in := NewConfig().WithCompilationCacheDir("/cache").WithSessionsDir("/s").
		WithTimeouts(3*time.Second, 9*time.Second).WithMemoryLimit(96<<20).WithOutputLimit(1000).
		WithSourceLimit(2000).WithWorkspaceLimit(3000).WithFileLimit(2500).WithMaxSessions(3).
		WithSessionLifetimes(time.Minute, 2*time.Minute, 3*time.Minute).WithRetryAfter(7*time.Second).
		WithWarmPool(1, []string{"json"}).WithWarmPoolRefill(0).WithInlineImages(3, 5000)
	b, err := json.Marshal(in.Settings())
	if err != nil {
		t.Fatal(err)
	}
	out := DefaultSettings()
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in.Settings(), out) {
		t.Errorf("round trip changed the settings:\n in  %+v\n out %+v", in.Settings(), out)
	}
	if err := json.Unmarshal([]byte(`{"timeout":"soon"}`), &out); err == nil {
		t.Error("a malformed duration was accepted")
	}
}

// The inline-image bound is refused out of its range, with its name.
func TestInlineImageSettingsAreChecked(t *testing.T) {
	for _, c := range []struct {
		n     int
		bytes int64
	}{{-1, 1 << 20}, {8, -1}, {8, 65 << 20}} {
		err := NewConfig().WithInlineImages(c.n, c.bytes).Settings().Validate()
		if err == nil || !strings.Contains(err.Error(), "inline-images must be 0 or more, inline-image-bytes from 0 to 64MiB") {
			t.Errorf("%d images, %d bytes: %v", c.n, c.bytes, err)
		}
	}
	if err := NewConfig().WithInlineImages(0, 0).Settings().Validate(); err != nil {
		t.Errorf("no inline images: %v", err)
	}
}

// A refill of 0 fills the pool once: WaitWarm returns when it is full, the
// first session is a hit, and no interpreter is booted after it.
func TestWarmPoolFilledOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	a := newTestAdapter(t, func(c Config) Config {
		return c.WithWarmPool(1, []string{"json"}).WithWarmPoolRefill(0).WithMetrics(reg)
	})
	ctx, cancel := testwait.Context(t)
	defer cancel()
	if err := a.d.waitWarm(ctx); err != nil {
		t.Fatal(err)
	}
	if len(a.d.pool) != 1 {
		t.Fatalf("pool holds %d after WaitWarm, want 1", len(a.d.pool))
	}
	s, err := a.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "import sys; print('json' in sys.modules)"})
	if err != nil || res.Stdout != "True\n" {
		t.Fatalf("first session is not the warm interpreter: %+v %v", res, err)
	}
	// A refill would start an interpreter (milliseconds) within this.
	time.Sleep(2 * time.Second)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "codeport_instance_start_duration_seconds" {
			if n := mf.GetMetric()[0].GetHistogram().GetSampleCount(); n != 1 {
				t.Errorf("%d interpreters booted, want only the pooled one", n)
			}
			return
		}
	}
	t.Error("no instance start metric")
}

// With max-sessions unset (0, the default), the adapter admits as many
// sessions as fit in this machine's (or container's) memory at the
// memory limit each, publishes that figure, and refuses the next; a set
// value is kept, and a negative one refused.
func TestMaxSessionsFollowsMemory(t *testing.T) {
	b := hostmem.Read()
	if b.Bytes == 0 {
		t.Skip("this machine's memory cannot be read (not Linux): the fixed fallback applies")
	}
	// A memory limit large enough that few sessions fit, so that the
	// test can reach the limit: a tenth of the budget each.
	each := min(b.Bytes/10/wasmPage*wasmPage, 4<<30)
	s := DefaultSettings()
	s.MemoryLimit = each
	want := hostmem.Fit(b.Bytes, each)
	if s.MaxSessions != 0 || s.SessionLimit() != want || s.Limits().MaxSessions != want {
		t.Fatalf("default max-sessions %d, limit %d (%d published), want %d from %d bytes (%s)", s.MaxSessions, s.SessionLimit(), s.Limits().MaxSessions, want, b.Bytes, b.Source)
	}
	s.MaxSessions = 3
	if s.SessionLimit() != 3 {
		t.Fatalf("a set max-sessions became %d", s.SessionLimit())
	}
	s.MaxSessions = -1
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "max-sessions") {
		t.Fatalf("negative max-sessions: %v", err)
	}

	cfg := NewConfig().WithMemoryLimit(each).WithWarmPool(0, nil).WithSessionsDir(t.TempDir()).WithCompilationCacheDir(testcache.Dir())
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	ctx := context.Background()
	caps, err := p.Describe(ctx)
	if err != nil || caps.Limits.MaxSessions != want {
		t.Fatalf("Describe: %v, max sessions %d, want %d", err, caps.Limits.MaxSessions, want)
	}
	for i := range want {
		if _, err := p.CreateSession(ctx, port.CreateSessionRequest{}); err != nil {
			t.Fatalf("session %d of %d: %v", i+1, want, err)
		}
	}
	var ce *port.CapacityError
	if _, err := p.CreateSession(ctx, port.CreateSessionRequest{}); !errors.As(err, &ce) || ce.Limit != want {
		t.Fatalf("session %d: %v, want a capacity refusal at %d", want+1, err, want)
	}
}
