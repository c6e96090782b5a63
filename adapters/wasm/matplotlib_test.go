package wasm

import (
	"bytes"
	"context"
	stdimage "image"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codeport/codeport/conformance"
	"github.com/codeport/codeport/port"
)

// chartTolerance is the largest root-mean-square difference, over every
// channel of every pixel (0 to 255), that a chart with text drawn here may
// have from matplotlib's own wheels' drawing of the same code: the measure
// of matplotlib's test suite (matplotlib.testing.compare). Its charts
// differ only where there is text: this runtime's FreeType is 2.13.3, the
// wheels' 2.6.1, whose glyphs are rasterized a little differently even
// unhinted (chartsPrefix turns hinting off, as matplotlib's own image
// tests do), and whose text extents can move a legend's frame or a constrained
// layout's axes by a fraction of a pixel. Measured: 0.4 to 6.6 across the
// ten charts (unicode.png, the most text, is the largest). Everything
// else is checked exactly: the same charts without text ("bare-*") must
// be identical to the pixel.
const chartTolerance = 8.0

// rmsDiff is matplotlib.testing.compare's measure of two images.
func rmsDiff(a, b stdimage.Image) (float64, bool) {
	if a.Bounds() != b.Bounds() {
		return 0, false
	}
	var sum float64
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			ar, ag, ab, aa := a.At(x, y).RGBA()
			br, bg, bb, ba := b.At(x, y).RGBA()
			for _, d := range [4]float64{
				float64(ar>>8) - float64(br>>8), float64(ag>>8) - float64(bg>>8),
				float64(ab>>8) - float64(bb>>8), float64(aa>>8) - float64(ba>>8),
			} {
				sum += d * d
			}
		}
	}
	return math.Sqrt(sum / float64(4*r.Dx()*r.Dy())), true
}

// chartsPrefix turns FreeType's hinting off, as matplotlib's own image
// tests do (matplotlib.testing.setup): hinting changes between FreeType
// versions (this runtime has 2.13.3, the wheels 2.6.1), and text sizes
// move layouts.
const chartsPrefix = `import matplotlib
matplotlib.rcParams["text.hinting"] = "none"
matplotlib.rcParams["text.hinting_factor"] = 8
`

// chartsSuffix draws the charts again without text (axes off, no titles,
// legends, labels or colour bar): what is left is Agg's rendering of
// paths, markers, contours, triangulations and images, which must come
// out pixel for pixel as the wheels draw it.
const chartsSuffix = `
def bare(name, draw, **kw):
    fig, ax = plt.subplots(**kw)
    draw(ax)
    for a in fig.axes:
        a.set_axis_off()
    fig.savefig("charts/bare-%s.png" % name)
    plt.close(fig)


bare("line", lambda ax: (ax.plot(x, np.sin(x)), ax.plot(x, np.cos(x), "--")))
bare("bar", lambda ax: ax.bar(["Q1", "Q2", "Q3", "Q4"], [3, 7, 2, 5]))
bare("hist", lambda ax: ax.hist(np.random.default_rng(0).normal(size=1000), bins=30))
bare("scatter", lambda ax: ax.scatter(*np.random.default_rng(1).random((2, 100)), c=np.random.default_rng(2).random(100)))
bare("contour", lambda ax: ax.contour(X, Y, Z, levels=8))
bare("tricontour", lambda ax: ax.tricontourf(px, py, np.sin(6 * px) * np.cos(6 * py)))
bare("imshow", lambda ax: ax.imshow(Z, cmap="magma"))
print(sorted(f for f in os.listdir("charts") if f.startswith("bare-")))
`

// chartsScript is what TestMatplotlibChartsMatchNative runs: the
// conformance chart set between chartsPrefix and chartsSuffix. To draw
// the reference images natively, write it out (CODEPORT_CHARTS_OUT, see
// below) and run it with matplotlib's wheels:
//
//	python -m venv v && v/bin/pip install matplotlib==3.10.9 numpy==2.2.6 \
//	  pandas==2.2.3 contourpy==1.3.3 kiwisolver==1.5.1 pillow==11.3.0
//	cd "$CODEPORT_CHARTS_OUT" && v/bin/python charts.py && mv charts/*.png adapters/wasm/testdata/charts/native/
//
// (the SVG and PDF files are not compared: they embed the renderer's
// version and, for PDF, a creation date).
func chartsScript() string { return chartsPrefix + conformance.ChartSet + chartsSuffix }

// The ten charts of the conformance chart set come out as matplotlib's
// own wheels draw them (testdata/charts/native): within chartTolerance,
// and their text-free versions pixel for pixel. With CODEPORT_CHARTS_OUT
// set to a directory, the script and the sandbox's images are written
// there too.
func TestMatplotlibChartsMatchNative(t *testing.T) {
	code := chartsScript()
	if dir := os.Getenv("CODEPORT_CHARTS_OUT"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "charts.py"), []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	refs, err := filepath.Glob("testdata/charts/native/*.png")
	if err != nil || len(refs) != 17 {
		t.Fatalf("testdata/charts/native holds %d PNGs (%v), want 17", len(refs), err)
	}
	a := scientificAdapter(t, nil)
	id := newSession(t, a)
	res := runTimeout(t, a, id, code, 5*time.Minute) // seconds of work, stretched by load
	if res.ReturnCode != 0 || !strings.HasPrefix(res.Stdout, "agg\n") {
		t.Fatalf("the chart set: rc %d, stdout %q, stderr %q", res.ReturnCode, res.Stdout, res.Stderr)
	}
	for _, ref := range refs {
		name := filepath.Base(ref)
		want, err := os.ReadFile(ref)
		if err != nil {
			t.Fatal(err)
		}
		rc, _, err := a.GetFile(context.Background(), id, "charts/"+name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if dir := os.Getenv("CODEPORT_CHARTS_OUT"); dir != "" {
			// To look at what the sandbox drew beside testdata/charts/native.
			if err := os.WriteFile(filepath.Join(dir, name), got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		gi, err := png.Decode(bytes.NewReader(got))
		if err != nil {
			t.Fatalf("%s: not a PNG: %v", name, err)
		}
		wi, err := png.Decode(bytes.NewReader(want))
		if err != nil {
			t.Fatal(err)
		}
		tolerance := chartTolerance
		if strings.HasPrefix(name, "bare-") {
			tolerance = 0
		}
		rms, ok := rmsDiff(gi, wi)
		switch {
		case !ok:
			t.Errorf("%s: %v, native %v", name, gi.Bounds(), wi.Bounds())
		case rms > tolerance:
			t.Errorf("%s: RMS difference %.3f from native, over %.1f", name, rms, tolerance)
		default:
			t.Logf("%s: RMS difference %.3f from native (identical bytes: %v)", name, rms, bytes.Equal(got, want))
		}
	}
}

// Figures come back as a notebook shows them, and errors raised inside
// the C++ of matplotlib, contourpy and kiwisolver are Python exceptions
// the program catches (the conformance check packages/matplotlib runs
// the same through the port); here, what only the adapter shows: the
// session's variables survive many caught exceptions, and a figure's
// image is inline in the result.
func TestMatplotlibExceptionsAndFigures(t *testing.T) {
	a := scientificAdapter(t, nil)
	id := newSession(t, a)
	expect(t, run(t, a, id, "import contourpy, numpy as np\n"+
		"kept = 7\n"+
		"n = 0\n"+
		"for i in range(200):\n"+
		"    try:\n"+
		"        contourpy.contour_generator(z=np.arange(9.0).reshape(3, 3)).filled(5, 1)\n"+
		"    except ValueError:\n"+
		"        n += 1\n"+
		"print(n, kept)"), "200 7\n", 0, port.OutcomeCompleted)
	res := run(t, a, id, "import matplotlib.pyplot as plt\nfig = plt.figure(figsize=(2, 1), dpi=50)\nplt.plot([0, 1], [1, 0]);")
	if res.ReturnCode != 0 || len(res.Files) != 1 {
		t.Fatalf("a figure left open: rc %d, %d files, stderr %q", res.ReturnCode, len(res.Files), res.Stderr)
	}
	f := res.Files[0]
	if f.MediaType != "image/png" || port.InlineImageType(f.Data) != "image/png" || !strings.HasPrefix(f.Filename, ".display/") {
		t.Fatalf("the figure's file: %s %q, %d inline bytes", f.Filename, f.MediaType, len(f.Data))
	}
	img, err := png.Decode(bytes.NewReader(f.Data))
	if err != nil {
		t.Fatal(err)
	}
	// The figure's 100x50 pixels, cropped or widened to what is drawn
	// (bbox_inches="tight", as Jupyter's inline backend does).
	if b := img.Bounds(); b.Dx() < 50 || b.Dx() > 150 || b.Dy() < 25 || b.Dy() > 100 {
		t.Errorf("the figure's image is %v", b)
	}
	// Display off: figures stay open, nothing is shown.
	off := false
	res, err = a.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolCodeExecution,
		Code: "plt.plot([1, 2])\nplt.show()\nprint(plt.get_fignums())", DisplayValues: &off})
	if err != nil || res.ReturnCode != 0 || res.Stdout != "[1]\n" || len(res.Files) != 0 {
		t.Errorf("display off: rc %d, stdout %q, %d files, %v", res.ReturnCode, res.Stdout, len(res.Files), err)
	}
	// A figure that cannot be drawn is reported, closed, and the cell's
	// other figures still come back.
	res = run(t, a, id, "plt.close('all')\n"+
		"bad = plt.figure()\nbad.text(0.5, 0.5, r'$\\frac{$')\n"+
		"good = plt.figure()\nplt.plot([1, 2]);")
	if res.ReturnCode != 0 || plotCount(res) != 1 || !strings.Contains(res.Stderr, "[codeport: figure 1 could not be drawn: ValueError") {
		t.Errorf("a cell with a figure that cannot be drawn: rc %d, %d images, stderr %q", res.ReturnCode, plotCount(res), res.Stderr)
	}
	expect(t, run(t, a, id, "print(plt.get_fignums(), kept)"), "[] 7\n", 0, port.OutcomeCompleted)
}

func plotCount(res port.Result) int {
	n := 0
	for _, f := range res.Files {
		if f.MediaType == "image/png" {
			n++
		}
	}
	return n
}

// A deadline stops a call inside matplotlib's C++ (Agg drawing a million
// points, under the invoke_ trampolines of the exception lowering): the
// interrupt passes through them rather than being caught as an exception,
// the call times out, and the session's next call runs in a fresh
// interpreter.
func TestMatplotlibDeadlineInsideCxx(t *testing.T) {
	a := scientificAdapter(t, nil)
	id := newSession(t, a)
	res := runTimeout(t, a, id, "import io, numpy as np, matplotlib.pyplot as plt\n"+
		"print('drawing', flush=True)\n"+
		"x = np.random.default_rng(0).random((2, 10**6))\n"+
		"while True:\n"+
		"    fig, ax = plt.subplots()\n"+
		"    ax.plot(x[0], x[1], ',')\n"+
		"    fig.savefig(io.BytesIO(), format='png')\n"+
		"    plt.close(fig)\n", time.Second)
	if res.Outcome != port.OutcomeTimedOut || res.Stdout != "drawing\n" {
		t.Fatalf("a drawing past its deadline: outcome %s, stdout %q, stderr %q", res.Outcome, res.Stdout, res.Stderr)
	}
	expect(t, run(t, a, id, "import matplotlib.pyplot as plt\nprint(plt.get_fignums())"), "[]\n", 0, port.OutcomeCompleted)
}

// A figure too large for the memory limit is a MemoryError the program can
// catch, not a crash: Agg's allocation fails in C++, exceptions.cpp's
// operator new throws std::bad_alloc (libc++abi's would abort), and
// pybind11 turns it into MemoryError. Left open at the cell's end, the
// figure is reported and closed, and the session keeps its variables.
func TestMatplotlibFigureTooLargeIsMemoryError(t *testing.T) {
	a := scientificAdapter(t, nil)
	id := newSession(t, a)
	expect(t, run(t, a, id, "import io, matplotlib.pyplot as plt\nkept = 7\n"+
		"fig = plt.figure(figsize=(60, 60), dpi=300)\nplt.plot([1, 2])\n"+
		"try:\n    fig.savefig(io.BytesIO(), format='png')\nexcept MemoryError as e:\n    print('MemoryError', e)\n"+
		"plt.close('all')"), "MemoryError std::bad_alloc\n", 0, port.OutcomeCompleted)
	res := run(t, a, id, "fig = plt.figure(figsize=(60, 60), dpi=300)\nplt.plot([1, 2]);")
	if res.ReturnCode != 0 || res.StateLost || !strings.Contains(res.Stderr, "could not be drawn: MemoryError") || len(res.Files) != 0 {
		t.Fatalf("a figure too large left open: rc %d, state lost %v, %d files, stderr %q", res.ReturnCode, res.StateLost, len(res.Files), res.Stderr)
	}
	expect(t, run(t, a, id, "print(plt.get_fignums(), kept)"), "[] 7\n", 0, port.OutcomeCompleted)
}
