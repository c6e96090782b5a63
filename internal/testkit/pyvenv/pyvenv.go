// Package pyvenv gives tests a Python virtual environment with pinned
// packages from PyPI, installed by pip by package name, built once and
// cached under the user cache directory; or the wheel files of pinned
// packages, for tests that hand them to the code under test.
//
// Tests that check codeport against Python software (the official SDKs in
// internal/testkit/sdkcheck, schemathesis in internal/testkit/schemacheck) need that
// software at a known version, and installing it on every run would cost
// minutes and a network round trip. So the environment is keyed by the
// Python version and every pinned package version: the first run builds it,
// later runs reuse it, and changing a pin builds a new one beside it.
//
// A machine without python3, its venv module, pip or the network cannot
// build one. Outside CI the test is then skipped with the reason; under
// CI=true it fails, so that a check the project relies on never silently
// stops running.
package pyvenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// buildTimeout bounds building one environment; pip on a slow network is
// the long part.
const buildTimeout = 10 * time.Minute

// InCI reports whether the test runs in CI (CI=true, 1 or yes), where a
// check that cannot run must fail rather than skip.
func InCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v == "true" || v == "1" || v == "yes"
}

// Unavailable ends the test because something it needs from Python is
// missing: a failure under CI=true, a skip with the reason otherwise.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("cannot run: %s (failing because CI=true)", reason)
	}
	t.Skipf("skipped: %s (it fails instead when CI=true)", reason)
}

// pinned is what Python accepts: a package name, optionally with extras,
// then == and an exact version.
var pinned = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[A-Za-z0-9._,-]+\])?==([A-Za-z0-9.+!-]+)$`)

// Python returns the python executable of the virtual environment called
// name with packages installed, building and caching it on first use. Each
// package must be pinned as "name==version" (the cache is keyed by the
// versions, so an unpinned one would never be upgraded). When the
// environment cannot be built, Python calls Unavailable.
//
// Run a package's command line as a module (python -m pkg), not through
// its script in the environment's bin directory: the environment is built
// in a temporary directory and then moved into place, so that an
// interrupted build is never found, and the scripts' #! lines still name
// the temporary directory.
func Python(t testing.TB, name string, packages ...string) string {
	t.Helper()
	base, err := dirName(name, packages)
	if err != nil {
		t.Fatalf("pyvenv: %v", err)
	}
	unavailable := func(format string, args ...any) {
		t.Helper()
		Unavailable(t, "the Python environment %q cannot be built: %s", name, fmt.Sprintf(format, args...))
	}

	python3, err := exec.LookPath("python3")
	if err != nil {
		unavailable("python3 is not on PATH")
	}
	out, err := exec.Command(python3, "-c", "import sys; print('%d.%d' % sys.version_info[:2])").Output()
	if err != nil {
		unavailable("python3 does not run: %v", err)
	}
	pyVersion := strings.TrimSpace(string(out))

	dir := filepath.Join(cacheParent(), fmt.Sprintf(base, pyVersion))
	marker := ".codeport-" + name + "-complete"
	done := func(dir string) bool { return usable(dir, marker) }
	if done(dir) {
		return venvPython(dir)
	}
	start := time.Now()
	cached(t, dir, marker, done, unavailable, func(ctx context.Context, tmp string) string {
		if msg, err := run(ctx, python3, "-m", "venv", tmp); err != nil {
			unavailable("python3 -m venv failed (on Debian and Ubuntu, install python3-venv): %v\n%s", err, msg)
		}
		py := venvPython(tmp)
		if msg, err := run(ctx, py, "-m", "pip", "--version"); err != nil {
			unavailable("pip is not available in the virtual environment: %v\n%s", err, msg)
		}
		args := append([]string{"-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--quiet"}, packages...)
		if msg, err := run(ctx, py, args...); err != nil {
			unavailable("pip install %s failed: %v\n%s", strings.Join(packages, " "), err, msg)
		}
		return tmp
	})
	t.Logf("built the Python environment %s in %s", dir, time.Since(start).Round(100*time.Millisecond))
	return venvPython(dir)
}

// Wheels returns a directory holding the wheel files of packages, each
// pinned as "name==version", downloaded once by pip (binary wheels only,
// dependencies not resolved: list every package needed) and cached like
// the environments. A test puts them where the code under test imports
// them from, as a user would upload a wheel. When they cannot be fetched,
// Wheels calls Unavailable.
func Wheels(t testing.TB, name string, packages ...string) string {
	t.Helper()
	key, err := pinKey(name, packages)
	if err != nil {
		t.Fatalf("pyvenv: %v", err)
	}
	unavailable := func(format string, args ...any) {
		t.Helper()
		Unavailable(t, "the wheels %q cannot be fetched: %s", name, fmt.Sprintf(format, args...))
	}
	dir := filepath.Join(cacheParent(), name+"-wheels-"+key)
	marker := ".codeport-" + name + "-complete"
	done := func(dir string) bool {
		_, err := os.Stat(filepath.Join(dir, marker))
		return err == nil
	}
	if done(dir) {
		return dir
	}
	python3, err := exec.LookPath("python3")
	if err != nil {
		unavailable("python3 is not on PATH")
	}
	cached(t, dir, marker, done, unavailable, func(ctx context.Context, tmp string) string {
		// pip from a throwaway environment: the system's python3 may have none.
		venv := filepath.Join(tmp, "venv")
		if msg, err := run(ctx, python3, "-m", "venv", venv); err != nil {
			unavailable("python3 -m venv failed (on Debian and Ubuntu, install python3-venv): %v\n%s", err, msg)
		}
		wheels := filepath.Join(tmp, "wheels")
		args := append([]string{"-m", "pip", "download", "--disable-pip-version-check", "--no-input", "--quiet",
			"--only-binary=:all:", "--no-deps", "-d", wheels}, packages...)
		if msg, err := run(ctx, venvPython(venv), args...); err != nil {
			unavailable("pip download %s failed: %v\n%s", strings.Join(packages, " "), err, msg)
		}
		return wheels
	})
	return dir
}

// cached makes dir: build fills a fresh directory beside it (under
// buildTimeout) and returns the directory, there, to move into place,
// which gets the marker last, so that an interrupted build is never found;
// done tells a finished dir. A leftover without the marker is replaced;
// another test process that finished the same dir first has made one as
// good.
func cached(t testing.TB, dir, marker string, done func(string) bool, unavailable func(string, ...any), build func(ctx context.Context, tmp string) string) {
	t.Helper()
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		unavailable("cannot create the cache directory: %v", err)
	}
	tmp, err := os.MkdirTemp(parent, filepath.Base(dir)+"-building-")
	if err != nil {
		unavailable("cannot create a build directory: %v", err)
	}
	defer os.RemoveAll(tmp) // a no-op for what was renamed into place
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	result := build(ctx, tmp)
	if err := os.WriteFile(filepath.Join(result, marker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err == nil && !done(dir) {
		_ = os.RemoveAll(dir)
	}
	if err := os.Rename(result, dir); err != nil && !done(dir) {
		t.Fatalf("cannot move %s into place: %v", dir, err)
	}
}

// cacheParent is the directory the environments and wheels are cached in:
// codeport's in the user's cache directory (or the temporary directory).
func cacheParent() string {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	return filepath.Join(cache, "codeport")
}

// usable reports whether dir is a finished environment whose python still
// runs (a system Python upgraded in place breaks the environments made
// from it).
func usable(dir, marker string) bool {
	if _, err := os.Stat(filepath.Join(dir, marker)); err != nil {
		return false
	}
	return exec.Command(venvPython(dir), "-c", "pass").Run() == nil
}

func venvPython(dir string) string {
	if runtime.GOOS == "windows" {
		return filepath.Join(dir, "Scripts", "python.exe")
	}
	return filepath.Join(dir, "bin", "python")
}

// run runs a command and returns its combined output.
func run(ctx context.Context, name string, args ...string) (string, error) {
	var buf bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("%w (timed out after %s)", err, buildTimeout)
	}
	return strings.TrimSpace(buf.String()), err
}

// dirName is the environment's directory name, with a %s for the Python
// version: name, then each package and its version, in order. It is the
// naming sdkcheck used before this package existed, so that the
// environments it built are still found.
func dirName(name string, packages []string) (string, error) {
	key, err := pinKey(name, packages)
	return name + "-venv-py%s-" + key, err
}

// pinKey is the part of a cached directory's name that names its packages
// and their versions, in order; name is checked too.
func pinKey(name string, packages []string) (string, error) {
	if name == "" || strings.ContainsAny(name, `/\ %`) {
		return "", fmt.Errorf("bad environment name %q", name)
	}
	if len(packages) == 0 {
		return "", errors.New("no packages")
	}
	key := make([]string, 0, len(packages))
	for _, p := range packages {
		m := pinned.FindStringSubmatch(p)
		if m == nil {
			return "", fmt.Errorf("package %q is not pinned as name==version", p)
		}
		key = append(key, strings.NewReplacer("[", "_", "]", "", ",", "_").Replace(m[1]+m[2])+m[3])
	}
	return strings.Join(key, "-"), nil
}
