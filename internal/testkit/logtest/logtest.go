// Package logtest holds a log sink for tests that check what a logger
// wrote (and what it must never write: code, output, file contents) while
// the code under test logs from other goroutines, and that wait for a
// line to be written (a server's address, a message at start-up).
//
//	var logs logtest.Buffer
//	a := newAdapter(cfg.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
//	...
//	if strings.Contains(logs.String(), secret) { t.Error("leaked") }
//
//	addr := logs.Await(t, regexp.MustCompile(`addr=(\S+)`), exited)
package logtest

import (
	"bytes"
	"regexp"
	"sync"
	"testing"

	"github.com/codeport/codeport/internal/testkit/testwait"
)

// Buffer is a bytes.Buffer safe for a logger and a test at once. The zero
// value is ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	// written is closed at the next write, for Await; nil when nobody
	// waits.
	written chan struct{}
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written != nil {
		close(s.written)
		s.written = nil
	}
	return s.b.Write(p)
}

// String is everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Await waits until what was written matches re and returns re's first
// submatch (the whole match when re has no group). It wakes at each
// write rather than polling. It fails t if ended is closed first (the
// writer is gone; nil: never) and the buffer still does not match, or if
// the test's wait ends (testwait: shortly before the test binary's
// deadline, so that the failure shows what was written).
func (s *Buffer) Await(t testing.TB, re *regexp.Regexp, ended <-chan struct{}) string {
	t.Helper()
	ctx, cancel := testwait.Context(t)
	defer cancel()
	for gone := false; ; {
		s.mu.Lock()
		m := re.FindStringSubmatch(s.b.String())
		if m == nil && s.written == nil {
			s.written = make(chan struct{})
		}
		written := s.written
		s.mu.Unlock()
		switch {
		case len(m) > 1:
			return m[1]
		case m != nil:
			return m[0]
		case gone:
			t.Fatalf("the writer ended before writing %q:\n%s", re, s.String())
		}
		select {
		case <-written:
		case <-ended:
			// Once more: its last write may have come with its end.
			gone, ended = true, nil
		case <-ctx.Done():
			t.Fatalf("%v before the log had %q:\n%s", ctx.Err(), re, s.String())
		}
	}
}
