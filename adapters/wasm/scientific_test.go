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
	hint := purpose.Hint(caps, purpose.Options{})
	for _, p := range []port.Package{{Name: "numpy", Version: "2.2.6"}, {Name: "pandas", Version: "2.2.3"},
		{Name: "dateutil", Version: "2.9.0.post0"}, {Name: "pytz", Version: "2025.2"}, {Name: "six", Version: "1.17.0"},
		{Name: "sympy", Version: "1.14.0"}, {Name: "mpmath", Version: "1.3.0"}, {Name: "PIL", Version: "11.3.0"},
		{Name: "matplotlib", Version: "3.10.9"}, {Name: "contourpy", Version: "1.3.3"}, {Name: "kiwisolver", Version: "1.5.1"}} {
		if !slices.Contains(caps.Packages, p) {
			t.Errorf("packages %v, want %s %s", caps.Packages, p.Name, p.Version)
		}
		if !strings.Contains(hint, p.Name+" "+p.Version) {
			t.Errorf("the purpose hint does not name %s %s: %q", p.Name, p.Version, hint)
		}
	}
	lims := strings.Join(caps.Limitations, "\n")
	for _, want := range []string{"np.seterr(all='raise')", "32-bit", "lapack_lite", "read_parquet", "memory_map=True", "Agg backend", "FreeType 2.13", "import scipy", "parse_latex", "ImageFont.truetype loads fonts by path", "JPEG"} {
		if !strings.Contains(lims, want) {
			t.Errorf("the limitations do not say %q:\n%s", want, lims)
		}
	}
	id := newSession(t, a)
	// The image holds numpy and pandas imported: a session's first cell
	// finds them.
	expect(t, run(t, a, id, "import sys\nprint('numpy' in sys.modules, 'pandas' in sys.modules, 'sympy' in sys.modules)"), "True True True\n", 0, port.OutcomeCompleted)
	// No floating-point error flags: 'raise' gives inf and nan, no error.
	expect(t, run(t, a, id, "import numpy as np, warnings\nnp.seterr(all='raise')\nwith warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n    print(np.array([1.0]) / 0, np.sqrt(np.array([-1.0])), np.float64(1e308) * 10, np.array([7]) // 0)\nprint(len(w))"),
		"[inf] [nan] inf [0]\n0\n", 0, port.OutcomeCompleted)
	expect(t, run(t, a, id, "print(np.array([1]).dtype, np.intp, np.array([2**31 - 1]) + 1, np.array([2**31 - 1], dtype=np.int64) + 1)"),
		"int32 <class 'numpy.int32'> [-2147483648] [2147483648]\n", 0, port.OutcomeCompleted)
	// pandas: no optional engine, each refusal an ordinary exception that
	// says what is missing; memory_map=True refused with the reason.
	run(t, a, id, "import pandas as pd\npd.DataFrame({'a': [1, 2]}).to_csv('t.csv', index=False)")
	for _, c := range []struct{ call, want string }{
		{"pd.read_parquet('t.csv')", "ImportError"},
		{"pd.read_excel('t.csv', engine='openpyxl')", "ImportError: Missing optional dependency 'openpyxl'"},
		{"pd.read_html('<table><tr><td>1</td></tr></table>')", "ImportError"},
		{"pd.read_csv('t.csv', memory_map=True)", "OSError: memory_map=True needs the mmap module"},
		{"import scipy", "ModuleNotFoundError: No module named 'scipy'"},
		{"import matplotlib.animation as an\nan.writers['ffmpeg']", "RuntimeError: Requested MovieWriter (ffmpeg) not available"},
		{"from sympy.parsing.latex import parse_latex\nparse_latex('x')", "ImportError: LaTeX parsing requires the antlr4 Python package"},
		{"from PIL import Image\nImage.new('RGB', (4, 4)).save('x.jpg')", "OSError: encoder jpeg not available"},
		{"from PIL import Image\nImage.new('RGB', (4, 4)).save('x.pdf')", "OSError: encoder jpeg not available"},
		{"from PIL import Image\nImage.new('RGB', (4, 4)).save('x.webp')", "ValueError: unknown file extension: .webp"},
		{"from PIL import ImageFont\nImageFont.truetype('no-such-font.ttf', 12)", "OSError: cannot open resource"},
	} {
		res := run(t, a, id, c.call)
		if res.Outcome != port.OutcomeProgramError || !strings.Contains(res.Stderr, c.want) {
			t.Errorf("%s: want a program error with %q, got %+v", c.call, c.want, res)
		}
	}
	expect(t, run(t, a, id, "print(pd.read_csv('t.csv').a.sum())"), "3\n", 0, port.OutcomeCompleted)
	// sympy plots with matplotlib: its show() is pyplot's, which returns
	// the figure as an image.
	if res := run(t, a, id, "import sympy\nx = sympy.Symbol('x')\nsympy.plot(x**2, (x, -2, 2))"); res.ReturnCode != 0 || len(res.Files) != 1 || res.Files[0].MediaType != "image/png" {
		t.Errorf("sympy.plot: rc %d, %d files, stdout %q, stderr %q", res.ReturnCode, len(res.Files), res.Stdout, res.Stderr)
	}
	// The bash tool's python is the same build.
	if res := bash(t, a, id, `python -c 'import numpy, pandas; print(numpy.__version__, pandas.__version__)'`, 0); res.Stdout != "2.2.6 2.2.3\n" {
		t.Errorf("bash python: %+v", res)
	}
}

// pandas' compiled parts work linked into one module: time zones from the
// zone files in the site zip (pytz's and dateutil's), the C++ rolling
// windows, the C JSON codec, hashing and the C CSV tokenizer. The expected
// lines are what native CPython prints with the same package versions.
func TestScientificPandasCompiledParts(t *testing.T) {
	a := scientificAdapter(t, nil)
	id := newSession(t, a)
	expect(t, run(t, a, id, "import io\n"+
		"import numpy as np, pandas as pd, pytz\n"+
		"from dateutil import tz\n"+
		"print(pd.Timestamp('2024-03-10 12:00', tz='US/Eastern').isoformat())\n"+
		"print(pytz.timezone('Europe/Paris').utcoffset(pd.Timestamp('2024-07-01').to_pydatetime()))\n"+
		"print(pd.Timestamp('2024-01-15 09:30', tz=tz.gettz('Asia/Tokyo')).tz_convert('UTC').isoformat())\n"+
		"print(list(pd.date_range('2024-03-30', periods=3, freq='D', tz='Europe/Paris').strftime('%d %z')))\n"+
		"print(pd.Series([1.0, 2.0, 4.0, 8.0]).rolling(2).mean().tolist()[1:])\n"+
		"print(pd.Series([5.0, 1.0, 3.0, 2.0]).rolling(3).max().tolist()[2:])\n"+
		"d = pd.DataFrame({'a': [1, 2], 'b': ['x', 'y']})\n"+
		"print(d.to_json(), pd.read_json(io.StringIO(d.to_json())).equals(d))\n"+
		"print(pd.util.hash_pandas_object(pd.Series(['a', 'b']), index=False).tolist())\n"+
		"print(pd.read_csv(io.StringIO('x;y\\n1;\"a;b\"\\n2;c\\n'), sep=';').to_dict('list'))\n"+
		"print(pd.Series(np.arange(10**5) % 7).value_counts().sort_index().tolist()[:3])\n"),
		"2024-03-10T12:00:00-04:00\n"+
			"2:00:00\n"+
			"2024-01-15T00:30:00+00:00\n"+
			"['30 +0100', '31 +0100', '01 +0200']\n"+
			"[1.5, 3.0, 6.0]\n"+
			"[5.0, 3.0]\n"+
			"{\"a\":{\"0\":1,\"1\":2},\"b\":{\"0\":\"x\",\"1\":\"y\"}} True\n"+
			"[13950350942979735504, 12688059582079114975]\n"+
			"{'x': [1, 2], 'y': ['a;b', 'c']}\n"+
			"[14286, 14286, 14286]\n",
		0, port.OutcomeCompleted)
}

// numpy reads and writes real files as natively: np.save and np.load on a
// path or an open file, ndarray.tofile and numpy.fromfile (binary and
// text), their offsets shared with the Python file object around them.
// They hand C a FILE* over a duplicate descriptor, and WASI has no dup():
// they failed with "[Errno 58] Not supported". The expected lines are
// what native numpy 2.2.6 prints.
func TestScientificNumpyFiles(t *testing.T) {
	a := scientificAdapter(t, nil)
	id := newSession(t, a)
	const code = `import numpy as np, os
a = np.arange(12, dtype=np.float64).reshape(3, 4)
np.save('a.npy', a)
b = np.load('a.npy')
print(np.array_equal(a, b), b.dtype, b.shape)
with open('a2.npy', 'wb') as f:
    np.save(f, a)
    np.save(f, a * 2)
with open('a2.npy', 'rb') as f:
    print(np.load(f).sum(), np.load(f).sum())
np.savez('z.npz', x=a, y=np.arange(3))
with np.load('z.npz') as z:
    print(sorted(z.files), z['y'].tolist())
with open('raw.bin', 'wb') as f:
    f.write(b'HEAD')
    np.arange(5, dtype='<i4').tofile(f)
    f.write(b'TAIL')
print(os.path.getsize('raw.bin'))
with open('raw.bin', 'rb') as f:
    print(f.read(4), np.fromfile(f, dtype='<i4', count=5).tolist(), f.read())
np.arange(3, dtype=np.float64).tofile('t.txt', sep=',')
print(open('t.txt').read(), np.fromfile('t.txt', sep=',').tolist())
print(np.fromfile('raw.bin', dtype='<i4', count=2, offset=4).tolist())
with open('raw.bin', 'r+b') as f:
    f.seek(8)
    np.array([7], dtype='<i4').tofile(f)
    print(f.tell())
print(np.fromfile('raw.bin', dtype='<i4', count=3, offset=4).tolist())
`
	expect(t, run(t, a, id, code), "True float64 (3, 4)\n66.0 132.0\n['x', 'y'] [0, 1, 2]\n28\nb'HEAD' [0, 1, 2, 3, 4] b'TAIL'\n0.0,1.0,2.0 [0.0, 1.0, 2.0]\n[0, 1]\n12\n[0, 7, 2]\n", 0, port.OutcomeCompleted)
}

// Integer sums and products accumulate in 64 bits, as on the 64-bit
// platforms users' code is written on, though the default integer here is
// 32-bit: np.arange(100000).sum() gave 704982704. An explicit dtype and
// elementwise arithmetic stay as asked. The expected lines are what
// native numpy 2.2.6 on x86-64 prints for the same int32 arrays.
func TestScientificIntegerSumsIn64Bits(t *testing.T) {
	a := scientificAdapter(t, nil)
	id := newSession(t, a)
	const code = `import numpy as np
a = np.arange(100000, dtype=np.int32)
print(repr(a.sum()), repr(np.sum(a)), np.array([True, True]).sum().dtype)
print(repr(np.arange(1, 20, dtype=np.int8).prod()), np.cumsum(np.array([2**31 - 1, 1], dtype=np.int32)).tolist())
print(np.arange(5, dtype=np.uint16).sum().dtype, np.add.reduce(a, dtype=np.int32), a.mean(), (a * a).dtype)
`
	expect(t, run(t, a, id, code), "np.int64(4999950000) np.int64(4999950000) int64\nnp.int64(121645100408832000) [2147483647, 2147483648]\nuint64 704982704 49999.5 int32\n", 0, port.OutcomeCompleted)
	expect(t, run(t, a, id, "print(repr(np.arange(100000).sum()))"), "np.int64(4999950000)\n", 0, port.OutcomeCompleted)
}

// numpy.testing and pandas.testing import: numpy.testing needs a module
// of numpy's tests (numpy._core.tests._natype) that the site zip left
// out with the tests, and pandas.testing imports numpy.testing. Native
// numpy 2.2.6 prints the same.
func TestScientificTestingHelpers(t *testing.T) {
	a := scientificAdapter(t, nil)
	id := newSession(t, a)
	const code = `import numpy as np, numpy.testing as npt
npt.assert_allclose([1.0, 2.0], [1.0, 2.0 + 1e-9])
npt.assert_array_equal(np.arange(3), [0, 1, 2])
try:
    npt.assert_allclose([1.0], [1.1])
except AssertionError as e:
    print('Not equal to tolerance' in str(e))
import pandas as pd, pandas.testing as pdt
pdt.assert_frame_equal(pd.DataFrame({'a': [1]}), pd.DataFrame({'a': [1]}))
try:
    pdt.assert_series_equal(pd.Series([1]), pd.Series([2]))
except AssertionError as e:
    print(type(e).__name__)
`
	expect(t, run(t, a, id, code), "True\nAssertionError\n", 0, port.OutcomeCompleted)
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
// the module's interrupt checks are in every loop, numpy's and OpenBLAS's
// (its SIMD DGEMM kernel included) too. The limit leaves room for
// OpenBLAS's 16 MiB GEMM buffer, which the image's warm-up allocates.
func TestScientificLimitsHoldInsideNumpy(t *testing.T) {
	a := scientificAdapter(t, func(c Config) Config { return c.WithMemoryLimit(256 << 20) })
	id := newSession(t, a)
	// The matrix is made beforehand: within the 1 s deadline, on a loaded
	// machine, there is only the line to print before the long product:
	// one DGEMM call of 31 GFLOP, seconds even at native speed.
	run(t, a, id, "import numpy as np\nkept = np.arange(3)\nm = np.ones((2500, 2500))")
	res := runTimeout(t, a, id, "print('start', flush=True)\nm @ m", time.Second)
	if res.Outcome != port.OutcomeTimedOut || res.Stdout != "start\n" {
		t.Fatalf("a long matmul under a 1 s deadline: %+v", res)
	}
	lost := res.StateLost
	// np.linalg through lapack_lite and OpenBLAS: an SVD of 1000x1000.
	res = runTimeout(t, a, id, "import numpy as np\nprint('start', flush=True)\nnp.linalg.svd(np.ones((1000, 1000)) + np.eye(1000))", 300*time.Millisecond)
	if res.Outcome != port.OutcomeTimedOut || res.Stdout != "start\n" {
		t.Fatalf("a long SVD under a 0.3 s deadline: %+v", res)
	}
	lost = lost || res.StateLost
	res = run(t, a, id, "import numpy as np\nbig = np.ones(10**8)")
	if res.Outcome != port.OutcomeProgramError || !strings.Contains(res.Stderr, "MemoryError") {
		if res.Outcome != port.OutcomeMemoryLimit {
			t.Fatalf("np.ones(10**8) under 256 MiB: %+v", res)
		}
	}
	lost = lost || res.StateLost
	// Matrix products, each a BLAS call, until the memory runs out.
	res = run(t, a, id, "import numpy as np\nq = np.ones((600, 600))\nacc = []\nwhile True:\n    acc.append(q @ q)")
	if res.Outcome != port.OutcomeProgramError || !strings.Contains(res.Stderr, "MemoryError") {
		if res.Outcome != port.OutcomeMemoryLimit {
			t.Fatalf("products until the memory runs out under 256 MiB: %+v", res)
		}
	}
	want := "3\n"
	if lost || res.StateLost {
		want = "reset\n"
	}
	expect(t, run(t, a, id, "acc = None\nprint(kept.sum() if 'kept' in globals() else 'reset')"), want, 0, port.OutcomeCompleted)
	// And BLAS still works after all that.
	expect(t, run(t, a, id, "import numpy as np\nprint((np.ones((300, 300)) @ np.ones((300, 300)))[7, 9])"), "300.0\n", 0, port.OutcomeCompleted)
}

// numpy is linked against OpenBLAS (built by the runtime's openblas step,
// with a SIMD128 DGEMM kernel of codeport's own), and lapack_lite's LAPACK
// calls it: np.show_config() names it, and the products and np.linalg's
// solve, inv, eig, eigh, svd, lstsq and det on a fixed random 200x200
// matrix satisfy the identities that define them, in every precision and
// at sizes that leave the kernel's edge blocks (odd shapes, transposed and
// strided operands) checked against einsum's own loops. A call through a
// mismatched prototype would trap, and a wrong kernel would fail allclose.
func TestScientificNumpyLinalgThroughOpenBLAS(t *testing.T) {
	a := scientificAdapter(t, nil)
	id := newSession(t, a)
	const code = `import numpy as np
deps = np.show_config(mode='dicts')['Build Dependencies']
print(deps['blas']['name'], deps['blas']['found'], deps['blas']['version'], deps['lapack']['name'])
rng = np.random.default_rng(31)
A = rng.standard_normal((200, 200)); b = rng.standard_normal(200); I = np.eye(200)
x = np.linalg.solve(A, b)
w, v = np.linalg.eig(A)
S = A + A.T
ws, vs = np.linalg.eigh(S)
u, s, vt = np.linalg.svd(A)
lx = np.linalg.lstsq(A[:, :150], b, rcond=None)[0]
print(np.allclose(A @ x, b), np.allclose(A @ np.linalg.inv(A), I), np.allclose(A @ v, v * w),
      np.allclose(S @ vs, vs * ws), np.allclose((u * s) @ vt, A), bool(np.all(np.diff(s) <= 0)),
      np.allclose(A[:, :150].T @ (A[:, :150] @ lx - b), 0), np.isclose(np.linalg.det(A), np.prod(np.linalg.eigvals(A)).real))
ok = []
for m, k, n in [(200, 200, 200), (37, 53, 29), (1, 9, 1), (8, 4, 8), (65, 1, 33), (130, 257, 3)]:
    for dt in (np.float64, np.float32, np.complex128):
        P = rng.standard_normal((m, k)).astype(dt); Q = rng.standard_normal((k, n)).astype(dt)
        ref = np.einsum('ij,jk->ik', P, Q, optimize=False)
        tol = 1e-4 if dt == np.float32 else 1e-10
        ok.append(np.allclose(P @ Q, ref, rtol=tol, atol=tol) and np.allclose((Q.T @ P.T).T, ref, rtol=tol, atol=tol))
R = rng.standard_normal((300, 300))
ok.append(np.allclose(R[::2, 1::2] @ R[1::2, ::2].T, np.einsum('ij,kj->ik', R[::2, 1::2], R[1::2, ::2], optimize=False)))
ok.append(np.allclose(R @ R[0], np.einsum('ij,j->i', R, R[0], optimize=False)) and np.isclose(R[0] @ R[1], (R[0] * R[1]).sum()))
print(all(ok), len(ok))
`
	expect(t, run(t, a, id, code), "openblas True 0.3.29 none\nTrue True True True True True True True\nTrue 20\n", 0, port.OutcomeCompleted)
}

// Pillow draws, converts and saves the formats its build has, and a PNG it
// saves comes back inline with the result. Each method below was a trap
// ("indirect call type mismatch") before patches/pillow-11.3.0-wasi.patch
// gave it the parameters Python calls it with.
func TestPillowDrawsAndSaves(t *testing.T) {
	a := scientificAdapter(t, nil)
	id := newSession(t, a)
	res := run(t, a, id, `from PIL import Image, ImageDraw, ImageFilter, ImageFont
import numpy as np
im = Image.new('RGB', (64, 48), 'white')
d = ImageDraw.Draw(im)
d.rectangle([4, 4, 30, 40], fill=(200, 30, 30), outline='black')
d.line([(0, 47), (63, 0)], fill='blue', width=3)
d.ellipse([36, 8, 60, 32], fill='green')
d.text((34, 36), 'ok', fill='black', font=ImageFont.load_default_imagefont())
im.save('chart.png')
im.save('chart.gif')
im.save('chart.bmp')
im.quantize(16).save('chart.pdf', save_all=True, append_images=[im.quantize(4)])
print(Image.open('chart.png').getpixel((10, 10)), Image.open('chart.gif').mode, Image.open('chart.bmp').size)
print(im.getextrema(), len(im.split()), im.convert('L').getprojection()[0][:4], im.im.getpalettemode() if im.mode == 'P' else '-')
print(im.quantize(8).mode, im.convert('P', palette=Image.Palette.ADAPTIVE).mode, im.im.isblock())
a = np.asarray(im)
print(a.shape, a.dtype, a[10, 10].tolist(), Image.fromarray(a[::2, ::2]).size)
print(im.filter(ImageFilter.GaussianBlur(2)).resize((32, 24)).rotate(30, expand=True).size)
import hashlib
png = Image.open('chart.png')
png.load()
print(*(hashlib.sha256(b).hexdigest()[:16] for b in (png.tobytes(), open('chart.gif', 'rb').read(), open('chart.bmp', 'rb').read())))
`)
	// Pillow 11.3.0 and numpy 2.2.6 from their wheels, natively (CPython
	// 3.11), print the same: the same pixels, GIF and BMP byte for byte
	// (with the bitmap font: native Pillow's default is a TrueType one).
	want := "(200, 30, 30) P (64, 48)\n((0, 255), (0, 255), (0, 255)) 3 [1, 1, 1, 1] -\nP P False\n" +
		"(48, 64, 3) uint8 [200, 30, 30] (32, 24)\n(40, 38)\n3f75216a96320645 a85273f738562c92 d06cca1556a75e2d\n"
	if res.Stdout != want || res.ReturnCode != 0 {
		t.Fatalf("stdout %q, stderr %s\nwant %q", res.Stdout, res.Stderr, want)
	}
	var png port.OutputFile
	for _, f := range res.Files {
		if f.Filename == "chart.png" {
			png = f
		}
	}
	if png.MediaType != "image/png" || len(png.Data) == 0 {
		t.Errorf("chart.png does not come back inline: %+v", png)
	}
	// TrueType text through FreeType (matplotlib's DejaVu Sans): the
	// pixels of Pillow 11.3.0's wheel, whose FreeType is also 2.13.3, with
	// the basic layout (the wheel's default is raqm's, not built here); and
	// the variation-font methods, patched like the nine above (in _imagingft), answer a
	// plain font with OSError rather than trapping.
	expect(t, run(t, a, id, "import hashlib, matplotlib\n"+
		"from PIL import Image, ImageDraw, ImageFont\n"+
		"f = ImageFont.truetype(matplotlib.get_data_path() + '/fonts/ttf/DejaVuSans.ttf', 20, layout_engine=ImageFont.Layout.BASIC)\n"+
		"im = Image.new('L', (120, 30), 0)\n"+
		"ImageDraw.Draw(im).text((2, 2), 'Hello, αβγ', fill=255, font=f)\n"+
		"print(f.getbbox('Hello, αβγ'), hashlib.sha256(im.tobytes()).hexdigest()[:16])\n"+
		"for m in (f.get_variation_names, f.get_variation_axes):\n"+
		"    try:\n        m()\n    except OSError as e:\n        print('OSError', e)\n"),
		"(0, 4, 101, 23) 3f58858a5d2c2aa8\nOSError invalid argument\nOSError invalid argument\n", 0, port.OutcomeCompleted)
	// The PDF has its two pages (PdfParser, patched to do without mmap,
	// reads it back). An RGB page needs the JPEG encoder.
	expect(t, run(t, a, id, "from PIL import PdfParser\np = PdfParser.PdfParser('chart.pdf')\nprint(open('chart.pdf', 'rb').read(5), len(p.pages))"),
		"b'%PDF-' 2\n", 0, port.OutcomeCompleted)
}

// np.sort of the 16-, 32- and 64-bit integers, float32 and float64 goes
// to a radix sort (the 32- and 64-bit types, but for short arrays) or to
// Highway's vqsort built with SIMD128 (patches/numpy-*-wasi-vqsort.patch
// in the runtime): for each of those dtypes, 10^6 random values with
// duplicates, the type's extremes and, for floats, NaNs, infinities, 0.0
// and -0.0 sort as Python's sorted() does (NaNs last, with as many -0.0 as
// the input had, all of them before the 0.0: numpy's own introsort leaves
// the two in no such order), and so do short, presorted, reversed and
// constant arrays, values of a small range about 0 (which the radix sort
// sorts by their difference from the least), columns (axis=0) and
// ndarray.sort in place.
// kind='stable' and argsort, which keep numpy's own sorts, stay stable and
// correct.
func TestScientificSortMatchesPythonSorted(t *testing.T) {
	const slow = 10 * time.Minute
	a := scientificAdapter(t, func(c Config) Config { return c.WithTimeouts(30*time.Second, slow).WithMemoryLimit(512 << 20) })
	id := newSession(t, a)
	const code = `import numpy as np
rng = np.random.default_rng(7)
N = 10**6
def ref_sort(a):
    vals = a.tolist()
    return sorted(v for v in vals if v == v) + [v for v in vals if v != v]
def same(s, a, r=None):
    r = np.array(ref_sort(a), dtype=a.dtype) if r is None else r
    ok = s.dtype == a.dtype and np.array_equal(s, r, equal_nan=a.dtype.kind == 'f')
    return bool(ok and np.signbit(s[s == 0]).sum() == np.signbit(a[a == 0]).sum())
out = []
for dt in ['int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64', 'long', 'ulong', 'float32', 'float64']:
    t = np.dtype(dt)
    if t.kind == 'f':
        a = rng.standard_normal(N).astype(t)
        for v, k in [(np.nan, 1000), (0.0, 1000), (-0.0, 1000), (np.inf, 100), (-np.inf, 100)]:
            a[rng.integers(0, N, k)] = v
        a[:3] = [np.finfo(t).max, np.finfo(t).min, np.finfo(t).tiny]
        small = np.round(a[3:20003], 1)
    else:
        i = np.iinfo(t)
        a = rng.integers(i.min, i.max, N, dtype=t, endpoint=True)
        a[rng.integers(0, N, 10000)] = 3
        a[:2] = [i.min, i.max]
        small = a[:20000] % 50
    bad = []
    r = np.array(ref_sort(a), dtype=t)
    cases = [a[:0], a[:1], a[:2], a[:17], a[:1000], np.sort(a[:5000]), np.sort(a[:5000])[::-1].copy(), np.full(3000, a[5], dtype=t),
             rng.integers(-300, 300, N // 4).astype(t)]
    s = np.sort(a)
    if not same(s, a, r) or not all(same(np.sort(c), c) for c in cases):
        bad.append('np.sort')
    if (np.diff(np.signbit(s[s == 0]).astype(int)) > 0).any():
        bad.append('-0.0 after 0.0')
    b = a.copy()
    b.sort()
    if not same(b, a, r):
        bad.append('ndarray.sort')
    m = a[:100000].reshape(100, 1000)
    if not all(same(col, orig) for col, orig in zip(np.sort(m, axis=0).T, m.T)):
        bad.append('axis=0')
    st = np.argsort(small, kind='stable')
    key = [(v != v, 0 if v != v else v) for v in small.tolist()]
    if st.tolist() != sorted(range(len(key)), key=key.__getitem__):
        bad.append('argsort stable')
    if not np.array_equal(np.sort(small, kind='stable'), small[st], equal_nan=t.kind == 'f'):
        bad.append('sort stable')
    if not same(a[np.argsort(a)], a, r):
        bad.append('argsort')
    out.append(dt + ' ' + (' '.join(bad) or 'ok'))
print(', '.join(out))
`
	expect(t, runTimeout(t, a, id, code, slow),
		"int16 ok, uint16 ok, int32 ok, uint32 ok, int64 ok, uint64 ok, long ok, ulong ok, float32 ok, float64 ok\n", 0, port.OutcomeCompleted)
}
