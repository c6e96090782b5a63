package sse

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// decodeAll reads stream with a fresh Decoder, pushing it in pieces of
// size bytes (all of it at once for 0), and returns the events and the
// error, End's included.
func decodeAll(t testing.TB, stream string, opts Options, size int) ([]Event, *Decoder, error) {
	t.Helper()
	d := NewDecoder(opts)
	var events []Event
	b := []byte(stream)
	for len(b) > 0 {
		piece := b
		if size > 0 && len(piece) > size {
			piece = piece[:size]
		}
		for len(piece) > 0 {
			n, ev, err := d.Decode(piece)
			checkBounds(t, d)
			if err != nil {
				return events, d, err
			}
			if n == 0 || n > len(piece) {
				t.Fatalf("Decode consumed %d of %d bytes", n, len(piece))
			}
			if ev != nil {
				checkEvent(t, d, *ev)
				events = append(events, *ev)
			}
			b, piece = b[n:], piece[n:]
		}
	}
	return events, d, d.End()
}

// checkBounds fails unless d holds at most its limit for the event it is
// reading, line included, in buffers no larger than the limit.
func checkBounds(t testing.TB, d *Decoder) {
	t.Helper()
	if held := d.held() + len(d.line); held > d.max || cap(d.line) > d.max || cap(d.data) > d.max {
		t.Fatalf("the decoder holds %d bytes (line buffer %d, data buffer %d) over its limit of %d", held, cap(d.line), cap(d.data), d.max)
	}
}

// checkEvent fails unless ev is within the limit.
func checkEvent(t testing.TB, d *Decoder, ev Event) {
	t.Helper()
	typ := len(ev.Type)
	if ev.Type == "message" {
		typ = 0 // maybe the default, not from the stream
	}
	if n := typ + len(ev.Data) + len(ev.ID); n > d.max || cap(ev.Data) > d.max {
		t.Fatalf("an event of %d bytes (data buffer %d) over the limit of %d: %+v", n, cap(ev.Data), d.max, ev)
	}
}

func ev(typ, data, id string) Event { return Event{Type: typ, Data: []byte(data), ID: id} }

func sameEvents(a, b []Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || string(a[i].Data) != string(b[i].Data) || a[i].ID != b[i].ID {
			return false
		}
	}
	return true
}

func show(events []Event) string {
	var s []string
	for _, e := range events {
		s = append(s, fmt.Sprintf("{%q %q %q}", e.Type, e.Data, e.ID))
	}
	return "[" + strings.Join(s, " ") + "]"
}

// Each rule of the WHATWG standard's parsing and interpretation of an
// event stream, each stream read whole, a byte at a time and in pieces of
// 3 bytes (CRLF split, fields split, values split).
func TestTheStandardsRules(t *testing.T) {
	for _, c := range []struct {
		name, stream string
		want         []Event
	}{
		{"data with a space", "data: a\n\n", []Event{ev("message", "a", "")}},
		{"data without a space", "data:a\n\n", []Event{ev("message", "a", "")}},
		{"only one space is dropped", "data:  a \n\n", []Event{ev("message", " a ", "")}},
		{"a tab is kept", "data:\ta\n\n", []Event{ev("message", "\ta", "")}},
		{"data without a colon is empty data", "data\n\n", []Event{ev("message", "", "")}},
		{"data with an empty value", "data:\n\n", []Event{ev("message", "", "")}},
		{"the first colon splits", "data: a:b: c\n\n", []Event{ev("message", "a:b: c", "")}},
		{"data lines are joined with LF", "data: a\ndata: b\ndata\ndata: c\n\n", []Event{ev("message", "a\nb\n\nc", "")}},
		{"two empty data lines", "data\ndata\n\n", []Event{ev("message", "\n", "")}},
		{"comments", ": hello\n:\ndata: a\n: between\ndata: b\n\n: after\n\n", []Event{ev("message", "a\nb", "")}},
		{"event sets the type", "event: stdout\ndata: a\n\nevent:stderr\ndata: b\n\n", []Event{ev("stdout", "a", ""), ev("stderr", "b", "")}},
		{"the last event field wins", "event: a\nevent: b\ndata: x\n\n", []Event{ev("b", "x", "")}},
		{"an empty event field is message", "event:\ndata: x\n\n", []Event{ev("message", "x", "")}},
		{"the type does not outlive its event", "event: a\ndata: x\n\ndata: y\n\n", []Event{ev("a", "x", ""), ev("message", "y", "")}},
		{"no data, no event; its type is dropped", "event: a\n\ndata: y\n\n", []Event{ev("message", "y", "")}},
		{"a blank line alone dispatches nothing", "\n\n\r\n\r", nil},
		{"dispatch only on a blank line", "data: a\ndata: b\n", nil},
		{"an event the stream ends inside is discarded", "data: a\n\ndata: b", []Event{ev("message", "a", "")}},
		{"id", "id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\n", []Event{ev("message", "a", "1"), ev("message", "b", "1"), ev("message", "c", "2")}},
		{"an id without data sets the last event id", "id: 7\n\ndata: a\n\n", []Event{ev("message", "a", "7")}},
		{"an id with NUL is ignored", "id: 1\n\nid: a\x00b\ndata: a\n\n", []Event{ev("message", "a", "1")}},
		{"an empty id resets it", "id: 1\n\nid\ndata: a\n\n", []Event{ev("message", "a", "")}},
		{"retry is not an event", "retry: 10\n\nretry: x\ndata: a\n\n", []Event{ev("message", "a", "")}},
		{"other fields are ignored", "foo: bar\nDATA: no\ndata : no\n data: no\ndata: yes\n\n", []Event{ev("message", "yes", "")}},
		{"LF", "data: a\n\n", []Event{ev("message", "a", "")}},
		{"CRLF", "event: x\r\ndata: a\r\ndata: b\r\n\r\n", []Event{ev("x", "a\nb", "")}},
		{"CR", "event: x\rdata: a\rdata: b\r\r", []Event{ev("x", "a\nb", "")}},
		{"mixed line ends", "data: a\rdata: b\r\ndata: c\n\r\ndata: d\r\n\n", []Event{ev("message", "a\nb\nc", ""), ev("message", "d", "")}},
		{"CR CR is two line ends", "data: a\r\rdata: b\r\n\r\n", []Event{ev("message", "a", ""), ev("message", "b", "")}},
		{"LF CR is two line ends", "data: a\n\rdata: b\n\n", []Event{ev("message", "a", ""), ev("message", "b", "")}},
		{"a byte order mark is dropped", "\xEF\xBB\xBFdata: a\n\n", []Event{ev("message", "a", "")}},
		{"only one byte order mark", "\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\ndata: b\n\n", []Event{ev("message", "b", "")}},
		{"a byte order mark later is data", "data: \xEF\xBB\xBFa\n\n", []Event{ev("message", "\uFEFFa", "")}},
		{"NUL in data", "data: a\x00b\n\n", []Event{ev("message", "a\x00b", "")}},
		{"invalid UTF-8", "event: \xFFx\ndata: a\xC0\xAFb\xE2\x82\n\n", []Event{ev("\uFFFDx", "a\uFFFD\uFFFDb\uFFFD", "")}},
		{"a maximal subpart is one U+FFFD", "data: \xF0\x9F\x98A\xED\xA0\x80\n\n", []Event{ev("message", "\uFFFDA\uFFFD\uFFFD\uFFFD", "")}},
		{"valid UTF-8 and U+FFFD itself", "data: é€😀\uFFFD\n\n", []Event{ev("message", "é€😀\uFFFD", "")}},
	} {
		for _, size := range []int{0, 1, 3} {
			got, _, err := decodeAll(t, c.stream, Options{}, size)
			if err != nil || !sameEvents(got, c.want) {
				t.Errorf("%s (pieces of %d): %s %v, want %s", c.name, size, show(got), err, show(c.want))
			}
		}
	}
}

func TestLastEventIDAndRetry(t *testing.T) {
	_, d, err := decodeAll(t, "retry: 1500\nid: a\n\nretry: 2s\nretry:\nid: b\n", Options{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := d.Retry(); !ok || r != 1500*time.Millisecond {
		t.Errorf("retry %v %v", r, ok)
	}
	// "b" was never dispatched: the stream ended inside its event.
	if d.LastEventID() != "a" {
		t.Errorf("last event id %q", d.LastEventID())
	}
	_, d, _ = decodeAll(t, "retry: 99999999999999999999999999\n\n", Options{}, 0)
	if r, ok := d.Retry(); !ok || r != time.Duration(1<<63-1) {
		t.Errorf("a huge retry: %v %v", r, ok)
	}
	_, d, _ = decodeAll(t, "retry: -1\nretry: 1.5\nretry:  1\n\n", Options{}, 0)
	if r, ok := d.Retry(); ok {
		t.Errorf("retry without digits only: %v", r)
	}
}

// Every limit is enforced as the bytes arrive, whatever the pieces, with
// the typed error; below them the same stream reads.
func TestTheSizeLimit(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, c := range []struct {
		name, stream string
		limit        int
		tooLarge     bool
	}{
		{"a data line", "data: " + long + "\n\n", 100, true},
		{"a data line that fits", "data: " + long + "\n\n", 106, false},
		{"data lines", strings.Repeat("data: "+long[:20]+"\n", 10) + "\n", 150, true},
		{"data lines that fit", strings.Repeat("data: "+long[:20]+"\n", 10) + "\n", 300, false},
		{"a comment line", ": " + long + "\ndata: a\n\n", 50, true},
		{"comment lines, each short", strings.Repeat(": "+long[:20]+"\n", 100) + "data: a\n\n", 50, false},
		{"empty data lines", strings.Repeat("data\n", 200) + "\n", 100, true},
		{"an event field", "event: " + long + "\ndata: a\n\n", 80, true},
		{"an id", "id: " + long[:60] + "\n\ndata: " + long[:30] + "\n\n", 80, true},
		{"an unknown field", "x: " + long + "\n\n", 50, true},
		{"a line that never ends", "data: " + long + long, 150, true},
		{"U+FFFD takes more room than the byte", "data: " + strings.Repeat("\xFF", 40) + "\n\n", 100, true},
	} {
		for _, size := range []int{0, 1, 7} {
			_, _, err := decodeAll(t, c.stream, Options{MaxEventBytes: c.limit}, size)
			var tooLarge *TooLargeError
			if got := errors.As(err, &tooLarge); got != c.tooLarge || (err != nil && !got) {
				t.Errorf("%s (pieces of %d): %v, want too large: %v", c.name, size, err, c.tooLarge)
			} else if got && tooLarge.Limit != c.limit {
				t.Errorf("%s: limit %d", c.name, tooLarge.Limit)
			}
		}
	}
}

// After an error the Decoder says so again and reads nothing more.
func TestErrorsStick(t *testing.T) {
	d := NewDecoder(Options{MaxEventBytes: 10})
	if _, _, err := d.Decode([]byte("data: 0123456789\n\n")); err == nil {
		t.Fatal("no error")
	}
	n, ev, err := d.Decode([]byte("data: a\n\n"))
	var tooLarge *TooLargeError
	if n != 0 || ev != nil || !errors.As(err, &tooLarge) || !errors.As(d.End(), &tooLarge) {
		t.Fatalf("after the error: %d %v %v", n, ev, err)
	}
}

// What package server writes reads back in canonical mode as it was.
func TestTheCanonicalFormRoundTrips(t *testing.T) {
	var b []byte
	b = AppendEvent(b, "stdout", []byte(`{"text":"0\n"}`))
	b = AppendComment(b, "keep-alive")
	b = AppendEvent(b, "result", []byte(`{"tool_use_id":"srvtoolu_1"}`))
	b = AppendEvent(b, "empty", nil)
	want := "event: stdout\ndata: {\"text\":\"0\\n\"}\n\n: keep-alive\n\nevent: result\ndata: {\"tool_use_id\":\"srvtoolu_1\"}\n\nevent: empty\ndata: \n\n"
	if string(b) != want {
		t.Fatalf("wrote %q\nwant  %q", b, want)
	}
	for _, size := range []int{0, 1, 5} {
		got, _, err := decodeAll(t, string(b), Options{Canonical: true}, size)
		wantEvents := []Event{ev("stdout", `{"text":"0\n"}`, ""), ev("result", `{"tool_use_id":"srvtoolu_1"}`, ""), ev("empty", "", "")}
		if err != nil || !sameEvents(got, wantEvents) {
			t.Fatalf("read back %s %v", show(got), err)
		}
	}
	// Data with line breaks is valid SSE, if not canonical.
	b = AppendEvent(nil, "x", []byte("a\nb\r\nc\rd\n"))
	if string(b) != "event: x\ndata: a\ndata: b\ndata: c\ndata: d\ndata: \n\n" {
		t.Fatalf("multi-line data: %q", b)
	}
	if got, _, err := decodeAll(t, string(b), Options{}, 0); err != nil || !sameEvents(got, []Event{ev("x", "a\nb\nc\nd\n", "")}) {
		t.Fatalf("multi-line data read back: %s %v", show(got), err)
	}
	for _, bad := range []func(){
		func() { AppendEvent(nil, "", nil) },
		func() { AppendEvent(nil, "a\nb", nil) },
		func() { AppendComment(nil, "a\rb") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			bad()
		}()
	}
}

// Canonical mode refuses what our server never writes, at the line at
// fault, and reads the rest as without it.
func TestCanonicalModeRefuses(t *testing.T) {
	const good = "event: stdout\ndata: {}\n\n"
	for _, c := range []struct {
		name, stream, reason string
		line                 int
	}{
		{"CRLF", "event: stdout\r\ndata: {}\r\n\r\n", "ends with CR", 1},
		{"CR", good + "event: stdout\rdata: {}\r\r", "ends with CR", 4},
		{"a byte order mark", "\xEF\xBB\xBF" + good, "byte order mark", 1},
		{"data without the space", "event: stdout\ndata:{}\n\n", `the form "name: value"`, 2},
		{"event without the space", "event:stdout\ndata: {}\n\n", `the form "name: value"`, 1},
		{"data without a colon", "event: stdout\ndata\n\n", `the form "name: value"`, 2},
		{"an id", "id: 1\n" + good, "not an event, data or comment", 1},
		{"a retry", good + "retry: 5\n\n", "not an event, data or comment", 4},
		{"an unknown field", "event: stdout\nfoo: bar\ndata: {}\n\n", "not an event, data or comment", 2},
		{"two data lines", "event: stdout\ndata: {\ndata: }\n\n", "more than one data line", 3},
		{"data before the event", "data: {}\nevent: stdout\n\n", "before the event line", 1},
		{"two event lines", "event: a\nevent: b\ndata: {}\n\n", "second event line", 2},
		{"an event line after the data", "event: a\ndata: {}\nevent: b\n\n", "second event line", 3},
		{"an event without data", "event: stdout\n\n", "without a data line", 2},
		{"an event without a name", "event: \ndata: {}\n\n", "without a name", 1},
		{"an empty line that ends nothing", good + "\n", "ends no event", 4},
		{"invalid UTF-8", "event: stdout\ndata: {\"text\":\"\xFF\"}\n\n", "not UTF-8", 2},
		{"the end inside an event", good + "event: stdout\ndata: {}\n", "ended inside an event", 6},
		{"the end inside a line", good + "event: std", "ended inside an event", 4},
		{"the end after a comment", good + ": keep-alive\n", "ended inside an event", 5},
	} {
		for _, size := range []int{0, 1} {
			_, _, err := decodeAll(t, c.stream, Options{Canonical: true}, size)
			var fe *FormatError
			if !errors.As(err, &fe) || !strings.Contains(fe.Reason, c.reason) || fe.Line != c.line {
				t.Errorf("%s (pieces of %d): %v, want line %d: %s", c.name, size, err, c.line, c.reason)
			}
		}
		if _, _, err := decodeAll(t, c.stream, Options{}, 0); err != nil {
			t.Errorf("%s: without canonical mode: %v", c.name, err)
		}
	}
	// Comments anywhere, and every event in the form, pass.
	stream := ": hi\n" + good + ": keep-alive\n\n" + "event: result\n: mid\ndata: {}\n\n"
	got, _, err := decodeAll(t, stream, Options{Canonical: true}, 0)
	lenient, _, _ := decodeAll(t, stream, Options{}, 0)
	if err != nil || len(got) != 2 || !sameEvents(got, lenient) {
		t.Fatalf("a canonical stream: %s %v", show(got), err)
	}
	if !reflect.DeepEqual(got[1], ev("result", "{}", "")) {
		t.Fatalf("%+v", got[1])
	}
}
