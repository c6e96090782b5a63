package subprocess

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/codeport/codeport/internal/testkit/logtest"
)

// A worker's crash report is logged as an error, its first lines only: a
// dump of every goroutine would otherwise fill the parent's log at INFO.
// The worker's own records keep their level.
func TestWorkerStderrKeepsLevelsAndCapsCrashReports(t *testing.T) {
	var logs logtest.Buffer
	s := &stderrLog{log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	var in strings.Builder
	in.WriteString(`{"time":"2026-12-01T00:00:00Z","level":"WARN","msg":"warm pool: could not start an interpreter","pid":7}` + "\n")
	in.WriteString(`{"@level":"error","@message":"plugin: serve failed","@timestamp":"x"}` + "\n")
	in.WriteString("fatal error: runtime: out of memory\n\n")
	for i := range 500 {
		fmt.Fprintf(&in, "goroutine %d [running]:\nmain.f()\n\t/src/x.go:%d +0x1\n", i, i)
	}
	// Written in odd pieces, as a pipe delivers it.
	b := []byte(in.String())
	for len(b) > 0 {
		n := min(len(b), 777)
		if _, err := s.Write(b[:n]); err != nil {
			t.Fatal(err)
		}
		b = b[n:]
	}
	got := logs.String()
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if !strings.Contains(lines[0], "level=WARN") || !strings.Contains(lines[0], `msg="worker: warm pool: could not start an interpreter"`) || !strings.Contains(lines[0], "pid=7") {
		t.Errorf("a worker record lost its level or attributes: %s", lines[0])
	}
	if !strings.Contains(lines[1], "level=ERROR") || !strings.Contains(lines[1], "plugin: serve failed") {
		t.Errorf("a go-plugin record: %s", lines[1])
	}
	if n := strings.Count(got, "worker crash report"); n != maxCrashLines+1 {
		t.Errorf("%d crash report lines logged, want %d", n, maxCrashLines+1)
	}
	if strings.Contains(got, "level=INFO") || strings.Contains(got, "goroutine 400") {
		t.Errorf("the crash report was logged at INFO or whole:\n%s", got)
	}
}

// A worker's record keeps its numbers as the worker logged them: a whole
// number reaches the parent's handler as an integer, every digit of it
// (decoded as float64 it lost those past 2^53, and a handler saw a float),
// a fraction as a float, and an object as a group.
func TestWorkerRecordKeepsItsNumbers(t *testing.T) {
	var logs logtest.Buffer
	s := &stderrLog{log: slog.New(slog.NewJSONHandler(&logs, nil))}
	line := `{"time":"2026-12-01T00:00:00Z","level":"INFO","msg":"wasm interpreter image ready","pid":7,` +
		`"memory_bytes":9007199254740993,"max":18446744073709551615,"boot_seconds":0.25,"shared":true,` +
		`"image":{"pages":4096,"id":"x"},"sizes":[1,2.5]}` + "\n"
	if _, err := s.Write([]byte(line)); err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(logs.String())
	for _, want := range []string{`"msg":"worker: wasm interpreter image ready"`, `"pid":7,`, `"memory_bytes":9007199254740993,`,
		`"max":18446744073709551615,`, `"boot_seconds":0.25,`, `"shared":true`, `"image":{"id":"x","pages":4096}`, `"sizes":[1,2.5]`} {
		if !strings.Contains(got, want) {
			t.Errorf("the parent's record lacks %s:\n%s", want, got)
		}
	}
}

// Each way the Go runtime reports dying at the worker's OS memory limits
// is its out-of-memory death (a call it loses reports the memory limit, not
// a crash); other fatal errors are not. Which allocation meets the limit
// first depends on timing: a loaded run died of "cannot allocate memory".
func TestWorkerOutOfMemoryLines(t *testing.T) {
	for line, want := range map[string]bool{
		"fatal error: runtime: out of memory":                                        true,
		"fatal error: runtime: cannot allocate memory":                               true,
		"runtime/cgo: pthread_create failed: Resource temporarily unavailable":       true,
		"fatal error: concurrent map writes":                                         false,
		"fatal error: all goroutines are asleep - deadlock!":                         false,
		`{"level":"INFO","msg":"the program printed: fatal error: cannot allocate"}`: false,
	} {
		if got := outOfMemory(line); got != want {
			t.Errorf("outOfMemory(%q) = %v, want %v", line, got, want)
		}
	}
}

// A line that is no record and starts no crash report (a library's stray
// print), or a record longer than a logged line, does not turn what
// follows into a crash report: the records after it keep their levels,
// and the rest of a long line is dropped, not logged as lines of its own.
func TestWorkerStderrAfterAStrayLine(t *testing.T) {
	var logs logtest.Buffer
	s := &stderrLog{log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	long := `{"time":"2026-12-01T00:00:00Z","level":"WARN","msg":"keeping an output file failed","error":"` + strings.Repeat("x", 3*maxLogLine) + `"}`
	in := "a stray print\n" + long + "\n" + `{"time":"2026-12-01T00:00:00Z","level":"INFO","msg":"session reclaimed"}` + "\n"
	b := []byte(in)
	for len(b) > 0 {
		n := min(len(b), 1000)
		if _, err := s.Write(b[:n]); err != nil {
			t.Fatal(err)
		}
		b = b[n:]
	}
	got := logs.String()
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines logged, want 3:\n%s", len(lines), got)
	}
	if !strings.Contains(lines[0], "level=WARN") || !strings.Contains(lines[0], "a stray print") {
		t.Errorf("the stray line: %s", lines[0])
	}
	if !strings.Contains(lines[1], "cut=true") {
		t.Errorf("the long record: %.200s", lines[1])
	}
	if !strings.Contains(lines[2], "level=INFO") || !strings.Contains(lines[2], "session reclaimed") {
		t.Errorf("the record after them: %s", lines[2])
	}
	if strings.Contains(got, "crash report") {
		t.Errorf("taken for a crash report:\n%.500s", got)
	}
}
