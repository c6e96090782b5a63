package compat

import (
	"archive/zip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/codeport/codeport/port"
)

func TestParseExpectations(t *testing.T) {
	exp, err := ParseExpectations(strings.NewReader("# a comment\n\ntest.test_os.A.test_b\tWASI has no x\ntest_time\tcannot be loaded: y\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(exp) != 2 || exp["test.test_os.A.test_b"] != "WASI has no x" || exp["test_time"] != "cannot be loaded: y" {
		t.Fatalf("%v", exp)
	}
	for _, bad := range []string{
		"test.test_os.A.test_b\n",                                  // no reason
		"test.test_os.A.test_b\t \n",                               // an empty reason
		"test.test_os.A.test_b without a tab\n",                    // no tab
		"test.test_os.A.test_b\tone\ntest.test_os.A.test_b\ttwo\n", // twice
	} {
		if _, err := ParseExpectations(strings.NewReader(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestCompare(t *testing.T) {
	results := []Result{
		{Module: "test_os", Failures: []string{"test.test_os.A.test_new"}, Errors: []string{"test.test_os.A.test_known"}},
		{Module: "test_io", UnexpectedSuccesses: []string{"test.test_io.B.test_x"}},
		{Module: "test_time", Outcome: port.OutcomeTimedOut},
		{Module: "test_glob", ImportError: "ImportError: z"},
		{Module: "test_csv"},
		{Module: "test_bytes", SkippedModule: "No module named '_testlimitedcapi'"},
	}
	exp := Expectations{
		"test.test_os.A.test_known":               "known",
		"test.test_os.A.test_fixed":               "fixed since",
		"setUpClass (test.test_csv.C)":            "fixed too",
		"test.test_zlib.D.test_not_run_this_time": "a module this run left out",
		"test_time": "too slow",
	}
	unexpected, fixed := Compare(results, exp)
	if want := []string{"test.test_io.B.test_x", "test.test_os.A.test_new", "test_bytes", "test_glob"}; !slices.Equal(unexpected, want) {
		t.Errorf("unexpected %v, want %v", unexpected, want)
	}
	if want := []string{"setUpClass (test.test_csv.C)", "test.test_os.A.test_fixed"}; !slices.Equal(fixed, want) {
		t.Errorf("fixed %v, want %v", fixed, want)
	}
	if got := results[2].Why("test_time"); !strings.Contains(got, "timed_out") {
		t.Errorf("Why of a module that timed out: %q", got)
	}
}

func TestModuleOf(t *testing.T) {
	for id, want := range map[string]string{
		"test.test_os.FileTests.test_access":             "test_os",
		"test.test_pathlib.test_pathlib.PathTest.test_x": "test_pathlib",
		"setUpClass (test.test_sqlite3.test_dbapi.Foo)":  "test_sqlite3",
		"test_time": "test_time",
		"test.test_io.CIOTest.test_optional_abilities [<f>]":         "test_io",
		"numpy/lib/tests/test_format.py::test_huge_header[r]":        "numpy/lib/tests/test_format.py",
		"pandas/tests/io/parser/test_header.py::TestX::test_y[a::b]": "pandas/tests/io/parser/test_header.py",
		"numpy/lib/tests/test_io.py":                                 "numpy/lib/tests/test_io.py",
	} {
		if got := moduleOf(id); got != want {
			t.Errorf("moduleOf(%q) = %q, want %q", id, got, want)
		}
	}
}

// TestSuiteFiles: a session gets the top of Lib/test and its module's own
// package, not the other test packages; a name that is not a test module
// is refused.
func TestSuiteFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"__init__.py", "regrtest.py", "support/__init__.py", "support/os_helper.py",
		"list_tests.py", "test_os.py", "test_json/__init__.py", "test_json/test_dump.py", "test_email/__init__.py",
		"decimaltestdata/abs.decTest", "__pycache__/x.pyc"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(filepath.Join(dir, "support")); err == nil {
		t.Error("Open accepted a directory that is not Lib/test")
	}
	files, err := s.files("test_json")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"__init__.py", "decimaltestdata/abs.decTest", "list_tests.py", "regrtest.py", "support/__init__.py",
		"support/os_helper.py", "test_json/__init__.py", "test_json/test_dump.py", "test_os.py"}
	if !slices.Equal(files, want) {
		t.Errorf("files %v, want %v", files, want)
	}
	for m, want := range map[string]bool{"test_os": true, "test_json": true, "test_email": true, "test_nothing": false,
		"support": false, "../test_os": false, "test_json/test_dump": false, "test_os.py": false} {
		if got := s.Has(m); got != want {
			t.Errorf("Has(%q) = %v, want %v", m, got, want)
		}
	}
}

// TestWheelFiles: a session running a test file of a wheel gets the file,
// its helper modules and data, the test packages' __init__.py and the
// conftest.py files on its way down (but numpy's top one), and nothing of
// the other test files; a name that is not a test file of a source wheel
// is refused.
func TestWheelFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, files ...string) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		zw := zip.NewWriter(f)
		for _, n := range files {
			if _, err := zw.Create(n); err != nil {
				t.Fatal(err)
			}
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write("numpy-2.2.6-cp313-cp313-manylinux_2_17_x86_64.whl", "numpy/__init__.py", "numpy/conftest.py",
		"numpy/lib/__init__.py", "numpy/lib/tests/__init__.py", "numpy/lib/tests/test_format.py",
		"numpy/lib/tests/test_io.py", "numpy/lib/tests/_helper.py", "numpy/lib/tests/data/a.npy",
		"numpy/lib/tests/data/sub/b.npy", "numpy/_core/tests/data/c.npy")
	write("pandas-2.2.3-cp313-cp313-manylinux_2_17_x86_64.whl", "pandas/__init__.py", "pandas/conftest.py",
		"pandas/tests/__init__.py", "pandas/tests/frame/__init__.py", "pandas/tests/frame/conftest.py",
		"pandas/tests/frame/common.py", "pandas/tests/frame/test_api.py", "pandas/tests/frame/methods/__init__.py",
		"pandas/tests/frame/methods/test_rank.py")
	write("pytest-8.3.5-py3-none-any.whl", "pytest/__init__.py")
	w, err := OpenWheels(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if want := map[string]string{"numpy": "2.2.6", "pandas": "2.2.3"}; len(w.versions) != 2 || w.versions["numpy"] != want["numpy"] || w.versions["pandas"] != want["pandas"] {
		t.Errorf("versions %v", w.versions)
	}
	if len(w.tools) != 1 || filepath.Base(w.tools[0]) != "pytest-8.3.5-py3-none-any.whl" {
		t.Errorf("tools %v", w.tools)
	}
	for file, want := range map[string][]string{
		"numpy/lib/tests/test_format.py": {"numpy/lib/tests/__init__.py", "numpy/lib/tests/test_format.py",
			"numpy/lib/tests/_helper.py", "numpy/lib/tests/data/a.npy", "numpy/lib/tests/data/sub/b.npy"},
		"pandas/tests/frame/methods/test_rank.py": {"pandas/conftest.py", "pandas/tests/__init__.py",
			"pandas/tests/frame/__init__.py", "pandas/tests/frame/conftest.py", "pandas/tests/frame/methods/__init__.py",
			"pandas/tests/frame/methods/test_rank.py"},
	} {
		_, got := w.files(file)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("files(%s) = %v, want %v", file, got, want)
		}
	}
	for f, want := range map[string]bool{"numpy/lib/tests/test_format.py": true, "numpy/lib/tests/_helper.py": false,
		"numpy/lib/tests/../tests/test_io.py": false, "pytest/__init__.py": false, "numpy/lib/tests/test_none.py": false,
		"scipy/tests/test_x.py": false, "pandas/tests/frame/test_api.py": true} {
		if got := w.Has(f); got != want {
			t.Errorf("Has(%q) = %v, want %v", f, got, want)
		}
	}
	write("numpy-2.2.5-cp313-cp313-manylinux_2_17_x86_64.whl", "numpy/__init__.py")
	if w2, err := OpenWheels(dir); err == nil {
		w2.Close()
		t.Error("two numpy wheels accepted")
	}
	if _, err := OpenWheels(t.TempDir()); err == nil {
		t.Error("an empty directory accepted")
	}
}
