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
//
// With an emitter (stream), what it keeps is also handed on as it is
// written, for a caller that streams the output: up to the last complete
// character, so that a character is never split between two chunks, and
// so that what was handed on is always a prefix of what end returns (end
// drops a character the limit cut, which was never handed on).
type streamCapture struct {
	mu        sync.Mutex
	active    bool
	limit     int
	buf       []byte
	dropped   int64
	truncated bool
	emit      func([]byte) // nil: not streamed
	emitted   int          // bytes of buf handed to emit
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
	} else {
		if room > 0 {
			s.buf = append(s.buf, p[:room]...)
		}
		s.truncated = true
		s.dropped += int64(len(p) - max(room, 0))
	}
	if s.emit != nil {
		if end := completeRunes(s.buf, s.emitted); end > s.emitted {
			s.emit(s.buf[s.emitted:end])
			s.emitted = end
		}
	}
	return len(p), nil
}

// stream hands what the capture keeps from now on to fn (nil: stop).
func (s *streamCapture) stream(fn func([]byte)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emit = fn
}

// completeRunes is the end of b short of a trailing character that is
// incomplete (a UTF-8 start byte whose continuation has not arrived), and
// no shorter than from. Bytes that are not UTF-8 at all are not held back.
func completeRunes(b []byte, from int) int {
	end := len(b)
	for i := 1; i < utf8.UTFMax && i <= end-from; i++ {
		if c := b[end-i]; utf8.RuneStart(c) {
			if c >= 0xC0 && !utf8.FullRune(b[end-i:]) {
				return end - i
			}
			break
		}
	}
	return end
}

// keepBuffer is the largest capture buffer kept between calls.
const keepBuffer = 64 << 10

func (s *streamCapture) begin(limit int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active, s.limit, s.buf, s.dropped, s.truncated, s.emitted = true, limit, s.buf[:0], 0, false, 0
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
	// The same cut as streaming's, so what was streamed stays a prefix.
	cut := completeRunes(out, 0)
	dropped := s.dropped + int64(len(out)-cut)
	text := string(out[:cut])
	if len(text) > 0 && text[len(text)-1] != '\n' {
		text += "\n"
	}
	text += fmt.Sprintf("[codeport: output truncated: %d bytes dropped beyond the limit of %d bytes per stream]\n", dropped, s.limit)
	return text, true
}
