// Package logtest holds a log sink for tests that check what a logger
// wrote (and what it must never write: code, output, file contents) while
// the code under test logs from other goroutines.
//
//	var logs logtest.Buffer
//	a := newAdapter(cfg.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
//	...
//	if strings.Contains(logs.String(), secret) { t.Error("leaked") }
package logtest

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for a logger and a test at once.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
