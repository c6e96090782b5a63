package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// endless is a stream that never ends: prefix, then pattern forever. It
// counts the bytes taken from it.
type endless struct {
	prefix  string
	pattern string
	taken   int64
	at      int
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(e.prefix) > 0 {
			c := copy(p[n:], e.prefix)
			e.prefix = e.prefix[c:]
			n += c
			continue
		}
		c := copy(p[n:], e.pattern[e.at:])
		e.at = (e.at + c) % len(e.pattern)
		n += c
	}
	e.taken += int64(n)
	return n, nil
}

// A hostile stream costs at most the limit and one read buffer, and ends
// in the typed error, never a hang or an unbounded buffer.
func TestHostileStreams(t *testing.T) {
	const limit = 64 << 10
	for _, c := range []struct {
		name string
		src  *endless
		// perByte is the bytes of the stream per byte the event holds.
		perByte int64
	}{
		{"a line that never ends", &endless{prefix: "data: ", pattern: "x"}, 1},
		{"no newline ever, only NUL bytes", &endless{pattern: "\x00"}, 1},
		{"a comment that never ends", &endless{prefix: ":", pattern: "keep-alive "}, 1},
		{"a field name that never ends", &endless{pattern: "dat"}, 1},
		{"invalid UTF-8 forever", &endless{prefix: "data: ", pattern: "\xFF\xFE\xC0"}, 1},
		{"data lines forever", &endless{pattern: "data: 0123456789\n"}, 2},
		{"empty data lines forever", &endless{pattern: "data\r\n"}, 6},
		{"NUL data lines forever", &endless{pattern: "data: \x00\x00\x00\r"}, 3},
		{"an id line that never ends", &endless{prefix: "id: ", pattern: "1"}, 1},
	} {
		r := NewReader(c.src, Options{MaxEventBytes: limit})
		_, err := r.Next()
		var tooLarge *TooLargeError
		if !errors.As(err, &tooLarge) {
			t.Errorf("%s: %v, want too large", c.name, err)
		}
		if c.src.taken > c.perByte*limit+int64(len(r.buf)) {
			t.Errorf("%s: %d bytes read for a limit of %d", c.name, c.src.taken, limit)
		}
		checkBounds(t, r.dec)
	}
}

// A stream that keeps its events small goes on as long as it likes: a
// flood of comments, or of events, is not an event over the limit.
func TestLongStreamsOfSmallEvents(t *testing.T) {
	const limit = 256
	src := io.LimitReader(&endless{pattern: ": keep-alive\n"}, 4<<20)
	if _, err := NewReader(src, Options{MaxEventBytes: limit}).Next(); err != io.EOF {
		t.Fatalf("comments: %v", err)
	}
	const event = "event: stdout\ndata: {\"text\":\"x\"}\n\n"
	src = io.LimitReader(&endless{pattern: event}, int64(len(event))*100000)
	r := NewReader(src, Options{MaxEventBytes: limit, Canonical: true})
	n := 0
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil || e.Type != "stdout" {
			t.Fatalf("event %d: %v %v", n, e, err)
		}
		n++
	}
	if n != 100000 {
		t.Fatalf("%d events", n)
	}
}

// NUL bytes and invalid UTF-8 read as the standard says, and the events
// they make hold valid UTF-8.
func TestHostileBytesInEvents(t *testing.T) {
	stream := "event: \x00x\xFF\ndata: \x00\xC3\ndata:\xE0\x80\x80\nid: \xF5\n\n"
	got, _, err := decodeAll(t, stream, Options{}, 1)
	want := []Event{ev("\x00x\uFFFD", "\x00\uFFFD\n\uFFFD\uFFFD\uFFFD", "\uFFFD")}
	if err != nil || !sameEvents(got, want) {
		t.Fatalf("%s %v, want %s", show(got), err, show(want))
	}
	if !strings.Contains(show(got), "\\x00") {
		t.Fatalf("the NUL byte is gone: %s", show(got))
	}
}
