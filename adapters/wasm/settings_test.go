package wasm

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codeport/codeport/port"
)

func TestConfigCrossesAProcessBoundaryAsJSON(t *testing.T) {
	in := NewConfig().WithRuntimeDir("/rt").WithCompilationCacheDir("/cache").WithSessionsDir("/s").
		WithTimeouts(3*time.Second, 9*time.Second).WithMemoryLimit(96<<20).WithOutputLimit(1000).
		WithSourceLimit(2000).WithWorkspaceLimit(3000).WithFileLimit(2500).WithMaxSessions(3).
		WithSessionLifetimes(time.Minute, 2*time.Minute, 3*time.Minute).WithRetryAfter(7*time.Second).
		WithWarmPool(1, []string{"json"}).WithWarmPoolRefill(0)
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out := NewConfig()
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	in.logger, out.logger = nil, nil
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip changed the config:\n in  %+v\n out %+v", in, out)
	}
	if err := json.Unmarshal([]byte(`{"default_timeout":"soon"}`), &out); err == nil {
		t.Error("a malformed duration was accepted")
	}
}

// A refill of 0 fills the pool once: WaitWarm returns when it is full, the
// first session is a hit, and no interpreter is booted after it.
func TestWarmPoolFilledOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	a := newTestAdapter(t, func(c Config) Config {
		return c.WithWarmPool(1, []string{"json"}).WithWarmPoolRefill(0).WithMetrics(reg)
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := a.WaitWarm(ctx); err != nil {
		t.Fatal(err)
	}
	if len(a.pool) != 1 {
		t.Fatalf("pool holds %d after WaitWarm, want 1", len(a.pool))
	}
	s, err := a.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "import sys; print('json' in sys.modules)"})
	if err != nil || res.Stdout != "True\n" {
		t.Fatalf("first session is not the warm interpreter: %+v %v", res, err)
	}
	// A refill would boot an interpreter (about 0.3 s here) within this.
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

// After a miss, the pool refills with bare interpreters (no warm imports),
// so that it recovers in a fraction of the CPU while callers are waiting.
func TestWarmPoolUnderPressureSkipsTheImports(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config { return c.WithWarmPool(1, []string{"fractions"}) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := a.WaitWarm(ctx); err != nil {
		t.Fatal(err)
	}
	imported := func() string {
		t.Helper()
		s, err := a.CreateSession(ctx, port.CreateSessionRequest{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "import sys; print('fractions' in sys.modules)"})
		if err != nil {
			t.Fatal(err)
		}
		return res.Stdout
	}
	if got := imported(); got != "True\n" {
		t.Fatalf("a warm interpreter lacks its warm module: %q", got)
	}
	imported() // the pool is empty now: a miss, and pressure
	waitRefill := func() {
		for len(a.pool) < 1 {
			if ctx.Err() != nil {
				t.Fatal("the pool did not refill")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// The refill that began before the miss may still import them; the
	// one after it must not.
	waitRefill()
	imported()
	waitRefill()
	if got := imported(); got != "False\n" {
		t.Errorf("a refill under pressure imported the warm modules: %q", got)
	}
}

// The driver's code object is made once and cached beside the compiled
// module; a damaged cache file is replaced, never run.
func TestDriverCodeIsCachedAndCheckedBeforeUse(t *testing.T) {
	dir := t.TempDir()
	cached := func() string {
		t.Helper()
		m, err := filepath.Glob(filepath.Join(dir, "codeport-driver-*.hex"))
		if err != nil || len(m) != 1 {
			t.Fatalf("driver code files: %v %v", m, err)
		}
		return m[0]
	}
	hello := func() {
		t.Helper()
		a := newTestAdapter(t, func(c Config) Config { return c.WithCompilationCacheDir(dir).WithWarmPool(0, nil) })
		if len(a.eng.bootArgs) != 6 || a.eng.bootArgs[4] != driverCodeBootstrap {
			t.Fatalf("the driver was not started from its code object: %q", a.eng.bootArgs[:5])
		}
		s, err := a.CreateSession(context.Background(), port.CreateSessionRequest{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.Execute(context.Background(), s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "1/0"})
		if err != nil || res.Outcome != port.OutcomeProgramError || !strings.Contains(res.Stderr, "ZeroDivisionError") || strings.Contains(res.Stderr, "<codeport>") {
			t.Fatalf("%+v %v", res, err)
		}
	}
	hello()
	for _, damage := range []func([]byte) []byte{
		func([]byte) []byte { return []byte("not hex at all") },
		func(b []byte) []byte { return b[:len(b)-2] }, // cut short: still hex
	} {
		path := cached()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, damage(b), 0o600); err != nil {
			t.Fatal(err)
		}
		hello()
		if b, err := os.ReadFile(cached()); err != nil {
			t.Fatal(err)
		} else if _, ok := checkedCode(b); !ok {
			t.Fatalf("the damaged cache file was not replaced: %.40q", b)
		}
	}
}
