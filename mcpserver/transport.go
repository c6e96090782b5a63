package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxMessageBytes bounds a message of IOTransport's when its
// MaxMessageBytes is 0: the SDK's own default.
const DefaultMaxMessageBytes = mcp.DefaultMaxLineLength

// IOTransport is the SDK's mcp.IOTransport (newline-delimited JSON-RPC
// over a reader and a writer, as over stdio) made to survive its client's
// mistakes: each line is checked (CheckMessage) before the SDK sees it,
// and one that is not a message the server takes is answered with a
// JSON-RPC error response (parse error or invalid request, with id null
// when its id cannot be known), and the next line is read, where the
// SDK's transport would end the connection, and with it every session the
// client made. A line over MaxMessageBytes is answered so too, and
// skipped without being held. Blank lines are skipped.
type IOTransport struct {
	Reader io.ReadCloser
	Writer io.WriteCloser
	// MaxMessageBytes bounds a line; 0 is DefaultMaxMessageBytes.
	MaxMessageBytes int
}

// Connect implements mcp.Transport.
func (t *IOTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	limit := t.MaxMessageBytes
	if limit <= 0 {
		limit = DefaultMaxMessageBytes
	}
	w := &lockedWriter{w: t.Writer}
	f := &lineFilter{rc: t.Reader, br: bufio.NewReaderSize(t.Reader, 64<<10), w: w, limit: limit}
	// The SDK's transport gets whole checked lines, one per read: its own
	// frame bound (a line and its newline) is never what stops one.
	inner := &mcp.IOTransport{Reader: f, Writer: w, MaxLineLength: limit + 1}
	return inner.Connect(ctx)
}

// lockedWriter serialises the SDK's writes, each one whole message, with
// the refusals the filter writes.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func (l *lockedWriter) Close() error { return l.w.Close() }

// lineFilter hands the SDK the lines that pass CheckMessage, each with
// its newline, and answers the others. Its reads are the SDK's reading
// goroutine's alone.
type lineFilter struct {
	rc    io.Closer
	br    *bufio.Reader
	w     io.Writer
	limit int

	line    []byte // the line being read
	pending []byte // what is left of the line handed out
	err     error  // the reader's, once it is done
}

// keepBytes is the largest line buffer kept for the next line: a buffer
// grown for one large message is let go.
const keepBytes = 1 << 20

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, tooLong, err := f.next()
		if err != nil {
			f.err = err
		}
		var refusal *Refusal
		switch {
		case tooLong:
			refusal = &Refusal{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("invalid request: the message is over %d bytes", f.limit)}
		case len(bytes.TrimSpace(line)) == 0:
			continue
		default:
			refusal = CheckMessage(line)
		}
		if refusal != nil {
			if _, werr := f.w.Write(append(refusal.Response(), '\n')); werr != nil {
				f.err = werr
			}
			continue
		}
		f.pending = append(line, '\n')
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	if len(f.pending) == 0 && cap(f.line) > keepBytes {
		f.line = nil
	}
	return n, nil
}

// next reads the next line, without its line ending; tooLong: it was over
// the limit, and was read to its end without being kept. err is the
// reader's, io.EOF at the end, which may come with a last line that had no
// newline.
func (f *lineFilter) next() (line []byte, tooLong bool, err error) {
	f.line = f.line[:0]
	for {
		chunk, err := f.br.ReadSlice('\n')
		if !tooLong {
			if len(f.line)+len(chunk) > f.limit+2 { // "\r\n" may follow a line at the limit
				tooLong, f.line = true, f.line[:0]
			} else {
				f.line = append(f.line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(f.line, []byte("\n")), []byte("\r"))
		if !tooLong && len(line) > f.limit {
			tooLong, line = true, nil
		}
		if tooLong {
			line = nil
		}
		return line, tooLong, err
	}
}

// Close closes the reader, as the SDK closes its transport's.
func (f *lineFilter) Close() error { return f.rc.Close() }
