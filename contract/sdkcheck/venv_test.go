package sdkcheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The SDK versions the check pins: the newest released when it was written.
// Changing one builds a new cached environment.
const (
	openaiVersion    = "3.57.0"
	anthropicVersion = "2.14.0"
)

// completeMarker is written last into a finished environment, so that a
// half-built one (an interrupted pip) is never used.
const completeMarker = ".codeport-sdkcheck-complete"

// inCI reports whether the test runs in CI, where a check that cannot run
// must fail rather than skip.
func inCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v == "true" || v == "1" || v == "yes"
}

// unavailable ends the test because the SDK check cannot run here: a
// failure in CI, a skip with the reason otherwise.
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, args...)
	if inCI() {
		t.Fatalf("SDK cross-check cannot run: %s (failing because CI=true)", reason)
	}
	t.Skipf("SDK cross-check skipped: %s (it fails instead when CI=true)", reason)
}

// sdkPython returns the python of a virtual environment with the pinned
// openai and anthropic SDKs, building and caching it on first use.
func sdkPython(t *testing.T) string {
	t.Helper()
	python3, err := exec.LookPath("python3")
	if err != nil {
		unavailable(t, "python3 is not on PATH")
	}
	out, err := exec.Command(python3, "-c", "import sys; print('%d.%d' % sys.version_info[:2])").Output()
	if err != nil {
		unavailable(t, "python3 does not run: %v", err)
	}
	pyVersion := strings.TrimSpace(string(out))

	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	parent := filepath.Join(cache, "codeport")
	dir := filepath.Join(parent, fmt.Sprintf("sdkcheck-venv-py%s-openai%s-anthropic%s", pyVersion, openaiVersion, anthropicVersion))
	if usable(dir) {
		return venvPython(dir)
	}

	if err := os.MkdirAll(parent, 0o755); err != nil {
		unavailable(t, "cannot create the cache directory: %v", err)
	}
	tmp, err := os.MkdirTemp(parent, "sdkcheck-venv-building-")
	if err != nil {
		unavailable(t, "cannot create a build directory: %v", err)
	}
	defer os.RemoveAll(tmp) // a no-op once it is renamed into place
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if msg, err := run(ctx, python3, "-m", "venv", tmp); err != nil {
		unavailable(t, "python3 -m venv failed (on Debian and Ubuntu, install python3-venv): %v\n%s", err, msg)
	}
	py := venvPython(tmp)
	if msg, err := run(ctx, py, "-m", "pip", "--version"); err != nil {
		unavailable(t, "pip is not available in the virtual environment: %v\n%s", err, msg)
	}
	if msg, err := run(ctx, py, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--quiet",
		"openai=="+openaiVersion, "anthropic=="+anthropicVersion); err != nil {
		unavailable(t, "pip install openai==%s anthropic==%s failed: %v\n%s", openaiVersion, anthropicVersion, err, msg)
	}
	if err := os.WriteFile(filepath.Join(tmp, completeMarker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A leftover without the marker is a broken build: replace it.
	if _, err := os.Stat(dir); err == nil && !usable(dir) {
		_ = os.RemoveAll(dir)
	}
	if err := os.Rename(tmp, dir); err != nil && !usable(dir) {
		t.Fatalf("cannot move the virtual environment into place: %v", err)
	}
	t.Logf("built the SDK virtual environment %s in %s", dir, time.Since(start).Round(100*time.Millisecond))
	return venvPython(dir)
}

// usable reports whether dir is a finished environment whose python runs.
func usable(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, completeMarker)); err != nil {
		return false
	}
	return exec.Command(venvPython(dir), "-c", "import openai, anthropic").Run() == nil
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
		err = fmt.Errorf("%w (timed out)", err)
	}
	return strings.TrimSpace(buf.String()), err
}
