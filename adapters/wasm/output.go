package wasm

import (
	"fmt"
	"sync"
	"unicode/utf8"
)

// streamCapture is the io.Writer behind one WASI stream (stdout or stderr)
// of one instance. Between begin and end it keeps up to limit bytes of a
// call's output and counts the rest, which it drops as it is written: a
// program printing gigabytes costs the host no more than limit bytes.
// Outside a call, output is discarded.
type streamCapture struct {
	mu        sync.Mutex
	active    bool
	limit     int
	buf       []byte
	dropped   int64
	truncated bool
}

func (s *streamCapture) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.active {
		return len(p), nil
	}
	room := s.limit - len(s.buf)
	if room >= len(p) {
		s.buf = append(s.buf, p...)
		return len(p), nil
	}
	if room > 0 {
		s.buf = append(s.buf, p[:room]...)
	}
	s.truncated = true
	s.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

// keepBuffer is the largest capture buffer kept between calls.
const keepBuffer = 64 << 10

func (s *streamCapture) begin(limit int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active, s.limit, s.buf, s.dropped, s.truncated = true, limit, s.buf[:0], 0, false
}

// end stops capturing and returns the call's output, with a one-line notice
// when bytes were dropped. A multi-byte character cut by the limit is
// dropped whole so the kept text stays valid where it was valid.
func (s *streamCapture) end() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active = false
	out := s.buf
	if cap(s.buf) > keepBuffer {
		s.buf = nil // do not hold a large buffer for an idle session
	}
	if !s.truncated {
		return string(out), false
	}
	cut := len(out)
	for i := 1; i < utf8.UTFMax && i <= len(out); i++ {
		if utf8.RuneStart(out[len(out)-i]) {
			if r, _ := utf8.DecodeRune(out[len(out)-i:]); r == utf8.RuneError && !utf8.FullRune(out[len(out)-i:]) {
				cut = len(out) - i
			}
			break
		}
	}
	dropped := s.dropped + int64(len(out)-cut)
	text := string(out[:cut])
	if len(text) > 0 && text[len(text)-1] != '\n' {
		text += "\n"
	}
	text += fmt.Sprintf("[codeport: output truncated: %d bytes dropped beyond the limit of %d bytes per stream]\n", dropped, s.limit)
	return text, true
}
