// Package sse reads and writes Server-Sent Events (text/event-stream, see
// contract.EventStreamType): the one reader of event streams in codeport,
// used by adapters/http for a streamed exec, by `codeport conformance` to
// check our server's streams, and by package server to write them.
//
// Reading follows the WHATWG HTML standard's "Parsing an event stream" and
// "Interpreting an event stream" (section 9.2):
//
//   - the stream is UTF-8: one leading byte order mark is dropped, and an
//     invalid sequence reads as U+FFFD (one per maximal subpart, as the
//     Encoding standard's UTF-8 decoder does);
//   - a line ends with CRLF, LF or CR;
//   - an empty line dispatches the event; a line that starts with ':' is a
//     comment; any other line is a field, its name up to the first ':' and
//     its value after it, less one space if the value starts with one (a
//     line without ':' is a field of that name with an empty value);
//   - "event" sets the event's type, "data" adds a line to its data (the
//     lines are joined with LF), "id" sets the last event ID unless the
//     value holds a NUL, "retry" sets the reconnection time when the value
//     is ASCII digits; other fields are ignored;
//   - an event without a data field is not dispatched (its type is
//     dropped; an id it set stays); an event's type is "message" when it
//     named none; an event the stream ends inside is discarded.
//
// A Decoder never holds more than its MaxEventBytes for one event: the
// event's data, type and the last event ID so far, plus the line being
// read (comments and ignored fields count only while they are that line),
// in buffers no larger than that; only while a line that came in several
// pieces moves into the event are its bytes held twice. Past the limit it
// fails with a *TooLargeError instead of buffering, as the bytes arrive,
// so a hostile stream (a line that never ends, data lines without end)
// costs a bounded amount of memory.
//
// The canonical form is what package server writes (AppendEvent,
// AppendComment): LF line ends, each event an "event: " line then one
// "data: " line then an empty line, comment lines anywhere, nothing else.
// Options.Canonical makes a Decoder also refuse, with a *FormatError, a
// stream that is valid SSE but not in that form; the events it reads are
// the same as without it.
package sse

import (
	"fmt"
	"time"
)

// DefaultMaxEventBytes is the limit of Options.MaxEventBytes when it is
// not set.
const DefaultMaxEventBytes = 1 << 20

// Event is one dispatched event.
type Event struct {
	// Type is the last "event" field's value, or "message" when the event
	// had none.
	Type string
	// Data is the values of the event's "data" fields, joined by LF. The
	// caller owns it.
	Data []byte
	// ID is the stream's last event ID when the event was dispatched: the
	// last "id" field so far, in this event or an earlier one.
	ID string
}

// Options configure a Decoder or a Reader.
type Options struct {
	// MaxEventBytes bounds what is held for one event (see the package
	// documentation); zero or less means DefaultMaxEventBytes.
	MaxEventBytes int
	// Canonical also checks that the stream is in the canonical form.
	Canonical bool
}

// TooLargeError is the error of a stream whose event (or line) is over
// Options.MaxEventBytes.
type TooLargeError struct {
	Limit int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("sse: an event over the %d-byte limit", e.Limit)
}

// FormatError is the error of a stream, read with Options.Canonical, that
// is not in the canonical form.
type FormatError struct {
	// Line is the number of the line at fault, from 1.
	Line int
	// Reason says what is wrong.
	Reason string
	// Text is the start of the line, when it helps.
	Text string
}

func (e *FormatError) Error() string {
	if e.Text == "" {
		return fmt.Sprintf("sse: line %d: %s", e.Line, e.Reason)
	}
	return fmt.Sprintf("sse: line %d: %s: %q", e.Line, e.Reason, e.Text)
}

// retryOf is the reconnection time of a "retry" field's value: a number
// of milliseconds in ASCII digits, saturated at the largest Duration. An
// empty value or one with anything else is not one.
func retryOf(v []byte) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	const maxMS = int64(1<<63-1) / int64(time.Millisecond)
	var ms int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		if ms <= maxMS {
			ms = ms*10 + int64(c-'0')
		}
	}
	if ms > maxMS {
		return time.Duration(1<<63 - 1), true
	}
	return time.Duration(ms) * time.Millisecond, true
}
