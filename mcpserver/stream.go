package mcpserver

import (
	"context"
	"log/slog"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codeport/codeport/port"
)

// maxMessageBytes bounds the text of one notification: chunks that queued
// up while the last notification was being sent are joined up to it.
const maxMessageBytes = 64 << 10

// streamer sends a call's output to the client while the call runs: as
// progress notifications when the request carries a progress token, and
// as log messages when the client asked for them (ServerSession.Log sends
// nothing otherwise).
//
// The port calls push, which must not block (the program may wait on it),
// so push only queues; one goroutine, started by newStreamer and awaited
// by finish, sends. The queue is bounded by the port's output limits: a
// call streams no more than its result holds.
type streamer struct {
	// emit sends one message; progress is the bytes sent so far, this
	// message's included.
	emit func(stream port.Stream, text string, progress float64) error
	ctx  context.Context
	log  *slog.Logger

	mu     sync.Mutex
	queue  []chunk
	closed bool
	wake   chan struct{}
	done   chan struct{}

	// Owned by the sending goroutine.
	progress float64   // bytes sent so far
	partial  [2][]byte // an incomplete UTF-8 sequence held back per stream
	failed   bool      // the client could not be reached: send no more
}

type chunk struct {
	stream port.Stream
	data   []byte
}

func newStreamer(ctx context.Context, req *mcp.CallToolRequest, log *slog.Logger) *streamer {
	var session *mcp.ServerSession
	var token any
	if req != nil {
		session = req.Session
		if req.Params != nil {
			token = req.Params.GetProgressToken()
		}
	}
	emit := func(stream port.Stream, text string, progress float64) error {
		if session == nil {
			return nil
		}
		if token != nil {
			err := session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: progress, Message: text})
			if err != nil {
				return err
			}
		}
		return logOutput(ctx, session, stream, text)
	}
	return startStreamer(ctx, emit, log)
}

// startStreamer starts a streamer's sending goroutine, which finish ends.
func startStreamer(ctx context.Context, emit func(port.Stream, string, float64) error, log *slog.Logger) *streamer {
	s := &streamer{emit: emit, ctx: ctx, log: log, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go s.run()
	return s
}

// push queues a chunk; it is the call's OnOutput.
func (s *streamer) push(stream port.Stream, b []byte) {
	if len(b) == 0 {
		return
	}
	s.mu.Lock()
	if !s.closed {
		s.queue = append(s.queue, chunk{stream, append([]byte(nil), b...)})
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// finish sends what is queued and waits until it is sent. Nothing is
// queued after it.
func (s *streamer) finish() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	<-s.done
}

func (s *streamer) run() {
	defer close(s.done)
	for range s.wake {
		s.mu.Lock()
		queue, closed := s.queue, s.closed
		s.queue = nil
		s.mu.Unlock()
		s.sendAll(queue, closed)
		if closed {
			return
		}
	}
}

// sendAll sends queued chunks, joining neighbours of the same stream up to
// maxMessageBytes. A chunk that ends inside a UTF-8 sequence keeps that
// end for the next one, so that every message is the text as written; at
// the end (last) whatever is held back goes as it is.
func (s *streamer) sendAll(queue []chunk, last bool) {
	for i := 0; i < len(queue); {
		stream := queue[i].stream
		idx := streamIndex(stream)
		buf := append(s.partial[idx], queue[i].data...)
		s.partial[idx] = nil
		for i++; i < len(queue) && queue[i].stream == stream && len(buf)+len(queue[i].data) <= maxMessageBytes; i++ {
			buf = append(buf, queue[i].data...)
		}
		cut := completeUTF8(buf)
		s.partial[idx] = append([]byte(nil), buf[cut:]...)
		s.send(stream, buf[:cut])
	}
	if last {
		for idx, stream := range []port.Stream{port.Stdout, port.Stderr} {
			if rest := s.partial[idx]; len(rest) > 0 {
				s.partial[idx] = nil
				s.send(stream, rest)
			}
		}
	}
}

func streamIndex(st port.Stream) int {
	if st == port.Stderr {
		return 1
	}
	return 0
}

// completeUTF8 is where b's last incomplete UTF-8 sequence, if any, starts.
func completeUTF8(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

func (s *streamer) send(stream port.Stream, b []byte) {
	if len(b) == 0 || s.failed {
		return
	}
	s.progress += float64(len(b))
	if err := s.emit(stream, string(b), s.progress); err != nil {
		s.fail(err)
	}
}

// fail stops sending: the client is gone, or its connection broken.
func (s *streamer) fail(err error) {
	s.failed = true
	if s.ctx.Err() == nil {
		s.log.Debug("mcp: streaming a call's output stopped", "error", err)
	}
}
