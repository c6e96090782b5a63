package compat

import (
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
		"test.test_io.CIOTest.test_optional_abilities [<f>]": "test_io",
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
