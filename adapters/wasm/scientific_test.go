package wasm

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codeport/codeport/internal/purpose"
	"github.com/codeport/codeport/port"
)

func scientificAdapter(t testing.TB, tweak func(Config) Config) *testAdapter {
	return newTestAdapter(t, func(c Config) Config {
		c = c.WithProfile("scientific")
		if tweak != nil {
			c = tweak(c)
		}
		return c
	})
}

// The scientific profile describes what it has, and each limitation it
// states is what a program meets.
func TestScientificProfileIsDescribedHonestly(t *testing.T) {
	a := scientificAdapter(t, nil)
	caps, err := a.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(caps.Packages, port.Package{Name: "numpy", Version: "2.2.6"}) {
		t.Fatalf("packages %v, want numpy 2.2.6", caps.Packages)
	}
	if hint := purpose.Hint(caps, purpose.Options{}); !strings.Contains(hint, "numpy 2.2.6") {
		t.Errorf("the purpose hint does not name numpy: %q", hint)
	}
	lims := strings.Join(caps.Limitations, "\n")
	for _, want := range []string{"np.seterr(all='raise')", "32-bit", "lapack_lite"} {
		if !strings.Contains(lims, want) {
			t.Errorf("the limitations do not say %q:\n%s", want, lims)
		}
	}
	id := newSession(t, a)
	// The image holds numpy imported: a session's first cell finds it.
	expect(t, run(t, a, id, "import sys\nprint('numpy' in sys.modules)"), "True\n", 0, port.OutcomeCompleted)
	// No floating-point error flags: 'raise' gives inf and nan, no error.
	expect(t, run(t, a, id, "import numpy as np, warnings\nnp.seterr(all='raise')\nwith warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n    print(np.array([1.0]) / 0, np.sqrt(np.array([-1.0])), np.float64(1e308) * 10, np.array([7]) // 0)\nprint(len(w))"),
		"[inf] [nan] inf [0]\n0\n", 0, port.OutcomeCompleted)
	expect(t, run(t, a, id, "print(np.array([1]).dtype, np.intp, np.array([2**31 - 1]) + 1, np.array([2**31 - 1], dtype=np.int64) + 1)"),
		"int32 <class 'numpy.int32'> [-2147483648] [2147483648]\n", 0, port.OutcomeCompleted)
	// The bash tool's python is the same build.
	if res := bash(t, a, id, `python -c 'import numpy; print(numpy.__version__)'`, 0); res.Stdout != "2.2.6\n" {
		t.Errorf("bash python: %+v", res)
	}
}

// The default profile has no packages: numpy is not importable there.
func TestDefaultProfileHasNoNumpy(t *testing.T) {
	a := newTestAdapter(t, nil)
	caps, _ := a.Describe(context.Background())
	if len(caps.Packages) != 0 {
		t.Fatalf("default profile lists packages %v", caps.Packages)
	}
	res := run(t, a, newSession(t, a), "import numpy")
	if res.Outcome != port.OutcomeProgramError || !strings.Contains(res.Stderr, "No module named 'numpy'") {
		t.Fatalf("import numpy in the default profile: %+v", res)
	}
}

// numpy's C loops observe deadlines and the memory limit like Python code:
// the module's interrupt checks are in every loop, numpy's included.
func TestScientificLimitsHoldInsideNumpy(t *testing.T) {
	a := scientificAdapter(t, func(c Config) Config { return c.WithMemoryLimit(128 << 20) })
	id := newSession(t, a)
	run(t, a, id, "import numpy as np\nkept = np.arange(3)")
	res := runTimeout(t, a, id, "m = np.ones((1500, 1500))\nprint('start', flush=True)\nm @ m", time.Second)
	if res.Outcome != port.OutcomeTimedOut || res.Stdout != "start\n" {
		t.Fatalf("a long matmul under a 1 s deadline: %+v", res)
	}
	lost := res.StateLost
	res = run(t, a, id, "import numpy as np\nbig = np.ones(10**8)")
	if res.Outcome != port.OutcomeProgramError || !strings.Contains(res.Stderr, "MemoryError") {
		if res.Outcome != port.OutcomeMemoryLimit {
			t.Fatalf("np.ones(10**8) under 128 MiB: %+v", res)
		}
	}
	want := "3\n"
	if lost || res.StateLost {
		want = "reset\n"
	}
	expect(t, run(t, a, id, "print(kept.sum() if 'kept' in globals() else 'reset')"), want, 0, port.OutcomeCompleted)
}
