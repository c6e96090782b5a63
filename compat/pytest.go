package compat

import (
	"archive/zip"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/codeport/codeport/port"
)

//go:embed pytest_runner.py
var pytestRunnerSource string

// Slices are the test files of numpy's and pandas' own suites that make
// compat runs in sessions of the scientific profile, with pytest: the
// array, numeric, I/O and data-frame code a model's analysis uses. Left
// out are the files that cannot load at all: those that import a test
// extension the runtime's build leaves out (numpy._core._multiarray_tests,
// _rational_tests, _umath_tests, ...) or ctypes, which WebAssembly cannot
// have (numpy's lib/tests/test_io.py, _core/tests/test_dtype.py).
func Slices() []string {
	return strings.Fields(`
		numpy/lib/tests/test_function_base.py numpy/lib/tests/test_format.py numpy/lib/tests/test_loadtxt.py
		numpy/lib/tests/test_arraysetops.py numpy/lib/tests/test_shape_base.py numpy/lib/tests/test_nanfunctions.py
		numpy/lib/tests/test_histograms.py numpy/lib/tests/test_index_tricks.py numpy/lib/tests/test_twodim_base.py
		numpy/lib/tests/test_polynomial.py
		numpy/_core/tests/test_shape_base.py numpy/_core/tests/test_einsum.py numpy/_core/tests/test_datetime.py
		numpy/_core/tests/test_arrayprint.py numpy/_core/tests/test_function_base.py numpy/_core/tests/test_errstate.py
		numpy/_core/tests/test_half.py numpy/_core/tests/test_records.py numpy/_core/tests/test_item_selection.py
		numpy/_core/tests/test_umath_complex.py numpy/_core/tests/test_scalarprint.py numpy/_core/tests/test_strings.py
		numpy/linalg/tests/test_linalg.py numpy/fft/tests/test_pocketfft.py numpy/random/tests/test_generator_mt19937.py
		numpy/ma/tests/test_core.py numpy/polynomial/tests/test_polynomial.py
		pandas/tests/frame/methods/test_sort_values.py pandas/tests/frame/methods/test_describe.py
		pandas/tests/frame/methods/test_astype.py pandas/tests/frame/methods/test_quantile.py
		pandas/tests/frame/methods/test_rank.py pandas/tests/frame/methods/test_interpolate.py
		pandas/tests/frame/methods/test_drop_duplicates.py pandas/tests/frame/methods/test_reset_index.py
		pandas/tests/io/parser/test_header.py pandas/tests/io/parser/test_na_values.py
		pandas/tests/io/parser/test_parse_dates.py pandas/tests/reshape/test_pivot.py
		pandas/tests/reshape/test_cut.py pandas/tests/groupby/test_groupby.py pandas/tests/window/test_rolling.py
		pandas/tests/tools/test_to_datetime.py pandas/tests/io/formats/test_to_csv.py`)
}

// sourceWheels are the packages whose wheels hold the test files, by the
// first component of a slice's path. Their conftest.py files are uploaded
// with a slice, except numpy's top one: it imports
// numpy._core._multiarray_tests (for a check of the FPU's mode), which
// the runtime leaves out; what else it sets (hypothesis profiles, fixtures
// of doctests and StringDType tests) the runner sets or the slices do not
// use.
var sourceWheels = map[string]struct{ skipConftest string }{
	"numpy":  {skipConftest: "numpy/conftest.py"},
	"pandas": {},
}

// Wheels are the pinned wheels of compat/wheels.sh: numpy's and pandas'
// (the slices' test files) and pytest's with what it and the tests
// import.
type Wheels struct {
	tools    []string               // paths of the wheels a session imports
	sources  map[string]*zip.Reader // numpy, pandas
	versions map[string]string
	closers  []io.Closer
}

// OpenWheels opens the directory wheels.sh prints.
func OpenWheels(dir string) (*Wheels, error) {
	found, err := filepath.Glob(filepath.Join(dir, "*.whl"))
	if err != nil || len(found) == 0 {
		return nil, fmt.Errorf("compat: no wheels in %s (compat/wheels.sh fetches them)", dir)
	}
	w := &Wheels{sources: map[string]*zip.Reader{}, versions: map[string]string{}}
	for _, f := range found {
		name, version, _ := strings.Cut(filepath.Base(f), "-")
		version, _, _ = strings.Cut(version, "-")
		if _, ok := sourceWheels[name]; !ok {
			w.tools = append(w.tools, f)
			continue
		}
		if w.sources[name] != nil {
			w.Close()
			return nil, fmt.Errorf("compat: two %s wheels in %s", name, dir)
		}
		zr, err := zip.OpenReader(f)
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("compat: %w", err)
		}
		w.closers = append(w.closers, zr)
		w.sources[name] = &zr.Reader
		w.versions[name] = version
	}
	for name := range sourceWheels {
		if w.sources[name] == nil {
			w.Close()
			return nil, fmt.Errorf("compat: no %s wheel in %s (compat/wheels.sh fetches it)", name, dir)
		}
	}
	return w, nil
}

// Close closes the source wheels.
func (w *Wheels) Close() error {
	var first error
	for _, c := range w.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Has reports whether file is a test file of a source wheel
// (numpy/lib/tests/test_io.py).
func (w *Wheels) Has(file string) bool {
	zr := w.sources[strings.SplitN(file, "/", 2)[0]]
	if zr == nil || !strings.HasSuffix(file, ".py") || !strings.HasPrefix(path.Base(file), "test_") || path.Clean(file) != file {
		return false
	}
	_, err := zr.Open(file)
	return err == nil
}

// files lists what a session running file needs from its wheel: the file
// and the helper modules beside it (numpy's _natype.py, pandas'
// common.py: every .py there but the other test files), the test
// packages' __init__.py and every conftest.py on its way down from the
// package, and the data directory beside it.
func (w *Wheels) files(file string) (*zip.Reader, []string) {
	pkg := strings.SplitN(file, "/", 2)[0]
	zr := w.sources[pkg]
	want := map[string]bool{file: true}
	dir := path.Dir(file)
	for d := dir; d != "."; d = path.Dir(d) {
		if c := d + "/conftest.py"; c != sourceWheels[pkg].skipConftest {
			want[c] = true
		}
		if strings.Contains(d+"/", "/tests/") {
			want[d+"/__init__.py"] = true
		}
	}
	var out []string
	for _, f := range zr.File {
		helper := path.Dir(f.Name) == dir && strings.HasSuffix(f.Name, ".py") && !strings.HasPrefix(path.Base(f.Name), "test_")
		if want[f.Name] || helper || strings.HasPrefix(f.Name, dir+"/data/") && !strings.HasSuffix(f.Name, "/") {
			out = append(out, f.Name)
		}
	}
	return zr, out
}

// RunFile runs a test file of numpy's or pandas' suite in a new session
// of p, which must run the scientific profile (destroyed afterwards),
// with timeout for the whole file. The result's Module is the file.
func (w *Wheels) RunFile(ctx context.Context, p port.CodeExecutionPort, file string, timeout time.Duration) (Result, error) {
	if !w.Has(file) {
		return Result{}, fmt.Errorf("compat: no test file %q in the wheels", file)
	}
	versions, err := json.Marshal(w.versions)
	if err != nil {
		return Result{}, err
	}
	code := strings.Replace(pytestRunnerSource, "FILE = None", "FILE = "+strconv.Quote(file), 1)
	code = strings.Replace(code, "RESULT = None", "RESULT = "+strconv.Quote(resultFile), 1)
	code = strings.Replace(code, "VERSIONS = None", "VERSIONS = "+string(versions), 1)
	return inSession(ctx, p, file, func(id string) error {
		for _, t := range w.tools {
			if err := putFile(ctx, p, id, t, "wheels/"+filepath.Base(t)); err != nil {
				return fmt.Errorf("uploading %s: %w", filepath.Base(t), err)
			}
		}
		zr, names := w.files(file)
		for _, name := range names {
			f, err := zr.Open(name)
			if err != nil {
				return err
			}
			_, err = p.PutFile(ctx, id, "t/"+name, f)
			f.Close()
			if err != nil {
				return fmt.Errorf("uploading %s: %w", name, err)
			}
		}
		return nil
	}, code, timeout)
}

func putFile(ctx context.Context, p port.CodeExecutionPort, id, src, dst string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = p.PutFile(ctx, id, dst, f)
	return err
}
