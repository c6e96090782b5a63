// Package scientific holds the scientific runtime profile: the same CPython
// 3.13 build as the default runtime, with the extension modules of numpy,
// pandas, Pillow, matplotlib, contourpy and kiwisolver linked into the
// module (registered as built-in modules under their dotted names), and
// the packages' Python code, with their pure-Python dependencies and
// sympy with mpmath, in a second zip beside the standard library
// (matplotlib's data is also served as files, see SiteDir). Programs link
// it by importing adapters/wasm/scientific. Both are made by
// ../runtime/build.sh --profile scientific from upstream sources fetched
// by package name and checked by sha256; runtime/SHA256SUMS names them.
//
//	py := scientific.Runtime()
//	compiled, err := rt.CompileModule(ctx, py.Module)
//	fsCfg := wazero.NewFSConfig().WithFSMount(py.Lib, cpython.StdlibDir)
package scientific

import (
	"embed"
	"io/fs"

	"github.com/codeport/codeport/adapters/wasm/internal/cpython"
	"github.com/codeport/codeport/port"
)

// Profile is the name the Profile setting uses for this runtime.
const Profile = "scientific"

// SiteZip is the zip of the packages' Python code; the module's entry code
// puts it on sys.path after the standard library's.
const SiteZip = "site-scientific.zip"

// SiteDir is where files of SiteZip that are opened by path are served as
// files, beside it in the library directory: SiteDir/MatplotlibData.
const SiteDir = "site-scientific"

// MatplotlibData is matplotlib's data directory inside SiteZip.
const MatplotlibData = "matplotlib/mpl-data"

//go:embed runtime/python-scientific.wasm
var module []byte

//go:embed runtime/SHA256SUMS
var sums string

//go:embed runtime/site-scientific.zip
var artifacts embed.FS

// Runtime returns the scientific runtime: its library is the default
// runtime's standard-library zip and SiteZip.
func Runtime() cpython.Runtime {
	sub, _ := fs.Sub(artifacts, "runtime") // a valid name of an embedded folder: no error
	layers := []fs.FS{cpython.Stdlib(), sub}
	// matplotlib's data (fonts, styles, matplotlibrc), which it opens by
	// path, as files beside the zip (see the matplotlib datapath patch).
	// Only a damaged embed fails here; matplotlib's import then names the
	// missing directory, and TestMatplotlibDataIsServed fails.
	if zipData, err := artifacts.ReadFile("runtime/" + SiteZip); err == nil {
		if data, err := cpython.ZipDir(zipData, SiteDir, MatplotlibData); err == nil {
			layers = append(layers, data)
		}
	}
	return cpython.Runtime{
		Profile: Profile,
		Module:  module,
		Lib:     cpython.Union(layers...),
		// Its library includes the default runtime's standard library.
		ID: sums + cpython.BuildID(),
		Packages: []port.Package{
			{Name: "numpy", Version: NumpyVersion},
			{Name: "pandas", Version: PandasVersion},
			{Name: "dateutil", Version: "2.9.0.post0"},
			{Name: "pytz", Version: "2025.2"},
			{Name: "six", Version: "1.17.0"},
			{Name: "sympy", Version: SympyVersion},
			{Name: "mpmath", Version: "1.3.0"},
			{Name: "PIL", Version: PillowVersion},
			{Name: "matplotlib", Version: MatplotlibVersion},
			{Name: "contourpy", Version: "1.3.3"},
			{Name: "kiwisolver", Version: "1.5.1"},
			{Name: "cycler", Version: "0.12.1"},
			{Name: "fontTools", Version: "4.68.0"},
			{Name: "pyparsing", Version: "3.3.3"},
			{Name: "packaging", Version: "26.4"},
		},
		// pandas imports numpy, dateutil, pytz and six, sympy imports
		// mpmath: the image holds them all imported, so no session pays the
		// seconds pandas' import takes in this runtime, nor sympy's 0.8 s
		// (an idle session costs about 1 MiB more with sympy in the image).
		// Pillow's Image and ImageDraw, and the format plugins its save and
		// open load first (Image.preinit): a first PNG drawn and saved
		// takes 4.6 ms instead of 28.
		// matplotlib.pyplot with the Agg backend, which pyplot loads at
		// the first figure: the image holds the font list matplotlib
		// builds at its first import (reading every font it ships).
		Warm: []string{"numpy", "pandas", "sympy", "PIL.Image", "PIL.ImageDraw",
			"PIL.BmpImagePlugin", "PIL.GifImagePlugin", "PIL.JpegImagePlugin", "PIL.PpmImagePlugin", "PIL.PngImagePlugin",
			"matplotlib.pyplot", "matplotlib.backends.backend_agg"},
		Limitations: limitations(),
	}
}

// NumpyVersion is the numpy release linked in.
const NumpyVersion = "2.2.6"

// PandasVersion is the pandas release linked in.
const PandasVersion = "2.2.3"

// PillowVersion is the Pillow release linked in (imported as PIL).
const PillowVersion = "11.3.0"

// SympyVersion is the sympy release in the site zip.
const SympyVersion = "1.14.0"

// MatplotlibVersion is the matplotlib release linked in.
const MatplotlibVersion = "3.10.9"

// limitations are what the packages cannot do in this build, each checked
// by a test of the adapter.
func limitations() []string {
	return []string{
		"numpy has no floating-point error flags here (WebAssembly has none): np.seterr(all='raise') and np.errstate never raise or warn; division by zero, overflow and invalid operations silently give inf, nan or 0",
		"numpy's default integer is 32-bit (np.int_ and np.intp are int32 on wasm32): elementwise arithmetic on default integers wraps at 2**31, so pass dtype=np.int64 for large integers; sums and products of integer arrays accumulate in int64 as on 64-bit platforms; np.longdouble is IEEE binary128 in software",
		"numpy's BLAS is OpenBLAS 0.3.29 built for WebAssembly, single-threaded, with a SIMD DGEMM kernel (other precisions use its generic C kernels), and its LAPACK is numpy's bundled lapack_lite: a 200x200 float64 matrix product takes about 2 ms, several times native numpy's; numpy's other loops have no SIMD but np.sort's (Highway's vqsort for 16-bit integers and short arrays; longer 32- and 64-bit integer and float arrays are radix-sorted)",
		"pandas has none of its optional engines (no pyarrow, openpyxl, lxml, SQLAlchemy or scipy): read_parquet, read_excel and read_html raise ImportError; CSV, JSON, pickle and in-memory work need none of them; memory_map=True is refused (no mmap)",
		"sympy has no optional backends but matplotlib: sympy.parsing.latex.parse_latex raises ImportError (no antlr4), and nothing compiles code (autowrap, llvmjitcode); lambdify works with numpy, mpmath and math",
		"Pillow (import PIL) is built with zlib and FreeType: PNG, GIF, BMP, ICO, PPM, TGA, PCX and uncompressed TIFF read and write, and ImageFont.truetype loads fonts by path (matplotlib's DejaVu fonts are in matplotlib.get_data_path() + '/fonts/ttf'; no complex-script layout); JPEG, JPEG 2000 and WebP are not available (saving raises OSError or ValueError), so PDF writes palette images only (convert with quantize() first: Pillow stores RGB, L and 1-bit pages as JPEG)",
		"matplotlib draws with its Agg backend only (PNG, SVG, PDF and PostScript files; no windows, no animation writers such as ffmpeg, no usetex/LaTeX); with display on, figures open at a cell's end or passed to plt.show() come back as PNG images and are closed; text uses the fonts matplotlib ships (DejaVu, STIX, Computer Modern), rendered by FreeType 2.13 rather than the 2.6.1 of matplotlib's own wheels, so antialiased glyph edges can differ from theirs",
		"scipy is not installed (it needs a Fortran compiler for WebAssembly): import scipy raises ModuleNotFoundError, and so do pandas' and sympy's features that use it",
	}
}
