package sse

import (
	"bytes"
	"time"
	"unicode/utf8"
)

// bom is the UTF-8 byte order mark a stream may start with.
var bom = []byte("\xEF\xBB\xBF")

// keepLineBuffer is the largest line buffer kept for the next line: one
// that grew past it for a long line is let go.
const keepLineBuffer = 64 << 10

// block is where a canonical stream is in the event being read.
type block uint8

const (
	blockEmpty   block = iota // nothing since the last empty line
	blockComment              // comments only
	blockEvent                // the "event: " line
	blockData                 // the "event: " line, then the "data: " line
)

// Decoder parses an event stream pushed to it in pieces of any size: the
// pieces in which it arrives make no difference to what it reads. The zero
// Decoder is not usable; NewDecoder makes one. A Decoder is not safe for
// concurrent use.
type Decoder struct {
	max       int
	canonical bool

	line   []byte // the start of the current line, when it spans calls
	lineNo int    // lines ended so far
	skipLF bool   // the last line ended with CR: an LF next is part of its end

	data      []byte // the data buffer, its values joined by LF
	dataLines int    // the data fields of the event
	typ       string // the event type buffer
	id        string // the last event ID buffer
	lastID    string // the last event ID string
	retry     time.Duration
	hasRetry  bool

	block block // Canonical: where the stream is in its event
	err   error // the first error; every later call returns it
}

// NewDecoder returns a Decoder at the start of a stream.
func NewDecoder(opts Options) *Decoder {
	limit := opts.MaxEventBytes
	if limit <= 0 {
		limit = DefaultMaxEventBytes
	}
	return &Decoder{max: limit, canonical: opts.Canonical}
}

// Decode parses b up to the end of the first event it completes and
// returns that event and the number of bytes of b it consumed; ev is nil
// when it consumed all of b without completing one. The caller passes the
// rest of b (b[n:]) to the next call. After an error, every call returns
// that error: a *TooLargeError, or with Options.Canonical a *FormatError.
func (d *Decoder) Decode(b []byte) (n int, ev *Event, err error) {
	if d.err != nil {
		return 0, nil, d.err
	}
	for n < len(b) {
		if d.skipLF {
			d.skipLF = false
			if b[n] == '\n' {
				n++
				continue
			}
		}
		rest := b[n:]
		end := bytes.IndexByte(rest, '\n')
		seg := rest
		if end >= 0 {
			seg = rest[:end]
		}
		if cr := bytes.IndexByte(seg, '\r'); cr >= 0 {
			end, seg = cr, rest[:cr]
		}
		if len(d.line)+len(seg) > d.room() {
			return n, nil, d.fail(&TooLargeError{Limit: d.max})
		}
		if end < 0 { // the line goes on in the next call
			d.line = appendBounded(d.line, seg, d.max)
			return len(b), nil, nil
		}
		cr := rest[end] == '\r'
		n += end + 1
		d.skipLF = cr
		line := seg
		if len(d.line) > 0 {
			d.line = appendBounded(d.line, seg, d.max)
			line = d.line
		}
		ev, err := d.endLine(line, cr)
		if cap(d.line) > keepLineBuffer {
			d.line = nil
		} else {
			d.line = d.line[:0]
		}
		if err != nil {
			return n, nil, d.fail(err)
		}
		if ev != nil {
			return n, ev, nil
		}
	}
	return n, nil, nil
}

// End is the end of the stream. An event it ends inside is discarded;
// with Options.Canonical that is a *FormatError. It returns the Decoder's
// error if it had one.
func (d *Decoder) End() error {
	if d.err != nil {
		return d.err
	}
	if d.canonical && (len(d.line) > 0 || d.block != blockEmpty) {
		return d.fail(&FormatError{Line: d.lineNo + 1, Reason: "the stream ended inside an event"})
	}
	d.line, d.data, d.dataLines, d.typ = nil, nil, 0, ""
	return nil
}

// LastEventID is the stream's last event ID string: the "id" of the last
// event dispatched, or of an earlier one.
func (d *Decoder) LastEventID() string { return d.lastID }

// Retry is the reconnection time the stream's last valid "retry" field
// set; ok is false when it set none.
func (d *Decoder) Retry() (retry time.Duration, ok bool) { return d.retry, d.hasRetry }

// held is the bytes held for the event being read, but for its current
// line.
func (d *Decoder) held() int { return len(d.data) + len(d.typ) + len(d.id) }

// room is what is left for the line being read.
func (d *Decoder) room() int { return d.max - d.held() }

func (d *Decoder) fail(err error) error {
	d.err = err
	d.line, d.data = nil, nil
	return err
}

// endLine processes one line, without its end; cr says it ended with CR
// (or CRLF). It returns the event an empty line dispatches.
func (d *Decoder) endLine(line []byte, cr bool) (*Event, error) {
	d.lineNo++
	if d.lineNo == 1 && bytes.HasPrefix(line, bom) {
		if d.canonical {
			return nil, d.formatError(line, "a byte order mark")
		}
		line = line[len(bom):]
	}
	if d.canonical {
		if cr {
			return nil, d.formatError(line, "a line that ends with CR, not LF alone")
		}
		if !utf8.Valid(line) {
			return nil, d.formatError(line, "a line that is not UTF-8")
		}
	}
	if len(line) == 0 {
		return d.dispatch()
	}
	if line[0] == ':' {
		if d.canonical && d.block == blockEmpty {
			d.block = blockComment
		}
		return nil, nil
	}
	name, value := line, []byte(nil)
	if colon := bytes.IndexByte(line, ':'); colon >= 0 {
		name, value = line[:colon], line[colon+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	if d.canonical {
		if err := d.checkField(line, string(name)); err != nil {
			return nil, err
		}
	}
	switch string(name) {
	case "event":
		v := validUTF8(value)
		if d.held()-len(d.typ)+len(v) > d.max {
			return nil, &TooLargeError{Limit: d.max}
		}
		d.typ = string(v)
	case "data":
		v := validUTF8(value)
		sep := 0
		if d.dataLines > 0 {
			sep = 1
		}
		if d.held()+sep+len(v) > d.max {
			return nil, &TooLargeError{Limit: d.max}
		}
		if sep > 0 {
			d.data = appendBounded(d.data, []byte{'\n'}, d.max)
		}
		d.data = appendBounded(d.data, v, d.max)
		d.dataLines++
	case "id":
		if bytes.IndexByte(value, 0) >= 0 {
			break
		}
		v := validUTF8(value)
		if d.held()-len(d.id)+len(v) > d.max {
			return nil, &TooLargeError{Limit: d.max}
		}
		d.id = string(v)
	case "retry":
		if r, ok := retryOf(value); ok {
			d.retry, d.hasRetry = r, true
		}
	}
	return nil, nil
}

// dispatch ends an event at an empty line.
func (d *Decoder) dispatch() (*Event, error) {
	if d.canonical {
		switch d.block {
		case blockEmpty:
			return nil, d.formatError(nil, "an empty line that ends no event")
		case blockEvent:
			return nil, d.formatError(nil, "an event without a data line")
		}
		d.block = blockEmpty
	}
	d.lastID = d.id
	if d.dataLines == 0 {
		d.typ = ""
		return nil, nil
	}
	ev := &Event{Type: d.typ, Data: d.data, ID: d.lastID}
	if ev.Type == "" {
		ev.Type = "message"
	}
	d.data, d.dataLines, d.typ = nil, 0, ""
	return ev, nil
}

// checkField checks a field line of a canonical stream.
func (d *Decoder) checkField(line []byte, name string) error {
	switch {
	case name == "event" && bytes.HasPrefix(line, []byte("event: ")):
		switch {
		case len(line) == len("event: "):
			return d.formatError(line, "an event line without a name")
		case d.block == blockEvent || d.block == blockData:
			return d.formatError(line, "a second event line in one event")
		}
		d.block = blockEvent
	case name == "data" && bytes.HasPrefix(line, []byte("data: ")):
		switch d.block {
		case blockData:
			return d.formatError(line, "an event with more than one data line")
		case blockEmpty, blockComment:
			return d.formatError(line, "a data line before the event line")
		}
		d.block = blockData
	case name == "event" || name == "data":
		return d.formatError(line, `an event or data line not in the form "name: value"`)
	default:
		return d.formatError(line, "a line that is not an event, data or comment line")
	}
	return nil
}

func (d *Decoder) formatError(line []byte, reason string) error {
	const clip = 80
	text := line
	if len(text) > clip {
		text = text[:clip]
	}
	return &FormatError{Line: d.lineNo, Reason: reason, Text: string(text)}
}

// appendBounded appends src to dst, growing dst to a capacity of at most
// limit; len(dst)+len(src) is at most limit.
func appendBounded(dst, src []byte, limit int) []byte {
	need := len(dst) + len(src)
	if need > cap(dst) {
		c := min(max(2*cap(dst), need, 512), limit)
		grown := make([]byte, len(dst), max(c, need))
		copy(grown, dst)
		dst = grown
	}
	return append(dst, src...)
}
