package compat

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/codeport/codeport/port"
)

//go:embed runner.py
var runnerSource string

// Modules are the modules of CPython's Lib/test that make compat runs by
// default: the standard library a model's everyday code uses, and the
// tokenizer's tests (test_fstring, test_tokenize), which the runtime's
// build patches.
func Modules() []string {
	return strings.Fields(`test_base64 test_bisect test_bz2 test_calendar test_cmath test_collections
		test_copy test_csv test_dataclasses test_datetime test_decimal test_dict test_difflib test_enum
		test_exceptions test_float test_fractions test_functools test_generators test_glob test_gzip
		test_hashlib test_heapq test_int test_io test_itertools test_json test_list test_long test_lzma
		test_math test_os test_pathlib test_pickle test_pprint test_random test_re test_set test_shutil
		test_sqlite3 test_statistics test_str test_string test_struct test_tarfile test_tempfile
		test_textwrap test_typing test_unicodedata test_zipfile test_zlib test_zoneinfo test_time
		test_traceback test_bytes test_fstring test_tokenize`)
}

// Result is what one module did in its session.
type Result struct {
	Module string `json:"module"`
	// Run counts the tests run; Skipped those that skipped (a missing
	// resource, a platform the test does not apply to).
	Run     int `json:"run"`
	Skipped int `json:"skipped"`
	// Failures, Errors and UnexpectedSuccesses are test ids
	// (test.test_os.FileTests.test_access).
	Failures            []string `json:"failures"`
	Errors              []string `json:"errors"`
	UnexpectedSuccesses []string `json:"unexpected_successes"`
	ExpectedFailures    int      `json:"expected_failures"`
	// Details holds the last line of each failure's or error's traceback.
	Details map[string]string `json:"details"`
	// SkippedModule is why the whole module skipped; ImportError why it
	// could not be loaded.
	SkippedModule string `json:"skipped_module,omitempty"`
	ImportError   string `json:"import_error,omitempty"`
	// Seconds is the time the tests took inside the session.
	Seconds float64 `json:"seconds"`
	// Outcome is the execution's, when it did not complete (a timeout, the
	// memory limit, a crash): then there are no counts.
	Outcome port.Outcome `json:"outcome,omitempty"`
	Stderr  string       `json:"-"`
}

// Differences are the result's test ids that did not pass, and the
// module's own name when it did not run to its end, could not be loaded,
// or skipped whole (natively, on Linux, the modules of Modules run).
func (r Result) Differences() []string {
	if r.Outcome != "" && r.Outcome != port.OutcomeCompleted || r.ImportError != "" || r.SkippedModule != "" {
		return []string{r.Module}
	}
	d := slices.Concat(r.Failures, r.Errors, r.UnexpectedSuccesses)
	slices.Sort(d)
	return d
}

// Why is the observed reason of a difference: the last line of its
// traceback, or how the module ended.
func (r Result) Why(id string) string {
	switch {
	case id != r.Module:
		if d := r.Details[id]; d != "" {
			return d
		}
		return "unexpected success"
	case r.ImportError != "":
		return "cannot be loaded: " + r.ImportError
	case r.SkippedModule != "":
		return "skipped whole: " + r.SkippedModule
	default:
		return "ended with " + string(r.Outcome) + ": " + lastLine(r.Stderr)
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// Suite is CPython's Lib/test directory on the host, and what a session
// needs of it.
type Suite struct {
	dir string
}

// Open checks that dir is CPython's Lib/test (it has support/ and
// regrtest.py).
func Open(dir string) (*Suite, error) {
	for _, name := range []string{"__init__.py", "support/__init__.py", "regrtest.py"} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			return nil, fmt.Errorf("compat: %s is not CPython's Lib/test: %w", dir, err)
		}
	}
	return &Suite{dir: dir}, nil
}

// Has reports whether module is one of the suite's test modules (a file
// test_x.py or a package test_x/).
func (s *Suite) Has(module string) bool {
	if !strings.HasPrefix(module, "test_") || strings.ContainsAny(module, `/\.`) {
		return false
	}
	if _, err := os.Stat(filepath.Join(s.dir, module+".py")); err == nil {
		return true
	}
	_, err := os.Stat(filepath.Join(s.dir, module, "__init__.py"))
	return err == nil
}

// files lists what a session running module needs, as paths relative to
// Lib/test: every file at the top (helpers such as list_tests.py and data
// such as levenshtein_examples.json), every directory that is not a test
// package (support/, data such as decimaltestdata/), and the module's own
// package. The other test packages (test_asyncio/, test_email/, ...) are
// left out: most of the suite's size, and none of them a helper.
func (s *Suite) files(module string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(s.dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && !strings.Contains(rel, "/") && strings.HasPrefix(rel, "test_") && rel != module {
				return filepath.SkipDir
			}
			if d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			out = append(out, rel)
		}
		return nil
	})
	return out, err
}

// RunModule runs module in a new session of p (destroyed afterwards),
// with timeout for the whole module.
func (s *Suite) RunModule(ctx context.Context, p port.CodeExecutionPort, module string, timeout time.Duration) (Result, error) {
	if !s.Has(module) {
		return Result{}, fmt.Errorf("compat: no test module %q in %s", module, s.dir)
	}
	files, err := s.files(module)
	if err != nil {
		return Result{}, fmt.Errorf("compat: listing %s: %w", s.dir, err)
	}
	code := strings.Replace(runnerSource, "MODULE = None", "MODULE = "+strconv.Quote(module), 1)
	code = strings.Replace(code, "RESULT = None", "RESULT = "+strconv.Quote(resultFile), 1)
	return inSession(ctx, p, module, func(id string) error {
		for _, rel := range files {
			if err := s.put(ctx, p, id, rel); err != nil {
				return fmt.Errorf("uploading %s: %w", rel, err)
			}
		}
		return nil
	}, code, timeout)
}

// resultFile is where a runner writes its result in its session.
const resultFile = "/workspace/.compat-result.json"

// inSession runs a runner's code for name (a module, a test file) in a
// new session of p, once upload has put there what it needs, and destroys
// the session afterwards.
func inSession(ctx context.Context, p port.CodeExecutionPort, name string, upload func(id string) error, code string, timeout time.Duration) (Result, error) {
	sess, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		return Result{}, fmt.Errorf("compat: %s: %w", name, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_ = p.DestroySession(dctx, sess.ID)
	}()
	if err := upload(sess.ID); err != nil {
		return Result{}, fmt.Errorf("compat: %s: %w", name, err)
	}
	return execute(ctx, p, sess.ID, name, code, resultFile, timeout)
}

// execute runs a runner's code in the session and reads the result it
// wrote to the file result; a run that did not complete has its outcome.
func execute(ctx context.Context, p port.CodeExecutionPort, id, module, code, result string, timeout time.Duration) (Result, error) {
	res, err := p.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code, Timeout: timeout})
	if err != nil {
		return Result{}, fmt.Errorf("compat: %s: %w", module, err)
	}
	r := Result{Module: module, Stderr: res.Stderr}
	if res.Outcome != port.OutcomeCompleted {
		r.Outcome = res.Outcome
		return r, nil
	}
	rc, _, err := p.GetFile(ctx, id, path.Base(result))
	if err != nil {
		r.Outcome = port.OutcomeProgramError
		return r, nil
	}
	defer rc.Close()
	if err := json.NewDecoder(io.LimitReader(rc, 64<<20)).Decode(&r); err != nil {
		return Result{}, fmt.Errorf("compat: %s: reading its result: %w", module, err)
	}
	r.Module = module
	return r, nil
}

func (s *Suite) put(ctx context.Context, p port.CodeExecutionPort, id, rel string) error {
	return putFile(ctx, p, id, filepath.Join(s.dir, filepath.FromSlash(rel)), "test/"+rel)
}

// Expectations are the differences known to remain: a test id, or a
// module's name for a module that does not run to its end, with why.
type Expectations map[string]string

// ParseExpectations reads lines "ID<TAB>REASON"; blank lines and lines
// starting with # are comments. An ID listed twice, or without a reason,
// is an error.
func ParseExpectations(r io.Reader) (Expectations, error) {
	exp := Expectations{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, why, ok := strings.Cut(line, "\t")
		id, why = strings.TrimSpace(id), strings.TrimSpace(why)
		switch {
		case !ok || id == "" || why == "":
			return nil, fmt.Errorf("compat: expectations line %d: want ID<TAB>REASON, got %q", n, line)
		case exp[id] != "":
			return nil, fmt.Errorf("compat: expectations line %d: %s listed twice", n, id)
		}
		exp[id] = why
	}
	return exp, sc.Err()
}

// Compare sets results against exp: unexpected are the differences exp
// does not list, fixed the entries of exp, for the modules in results,
// that are no longer differences.
func Compare(results []Result, exp Expectations) (unexpected, fixed []string) {
	seen := map[string]bool{}
	ran := map[string]bool{}
	for _, r := range results {
		ran[r.Module] = true
		for _, id := range r.Differences() {
			seen[id] = true
			if exp[id] == "" {
				unexpected = append(unexpected, id)
			}
		}
	}
	for id := range exp {
		if !seen[id] && ran[moduleOf(id)] {
			fixed = append(fixed, id)
		}
	}
	slices.Sort(unexpected)
	slices.Sort(fixed)
	return unexpected, fixed
}

// moduleOf is the test module an id belongs to: "test_os" for
// "test.test_os.FileTests.test_access", and for "test_os" itself. An
// error raised while setting up a class has an id such as
// "setUpClass (test.test_os.FileTests)". A pytest node id belongs to its
// file: "numpy/lib/tests/test_io.py" for
// "numpy/lib/tests/test_io.py::TestSaveTxt::test_array".
func moduleOf(id string) string {
	if file, _, ok := strings.Cut(id, "::"); ok || strings.HasSuffix(id, ".py") {
		return file
	}
	if i := strings.IndexByte(id, '('); i >= 0 {
		id = strings.TrimSuffix(id[i+1:], ")")
	}
	id = strings.TrimPrefix(id, "test.")
	m, _, _ := strings.Cut(id, ".")
	return m
}
