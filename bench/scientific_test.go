package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codeport/codeport/adapters/wasm"
	_ "github.com/codeport/codeport/adapters/wasm/scientific"
	"github.com/codeport/codeport/internal/testkit/measure"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
)

// sciWorkload is a workload of the scientific profile: setup runs once in
// a session (off the clock), then code is timed, reps times, and must print
// want.
type sciWorkload struct {
	prefix, setup, code, want string
	reps                      int
}

// S1: a 200×200 float64 matrix product.
var sciMatmul = sciWorkload{
	prefix: "matmul",
	setup:  "import numpy as np\na = np.random.default_rng(1).random((200, 200))",
	code:   "b = a @ a\nprint(b.shape, bool((b > 0).all()))",
	want:   "(200, 200) True\n",
	reps:   15,
}

// S2: a pandas groupby over 10**5 rows (100 keys; sum, mean and count).
var sciGroupby = sciWorkload{
	prefix: "groupby",
	setup: "import numpy as np, pandas as pd\nrng = np.random.default_rng(1)\n" +
		"df = pd.DataFrame({'k': rng.integers(0, 100, 10**5), 'v': rng.random(10**5)})",
	code: "g = df.groupby('k')['v'].agg(['sum', 'mean', 'count'])\nprint(len(g), int(g['count'].sum()))",
	want: "100 100000\n",
	reps: 15,
}

// S3: sympy's integral of sin(x)**2, its cache cleared first, so every
// sample does the work a session's first call does.
var sciIntegrate = sciWorkload{
	prefix: "integrate",
	setup:  "import sympy as sp\nx = sp.Symbol('x')",
	code:   "sp.core.cache.clear_cache()\nprint(sp.integrate(sp.sin(x)**2, x))",
	want:   "x/2 - sin(x)*cos(x)/2\n",
	reps:   10,
}

// S4: sympy solving a quadratic with irrational roots, the same way.
var sciSolve = sciWorkload{
	prefix: "solve",
	setup:  "import sympy as sp\nx = sp.Symbol('x')",
	code:   "sp.core.cache.clear_cache()\nprint(sp.solve(x**2 - 5*x + 2, x))",
	want:   "[5/2 - sqrt(17)/2, sqrt(17)/2 + 5/2]\n",
	reps:   10,
}

// S5: a chart drawn and saved as PNG in memory (1,000 points, a legend
// and a title), closed after: what a code interpreter is most often asked
// for.
var sciChart = sciWorkload{
	prefix: "chart",
	setup: "import io\nimport numpy as np\nimport matplotlib\nmatplotlib.use('agg')\n" +
		"import matplotlib.pyplot as plt\nx = np.linspace(0, 10, 1000)",
	code: "fig, ax = plt.subplots()\nax.plot(x, np.sin(x), label='sin')\nax.legend()\nax.set_title('S5')\n" +
		"buf = io.BytesIO()\nfig.savefig(buf, format='png')\nplt.close(fig)\nprint(buf.getvalue()[:4] == b'\\x89PNG')",
	want: "True\n",
	reps: 10,
}

// BenchmarkS1Matmul: numpy's 200×200 matrix product in the scientific
// profile, in process, beside native CPython with the same numpy.
func BenchmarkS1Matmul(b *testing.B) { benchScientific(b, sciMatmul) }

// BenchmarkS2Groupby: a pandas groupby over 10**5 rows, the same way.
func BenchmarkS2Groupby(b *testing.B) { benchScientific(b, sciGroupby) }

// BenchmarkS3SympyIntegrate: a symbolic integral, the same way.
func BenchmarkS3SympyIntegrate(b *testing.B) { benchScientific(b, sciIntegrate) }

// BenchmarkS4SympySolve: a quadratic solved symbolically, the same way.
func BenchmarkS4SympySolve(b *testing.B) { benchScientific(b, sciSolve) }

// BenchmarkS5Chart: a matplotlib chart saved as PNG, the same way.
func BenchmarkS5Chart(b *testing.B) { benchScientific(b, sciChart) }

// benchScientific runs w on two peers: "inproc" (the in-process adapter
// with the scientific profile; each sample is one Execute, as a client
// sees it) and "native" (CPython with the numpy and pandas versions the
// profile's Describe lists, timed inside the interpreter: the interpreter
// named by CODEPORT_BENCH_NATIVE_PYTHON, which bench/cmd/sidebyside sets to
// one of the runtime's version, else the host's python3).
func benchScientific(b *testing.B, w sciWorkload) {
	var pkgs []port.Package
	b.Run("inproc", func(b *testing.B) {
		a := wasmtest.New(b, func(cfg wasm.Config) wasm.Config { return cfg.WithProfile("scientific") })
		ctx := context.Background()
		caps, err := a.Describe(ctx)
		if err != nil {
			b.Fatal(err)
		}
		pkgs = caps.Packages
		id := newSession(b, a)
		if err := run(ctx, a, id, w.setup, ""); err != nil {
			b.Fatal(err)
		}
		if err := run(ctx, a, id, w.code, w.want); err != nil { // the first call's one-off costs
			b.Fatal(err)
		}
		sampled(b, w.prefix, reps(w.reps), func() time.Duration { return timedRun(b, a, id, w.code, w.want) })
	})
	b.Run("native", func(b *testing.B) {
		py, err := scientificPython(pkgs)
		if err != nil {
			b.Logf("native: %v", err)
			b.ReportMetric(1, "absent")
			return
		}
		for b.Loop() {
			samples, err := nativeSamples(py, w, reps(w.reps))
			if err != nil {
				b.Fatal(err)
			}
			measure.Report(b, w.prefix, samples)
		}
	})
}

// nativeDriver times code in the host's CPython: argv is setup, code, want
// and the number of samples; it prints the samples in seconds as JSON.
const nativeDriver = `import contextlib, io, json, sys, time
setup, code, want, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
g = {}
exec(setup, g)
out = []
for i in range(n + 1):
    buf = io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(buf):
        exec(code, g)
    d = time.perf_counter() - t0
    if buf.getvalue() != want:
        sys.exit("printed %r, want %r" % (buf.getvalue(), want))
    if i:
        out.append(d)
print(json.dumps(out))
`

func nativeSamples(py string, w sciWorkload, n int) ([]time.Duration, error) {
	cmd := exec.Command(py, "-c", nativeDriver, w.setup, w.code, w.want, fmt.Sprint(n))
	// One thread, as in the sandbox: OpenBLAS would otherwise use both cores.
	cmd.Env = append(os.Environ(), "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("native %s: %w: %s", w.prefix, err, stderr.String())
	}
	var secs []float64
	if err := json.Unmarshal(out, &secs); err != nil {
		return nil, fmt.Errorf("native %s output %q: %w", w.prefix, out, err)
	}
	samples := make([]time.Duration, len(secs))
	for i, s := range secs {
		samples[i] = time.Duration(s * float64(time.Second))
	}
	return samples, nil
}

// scientificPython returns the python of a cached virtual environment
// (under the user's cache directory) with pkgs installed by pip at their
// listed versions (the packages' own dependencies as pip resolves them),
// building it on first use with the interpreter CODEPORT_BENCH_NATIVE_PYTHON
// names (python3 when unset).
func scientificPython(pkgs []port.Package) (string, error) {
	if len(pkgs) == 0 {
		return "", errors.New("the scientific profile listed no packages")
	}
	name := cmp.Or(os.Getenv("CODEPORT_BENCH_NATIVE_PYTHON"), "python3")
	python3, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s is not on PATH: %w", name, err)
	}
	v, err := exec.Command(python3, "-c", "import sys; print('%d.%d' % sys.version_info[:2])").Output()
	if err != nil {
		return "", fmt.Errorf("%s does not run: %w", name, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	// Describe lists import names; pip wants distribution names.
	dist := map[string]string{"dateutil": "python-dateutil", "PIL": "pillow"}
	reqs := make([]string, len(pkgs))
	name = "bench-venv-py" + strings.TrimSpace(string(v))
	for i, p := range pkgs {
		reqs[i] = cmp.Or(dist[p.Name], p.Name) + "==" + p.Version
		name += "-" + p.Name + p.Version
	}
	dir := filepath.Join(cache, "codeport", name)
	py := filepath.Join(dir, "bin", "python")
	const marker = ".codeport-bench-complete"
	if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
		return py, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("cache directory: %w", err)
	}
	_ = os.RemoveAll(dir) // a half-built one
	steps := [][]string{
		{python3, "-m", "venv", dir},
		append([]string{py, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--quiet"}, reqs...),
	}
	for _, s := range steps {
		if msg, err := exec.Command(s[0], s[1:]...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("%s: %w\n%s", strings.Join(s, " "), err, msg)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, marker), nil, 0o644); err != nil {
		return "", fmt.Errorf("marking the environment complete: %w", err)
	}
	return py, nil
}
