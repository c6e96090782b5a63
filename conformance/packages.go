package conformance

import (
	"slices"
	"strings"

	"github.com/codeport/codeport/port"
)

// The package checks: a backend that lists a package in Describe must
// import it and give the results its users rely on, with the workspace's
// files. A backend that does not list it skips them.

func packageChecks() []Check {
	return []Check{
		{"packages/listed-import", check(packagesListedImport)},
		{"packages/numpy", check(packagesNumpy)},
		{"packages/pandas", check(packagesPandas)},
		{"packages/sympy", check(packagesSympy)},
		{"packages/pil", check(packagesPIL)},
		{"packages/matplotlib", check(packagesMatplotlib)},
	}
}

// requirePackage skips the check unless Describe lists name.
func (e *env) requirePackage(name string) {
	caps, err := e.describe()
	if err != nil {
		e.t.Skipf("Describe failed (%v): which packages the backend has is unknown", err)
	}
	for _, p := range caps.Packages {
		if p.Name == name {
			return
		}
	}
	e.t.Skipf("Describe does not list %s", name)
}

// packageSession skips the check unless the backend offers code_execution
// and Describe lists name, and returns a session for it.
func (e *env) packageSession(name string) string {
	e.requireTool(port.ToolCodeExecution)
	e.requirePackage(name)
	e.heavy = true
	return e.session()
}

// expectFile fails the check unless the workspace file name holds want.
func (e *env) expectFile(id, name, want string) {
	if got := e.readText(id, name); got != want {
		e.t.Errorf("%s reads %q, want %q", name, clip(got), clip(want))
	}
}

// packagesListedImport: every package Describe lists imports, at the
// version it names.
func packagesListedImport(e *env) {
	e.requireTool(port.ToolCodeExecution)
	caps, err := e.describe()
	if err != nil {
		e.t.Skipf("Describe failed: %v", err)
	}
	if len(caps.Packages) == 0 {
		e.t.Skipf("Describe lists no packages")
	}
	id := e.session()
	for _, p := range caps.Packages {
		code := "import importlib, importlib.metadata\n" +
			"m = importlib.import_module(" + py(p.Name) + ")\n" +
			"v = getattr(m, '__version__', None)\n" +
			"if v is None:\n    v = importlib.metadata.version(" + py(p.Name) + ")\n" +
			"print(v)"
		res := e.code(id, code)
		if res.ReturnCode != 0 {
			e.t.Errorf("import %s: return code %d, stderr %q", p.Name, res.ReturnCode, clip(res.Stderr))
			continue
		}
		if p.Version != "" && strings.TrimSpace(res.Stdout) != p.Version {
			e.t.Errorf("%s: Describe says version %s, the module says %q", p.Name, p.Version, clip(res.Stdout))
		}
	}
}

// packagesNumpy: linear algebra, FFT, random generators (both APIs),
// and a table saved to and loaded from the workspace.
func packagesNumpy(e *env) {
	id := e.packageSession("numpy")
	e.expectStdout(id, "import numpy as np\n"+
		"a = np.arange(12).reshape(3, 4)\n"+
		"print(a.sum(), (a @ a.T).trace(), np.linalg.inv(np.eye(3) * 2)[0, 0])\n"+
		"m = np.array([[3.0, 1.0], [1.0, 2.0]])\n"+
		"x = np.linalg.solve(m, np.array([9.0, 8.0]))\n"+
		"print(np.allclose(m @ x, [9, 8]), round(float(np.linalg.det(m)), 6))\n"+
		"w = np.linalg.eigvalsh(m)\n"+
		"print(np.allclose(sorted(w), sorted(np.linalg.eigvals(m).real)))\n"+
		"f = np.fft.fft(np.array([1.0, 0.0, 0.0, 0.0]))\n"+
		"print(np.allclose(f, 1), np.allclose(np.fft.ifft(np.fft.fft(a[0])), a[0]))\n"+
		"g = np.random.default_rng(7)\n"+
		"s = g.poisson(3.0, 10000)\n"+
		"print(abs(s.mean() - 3.0) < 0.2, (np.random.default_rng(7).poisson(3.0, 10000) == s).all())\n"+
		"r = np.random.RandomState(7).poisson(3.0, 10000)\n"+
		"print(abs(r.mean() - 3.0) < 0.2)\n"+
		"np.savetxt('numpy-table.csv', a, delimiter=',', fmt='%d')\n"+
		"print(np.loadtxt('numpy-table.csv', delimiter=',', dtype=int).tolist() == a.tolist())\n",
		"66 506 0.5\nTrue 5.0\nTrue\nTrue True\nTrue True\nTrue\nTrue\n")
	e.expectFile(id, "numpy-table.csv", "0,1,2,3\n4,5,6,7\n8,9,10,11\n")
}

// packagesPandas: read_csv of a workspace file, groupby, merge, and a
// result written back.
func packagesPandas(e *env) {
	id := e.packageSession("pandas")
	e.writeText(id, "sales.csv", "region,item,units\nnorth,a,3\nsouth,b,5\nnorth,b,4\nsouth,a,1\n")
	e.writeText(id, "prices.csv", "item,price\na,2.5\nb,10\n")
	e.expectStdout(id, "import pandas as pd\n"+
		"s = pd.read_csv('sales.csv')\n"+
		"p = pd.read_csv('prices.csv')\n"+
		"m = s.merge(p, on='item')\n"+
		"m['revenue'] = m.units * m.price\n"+
		"g = m.groupby('region')['revenue'].sum()\n"+
		"print(g.to_dict())\n"+
		"g.to_csv('revenue.csv')\n",
		"{'north': 47.5, 'south': 52.5}\n")
	e.expectFile(id, "revenue.csv", "region,revenue\nnorth,47.5\nsouth,52.5\n")
}

// packagesSympy: integration, equation systems, simplification, limits,
// series, matrices, an ODE and mpmath's precision, each as CPython prints
// it natively with the same sympy, and an expression written to the
// workspace.
func packagesSympy(e *env) {
	id := e.packageSession("sympy")
	e.expectStdout(id, "import sympy as sp\n"+
		"x, y = sp.symbols('x y')\n"+
		"print(sp.integrate(sp.sin(x)**2, x))\n"+
		"print(sp.solve(x**2 - 5*x + 6, x), sp.solve([x + y - 3, x - y - 1], [x, y]))\n"+
		"print(sp.simplify(sp.sin(x)**2 + sp.cos(x)**2), sp.factor(x**3 - y**3), sp.expand((x + 1)**3))\n"+
		"print(sp.limit(sp.sin(x)/x, x, 0), sp.series(sp.exp(x), x, 0, 4), sp.diff(sp.atan(x), x))\n"+
		"print(sp.Matrix([[2, 1], [1, 3]]).eigenvals(), sp.Matrix([[1, 2], [3, 4]]).det())\n"+
		"print(sp.dsolve(sp.Derivative(sp.Function('f')(x), x) - sp.Function('f')(x)))\n"+
		"print(sp.N(sp.pi, 30), sp.isprime(2**61 - 1), sp.latex(sp.Integral(sp.exp(-x**2), (x, 0, sp.oo))))\n"+
		"import mpmath\n"+
		"mpmath.mp.dps = 40\n"+
		"print(mpmath.quad(lambda t: mpmath.exp(-t**2), [-mpmath.inf, mpmath.inf]) ** 2)\n"+
		"_ = open('sympy-result.txt', 'w').write(sp.srepr(sp.integrate(x * sp.exp(x), x)))\n",
		"x/2 - sin(x)*cos(x)/2\n"+
			"[2, 3] {x: 2, y: 1}\n"+
			"1 (x - y)*(x**2 + x*y + y**2) x**3 + 3*x**2 + 3*x + 1\n"+
			"1 1 + x + x**2/2 + x**3/6 + O(x**4) 1/(x**2 + 1)\n"+
			"{5/2 - sqrt(5)/2: 1, sqrt(5)/2 + 5/2: 1} -2\n"+
			"Eq(f(x), C1*exp(x))\n"+
			"3.14159265358979323846264338328 True \\int\\limits_{0}^{\\infty} e^{- x^{2}}\\, dx\n"+
			"3.141592653589793238462643383279502884197\n")
	e.expectFile(id, "sympy-result.txt", "Mul(Add(Symbol('x'), Integer(-1)), exp(Symbol('x')))")
}

// packagesPIL: Pillow draws into an image, saves it as PNG to the
// workspace, where it is a produced file that reads back as the same
// pixels; numpy and Pillow exchange arrays when both are listed.
func packagesPIL(e *env) {
	id := e.packageSession("PIL")
	res := e.code(id, "from PIL import Image, ImageDraw\n"+
		"im = Image.new('RGB', (40, 30), (255, 255, 255))\n"+
		"d = ImageDraw.Draw(im)\n"+
		"d.rectangle([5, 5, 20, 25], fill=(10, 120, 200))\n"+
		"d.line([(0, 29), (39, 0)], fill=(0, 0, 0), width=1)\n"+
		"im.save('pil-chart.png')\n"+
		"back = Image.open('pil-chart.png')\n"+
		"print(back.size, back.mode, back.getpixel((10, 10)), back.getpixel((35, 25)), list(back.getdata()) == list(im.getdata()))\n")
	if res.ReturnCode != 0 || res.Stdout != "(40, 30) RGB (10, 120, 200) (255, 255, 255) True\n" {
		e.t.Fatalf("drawing and saving: return code %d, stdout %q, stderr %q", res.ReturnCode, clip(res.Stdout), clip(res.Stderr))
	}
	if caps, err := e.describe(); err == nil && caps.OutputFiles {
		e.produced("a saved PNG", res, "pil-chart.png")
	}
	if png, _ := e.get(id, "pil-chart.png"); port.InlineImageType(png) != "image/png" {
		e.t.Errorf("pil-chart.png is not a PNG: % x", png[:min(len(png), 16)])
	}
	e.requirePackage("numpy")
	e.expectStdout(id, "import numpy as np\n"+
		"a = np.asarray(back)\n"+
		"print(a.shape, a.dtype, a[10, 10].tolist(), Image.fromarray(a[::2, ::2]).size)\n",
		"(30, 40, 3) uint8 [10, 120, 200] (20, 15)\n")
}

// ChartSet draws what a code interpreter is most often asked for, each
// chart saved under charts/ and closed, and prints the backend, the files
// and the figures left open. It is exported for backends' own tests (the
// wasm adapter compares the images with matplotlib's wheels').
const ChartSet = `import os
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

os.makedirs("charts", exist_ok=True)
rng = np.random.default_rng(0)
x = np.linspace(0, 10, 200)


def save(fig, name, *formats):
    for f in formats or ("png",):
        fig.savefig("charts/%s.%s" % (name, f))
    plt.close(fig)


fig, ax = plt.subplots()
ax.plot(x, np.sin(x), label="sin")
ax.plot(x, np.cos(x), "--", label="cos")
ax.legend()
ax.set_title("Line")
save(fig, "line")
ax = pd.DataFrame({"sales": [3, 7, 2, 5]}, index=["Q1", "Q2", "Q3", "Q4"]).plot.bar()
save(ax.figure, "bar")
fig, ax = plt.subplots()
ax.hist(rng.normal(size=1000), bins=30)
save(fig, "hist")
fig, ax = plt.subplots()
sc = ax.scatter(rng.random(100), rng.random(100), c=rng.random(100), cmap="viridis")
fig.colorbar(sc)
save(fig, "scatter")
fig, axs = plt.subplots(2, 2, layout="constrained")
for i, a in enumerate(axs.flat):
    a.plot(x, x**i)
    a.set_title("x**%d" % i)
save(fig, "grid")
X, Y = np.meshgrid(np.linspace(-3, 3, 50), np.linspace(-3, 3, 50))
Z = np.exp(-X**2 - Y**2)
fig, ax = plt.subplots()
ax.clabel(ax.contour(X, Y, Z, levels=8))
save(fig, "contour")
px, py = rng.random(200), rng.random(200)
fig, ax = plt.subplots()
ax.tricontourf(px, py, np.sin(6 * px) * np.cos(6 * py))
save(fig, "tricontour")
fig, ax = plt.subplots()
ax.imshow(Z, cmap="magma")
save(fig, "imshow")
fig, ax = plt.subplots()
ax.set_title("Température °C: ÄÖÜ αβγ")
ax.text(0.5, 0.5, "µ ± σ ≤ ∞", ha="center")
ax.set_xlabel(r"$\alpha^2 + \sqrt{x}$")
save(fig, "unicode")
fig, ax = plt.subplots()
ax.plot([1, 3, 2])
save(fig, "formats", "png", "svg", "pdf")
print(matplotlib.get_backend().lower())
print(sorted(os.listdir("charts")))
print(plt.get_fignums())
`

// packagesMatplotlib: the chart set draws with the Agg backend and saves
// PNG, SVG and PDF files; with display on, figures left open at a cell's
// end, or shown with plt.show(), come back as PNG images and are closed;
// errors raised inside the C++ of matplotlib, contourpy and kiwisolver
// become the Python exceptions their users catch, and the session keeps
// its variables.
func packagesMatplotlib(e *env) {
	id := e.packageSession("matplotlib")
	res := e.code(id, ChartSet) // heavy: twelve charts
	files := []string{"bar.png", "contour.png", "formats.pdf", "formats.png", "formats.svg", "grid.png", "hist.png",
		"imshow.png", "line.png", "scatter.png", "tricontour.png", "unicode.png"}
	want := "agg\n['" + strings.Join(files, "', '") + "']\n[]\n"
	if res.ReturnCode != 0 || res.Stdout != want {
		e.t.Fatalf("the chart set: return code %d, stdout %q, want %q; stderr %q", res.ReturnCode, clip(res.Stdout), want, clip(res.Stderr))
	}
	for _, f := range files {
		b, _ := e.get(id, "charts/"+f)
		var ok bool
		switch {
		case strings.HasSuffix(f, ".png"):
			ok = port.InlineImageType(b) == "image/png"
		case strings.HasSuffix(f, ".svg"):
			ok = strings.Contains(string(b[:min(len(b), 400)]), "<svg")
		case strings.HasSuffix(f, ".pdf"):
			ok = strings.HasPrefix(string(b), "%PDF-") && strings.Contains(string(b[max(0, len(b)-64):]), "%%EOF")
		}
		if !ok {
			e.t.Errorf("charts/%s (%d bytes) is not a valid file of its type: %q", f, len(b), clip(string(b[:min(len(b), 32)])))
		}
	}
	if caps, err := e.describe(); err == nil && caps.OutputFiles {
		var paths []string
		for _, f := range files {
			paths = append(paths, "charts/"+f)
		}
		// In any order: the result lists them in the order it chooses.
		slices.SortFunc(res.Files, func(a, b port.OutputFile) int { return strings.Compare(a.Filename, b.Filename) })
		e.produced("the chart set", res, paths...)
	}

	// C++ exceptions: each error path raises the Python exception its
	// package documents, and the session goes on.
	e.expectStdout(id, "from matplotlib.ft2font import FT2Font\n"+
		"import contourpy, kiwisolver, numpy as np\n"+
		"kept = 'still here'\n"+
		"try:\n    FT2Font('/workspace/no-such-font.ttf')\nexcept FileNotFoundError as e:\n    print('FT2Font:', type(e).__name__)\n"+
		"try:\n    contourpy.contour_generator(z=np.arange(9.0).reshape(3, 3)).filled(5, 1)\nexcept ValueError as e:\n    print('contourpy:', e)\n"+
		"v = kiwisolver.Variable('v')\ns = kiwisolver.Solver()\ns.addConstraint(v >= 10)\n"+
		"try:\n    s.addConstraint(v <= 5)\nexcept kiwisolver.UnsatisfiableConstraint:\n    print('kiwisolver: UnsatisfiableConstraint')\n"+
		"import io\nfrom PIL import Image, UnidentifiedImageError\n"+
		"try:\n    Image.open(io.BytesIO(b'not an image'))\nexcept UnidentifiedImageError:\n    print('PIL: UnidentifiedImageError')\n",
		"FT2Font: FileNotFoundError\ncontourpy: upper_level must be larger than lower_level\nkiwisolver: UnsatisfiableConstraint\nPIL: UnidentifiedImageError\n")
	e.expectStdout(id, "print(kept)", "still here\n")

	caps, err := e.describe()
	if err != nil || !caps.DisplaysValues || !caps.OutputFiles {
		return
	}
	// Figures as a notebook shows them.
	for _, c := range []struct{ what, code string }{
		{"a figure left open", "import matplotlib.pyplot as plt\nplt.plot([1, 4, 9]);"},
		{"plt.show()", "import matplotlib.pyplot as plt\nplt.bar(['a', 'b'], [3, 5])\nplt.show()\nprint(plt.get_fignums())"},
	} {
		res := e.code(id, c.code)
		if res.ReturnCode != 0 {
			e.t.Fatalf("%s: return code %d, stderr %q", c.what, res.ReturnCode, clip(res.Stderr))
		}
		if c.what == "plt.show()" && res.Stdout != "[]\n" {
			e.t.Errorf("%s: figures still open after show(): %q", c.what, clip(res.Stdout))
		}
		images := 0
		for _, f := range res.Files {
			data, _, ok := e.outputFile(id, f.FileID)
			if ok && port.InlineImageType([]byte(data)) == "image/png" {
				images++
				if caps.InlineImages > 0 && (f.MediaType != "image/png" || string(f.Data) != data) {
					e.t.Errorf("%s: %s is not inline as image/png (type %q, %d bytes)", c.what, f.Filename, f.MediaType, len(f.Data))
				}
			}
		}
		if images != 1 {
			e.t.Errorf("%s: the result holds %d PNG images (files %v), want 1", c.what, images, res.Files)
		}
	}
	e.expectStdout(id, "import matplotlib.pyplot as plt\nprint(plt.get_fignums())", "[]\n")
}
