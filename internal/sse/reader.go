package sse

import (
	"errors"
	"io"
	"time"
)

// readBufferBytes is the size of a Reader's read buffer, which it holds
// besides what its Decoder holds.
const readBufferBytes = 32 << 10

// maxEmptyReads is how many reads in a row may return nothing and no
// error before a Reader gives up with io.ErrNoProgress.
const maxEmptyReads = 100

// Reader reads the events of a stream one at a time, as they arrive: an
// event is returned as soon as the empty line that ends it has been read,
// without waiting for more of the stream.
type Reader struct {
	src      io.Reader
	dec      *Decoder
	buf      []byte
	pos, end int   // the unparsed bytes of buf
	srcErr   error // the source's error, once buf is parsed
	err      error
}

// NewReader returns a Reader of the stream src.
func NewReader(src io.Reader, opts Options) *Reader {
	d := NewDecoder(opts)
	size := readBufferBytes
	if d.max < size {
		size = max(d.max, 512)
	}
	return &Reader{src: src, dec: d, buf: make([]byte, size)}
}

// Next returns the next event. At the end of the stream it returns io.EOF
// (an event the stream ends inside is discarded: with Options.Canonical,
// that is a *FormatError). Past the size limit it returns a
// *TooLargeError, and with Options.Canonical a stream not in the canonical
// form is a *FormatError. An error reading the stream is returned as it
// is. After an error, Next returns it again.
func (r *Reader) Next() (Event, error) {
	empty := 0
	for r.err == nil {
		if r.pos < r.end {
			n, ev, err := r.dec.Decode(r.buf[r.pos:r.end])
			r.pos += n
			switch {
			case err != nil:
				r.err = err
			case ev != nil:
				return *ev, nil
			}
			continue
		}
		if r.srcErr != nil {
			r.err = r.srcErr
			if errors.Is(r.srcErr, io.EOF) {
				if err := r.dec.End(); err != nil {
					r.err = err
				}
			}
			break
		}
		n, err := r.src.Read(r.buf)
		r.pos, r.end, r.srcErr = 0, n, err
		if n > 0 || err != nil {
			empty = 0
		} else if empty++; empty >= maxEmptyReads {
			r.srcErr = io.ErrNoProgress
		}
	}
	return Event{}, r.err
}

// LastEventID is the stream's last event ID string (Decoder.LastEventID).
func (r *Reader) LastEventID() string { return r.dec.LastEventID() }

// Retry is the reconnection time the stream set (Decoder.Retry).
func (r *Reader) Retry() (time.Duration, bool) { return r.dec.Retry() }
