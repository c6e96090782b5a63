package wasm

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/codeport/codeport/adapters/wasm/internal/cpython"
	"github.com/codeport/codeport/adapters/wasm/internal/wasmpatch"
	"github.com/codeport/codeport/port"
)

// fingerprint prints what a session's interpreter holds that a program
// can change: its namespace, modules, patched functions, working
// directory, environment, files, descriptors and interpreter settings.
// Two fresh sessions print the same.
const fingerprint = `import sys, os, json, gc, warnings, builtins
def fds():
    # Not the preopened directories (3 to 6): an fstat of one opens it,
    # which keeps its instance from being recycled.
    open_ = []
    for fd in [0, 1, 2] + list(range(7, 64)):
        try:
            os.fstat(fd)
            open_.append(fd)
        except OSError:
            pass
    return open_
print(sorted(k for k in globals() if not k.startswith("_")))
print(sorted(sys.modules))
print(json.dumps({"a": 1}), builtins.len([1]), os.getcwd(), sys.path[:2])
print(sorted(os.environ.items()))
print(os.listdir("/workspace"), os.listdir("/tmp"))
print(fds())
print(sys.getrecursionlimit(), gc.get_threshold(), gc.isenabled(), len(warnings.filters))
`

// spoil changes each thing fingerprint prints, and random's state.
const spoil = `import sys, os, json, gc, warnings, builtins, colorsys, random
secret = 42
json.dumps = lambda *a, **k: "patched"
builtins.len = lambda x: -1
os.chdir("/tmp")
sys.path.insert(0, "/nowhere")
os.environ["SPOILED"] = "1"
open("/workspace/left.txt", "w").write("x")
open("/tmp/left.txt", "w").write("x")
sys.setrecursionlimit(123)
gc.set_threshold(1, 1, 1)
gc.disable()
warnings.simplefilter("ignore")
random.seed(1234)
print(random.random())
`

// newSessionFrom creates a session and says whether its interpreter was a
// recycled one.
func newSessionFrom(t *testing.T, a *testAdapter) (string, bool) {
	t.Helper()
	before := a.d.eng.reused.Load()
	id := newSession(t, a)
	return id, a.d.eng.reused.Load() > before
}

func destroy(t *testing.T, a *testAdapter, id string) {
	t.Helper()
	if err := a.DestroySession(context.Background(), id); err != nil {
		t.Fatal(err)
	}
}

// A recycled instance is the image's interpreter again: nothing the last
// session did to it shows in the next.
func TestRecycledInstanceCarriesNothing(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config { return c.WithWarmPool(0, nil) })
	if a.d.eng.census == nil {
		t.Fatal("recycling is off on Linux")
	}
	fresh, reused := newSessionFrom(t, a)
	if reused {
		t.Fatal("the first session got a recycled instance")
	}
	want := run(t, a, fresh, fingerprint)
	expect(t, want, want.Stdout, 0, port.OutcomeCompleted)
	destroy(t, a, fresh)

	var seeded string
	for round := range 3 {
		id, reused := newSessionFrom(t, a)
		if !reused {
			t.Fatalf("round %d: the session did not get the recycled instance", round)
		}
		if got := run(t, a, id, fingerprint); got.Stdout != want.Stdout {
			t.Fatalf("round %d: a recycled instance differs from a fresh one:\n got %s\nwant %s", round, got.Stdout, want.Stdout)
		}
		r := run(t, a, id, "import random\nprint(random.random())")
		expect(t, r, r.Stdout, 0, port.OutcomeCompleted)
		if r.Stdout == seeded {
			t.Fatalf("round %d: random's state carried from the last session (%s)", round, seeded)
		}
		// WASI's own handle on a preopened directory (opened by the
		// fstat in the last round) is this session's directory.
		expect(t, run(t, a, id, "import os\nprint(os.fstat(3).st_ino == os.stat('/workspace').st_ino, os.fstat(4).st_ino == os.stat('/tmp').st_ino)"),
			"True True\n", 0, port.OutcomeCompleted)
		s := run(t, a, id, spoil)
		expect(t, s, s.Stdout, 0, port.OutcomeCompleted)
		seeded = s.Stdout
		recycled := a.d.eng.recycled.Load()
		destroy(t, a, id)
		if a.d.eng.recycled.Load() != recycled+1 {
			t.Fatalf("round %d: a session that closed its files was not recycled", round)
		}
		checkIsImage(t, a.d.eng)
	}
}

// checkIsImage checks that the recycled instance e keeps holds the
// image's memory and globals, byte for byte.
func checkIsImage(t *testing.T, e *engine) {
	t.Helper()
	it := <-e.spares
	defer func() { e.spares <- it }()
	mem, ok := it.mod.Memory().Read(0, it.mod.Memory().Size())
	if !ok || len(mem) != e.image.size {
		t.Fatalf("the recycled memory is %d bytes, the image %d", len(mem), e.image.size)
	}
	buf := make([]byte, imageChunk)
	for i := range e.image.chunks {
		want, err := e.image.chunk(i, buf)
		if err != nil {
			t.Fatal(err)
		}
		if got := mem[i*imageChunk : i*imageChunk+len(want)]; !bytes.Equal(got, want) {
			t.Fatalf("page %d of the recycled memory differs from the image's", i)
		}
	}
	for _, g := range e.image.globals {
		if v := it.mod.ExportedGlobal(g.name).Get(); v != g.value {
			t.Fatalf("global %s is %#x, the image's %#x", g.name, v, g.value)
		}
	}
}

// Instances whose end left something recycling cannot put back are
// closed, not kept.
func TestInstancesRecyclingCannotResetAreClosed(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config { return c.WithWarmPool(0, nil) })
	for _, c := range []struct {
		name, code string
		timeout    time.Duration
	}{
		{"a file left open", "f = open('/workspace/f', 'w')", 0},
		{"the standard library's directory left open", "d = os.open('/usr/local/lib', os.O_RDONLY)", 0},
		{"/dev/null left open", "f = open('/dev/null', 'w')", 0},
		{"a directory left open", "d = os.open('/tmp', os.O_RDONLY)", 0},
		{"stdout closed", "os.close(1)", 0},
		{"a preopen closed", "os.close(3)", 0},
		{"the memory grew", "b = bytearray(64 << 20)", 0},
		{"a call stopped", "while True: pass", 2 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := newSession(t, a)
			runTimeout(t, a, id, "import os, sys\n"+c.code, c.timeout)
			recycled := a.d.eng.recycled.Load()
			destroy(t, a, id)
			if a.d.eng.recycled.Load() != recycled {
				t.Fatalf("recycled after %s", c.name)
			}
			// The next session is sound, and is recycled.
			next := newSession(t, a)
			expect(t, run(t, a, next, "print(open('/workspace/x', 'w').write('ok'))"), "2\n", 0, port.OutcomeCompleted)
			destroy(t, a, next)
			if a.d.eng.recycled.Load() != recycled+1 {
				t.Fatal("a clean session after it was not recycled")
			}
		})
	}
}

// The committed runtimes never write their tables, which a recycled
// instance keeps as they were (recycle.go).
func TestCommittedRuntimesWriteNoTable(t *testing.T) {
	for _, name := range cpython.Profiles() {
		rt, ok := cpython.Lookup(name)
		if !ok {
			t.Fatalf("profile %s not found", name)
		}
		n, err := wasmpatch.TableWrites(rt.Module)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n != 0 {
			t.Errorf("%s: %d table writes: recycled instances would carry them", name, n)
		}
	}
	if !slices.Contains(cpython.Profiles(), "scientific") {
		t.Error("the scientific profile is not linked into this test binary")
	}
}
