package server

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/internal/sse"
	"github.com/codeport/codeport/port"
)

// The exec route streams when asked: a client that sends
// "Accept: text/event-stream" gets Server-Sent Events (see
// contract/openapi.yaml and contract.EventStdout):
//
//	event: stdout
//	data: {"text":"0\n"}
//
//	event: result
//	data: {<exactly the response body of the same call without streaming>}
//
// stdout and stderr events carry the output as the program writes it, in
// order (what one stream got while the client was behind comes as one
// event); the texts of a stream's events add up to that stream of the
// result, truncation notice and notes included. The last event is result,
// or error (a contract error body) if the call failed after its events
// began. A call that fails before any output is answered as without
// streaming (its status and error body), so a client learns a busy or
// unknown session from the status. A client that goes away cancels the
// call. Comments keep the connection alive through proxies while a
// program is silent.

// keepAliveEvery is how often a silent stream gets a comment.
const keepAliveEvery = 15 * time.Second

// acceptsEventStream reports whether the Accept header lists
// text/event-stream with a quality above zero.
func acceptsEventStream(h http.Header) bool {
	for _, v := range h.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			if mt, params, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == contract.EventStreamType && !refused(params) {
				return true
			}
		}
	}
	return false
}

// refused reports whether a media range's parameters give it a quality of
// zero, which says the client does not accept it. HTTP spells zero "0",
// "0.0", "0.00" or "0.000", so the value is read as a number, not
// compared with one spelling.
func refused(params map[string]string) bool {
	q, ok := params["q"]
	if !ok {
		return false
	}
	v, err := strconv.ParseFloat(q, 64)
	return err == nil && v <= 0
}

// chunkQueue holds output between the call, which must never wait on the
// client, and the handler, which writes it. A client that reads slowly,
// or not at all, leaves the output here until the stream ends, so it is
// kept at about its own size, which the port's output limits bound (a
// call streams at most what its result holds), however the program
// wrote it: output of one stream written since the handler last took the
// queue is one run, its bytes appended to the others, and a run costs a
// few bytes of bookkeeping. (A queued chunk per write cost tens of bytes
// per byte written a byte at a time, and a client that read nothing held
// them all.) The contract's events are stdout and stderr; output of any
// other stream is not queued.
type chunkQueue struct {
	mu sync.Mutex
	b  backlog
	// last is where the last run of b starts in b.runs, and lastLen
	// its length; lastLen is 0 when b has no run.
	last, lastLen int
	notify        chan struct{}
}

// backlog is output not yet sent: text holds the bytes of runs one after
// another, and runs the runs in order, each the uvarint of its length
// shifted left by one, with its stream in the low bit (0 for stdout, 1
// for stderr).
type backlog struct {
	text []byte
	runs []byte
}

func (q *chunkQueue) push(s port.Stream, b []byte) {
	var bit int
	switch s {
	case port.Stdout:
	case port.Stderr:
		bit = 1
	default:
		return
	}
	if len(b) == 0 {
		return
	}
	q.mu.Lock()
	if q.lastLen > 0 && q.b.runs[q.last]&1 == byte(bit) {
		// The same stream as the last run: that run grows.
		q.b.runs = q.b.runs[:q.last]
		q.lastLen += len(b)
	} else {
		q.last, q.lastLen = len(q.b.runs), len(b)
	}
	q.b.runs = binary.AppendUvarint(q.b.runs, uint64(q.lastLen)<<1|uint64(bit))
	q.b.text = append(q.b.text, b...)
	q.mu.Unlock()
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

func (q *chunkQueue) take() backlog {
	q.mu.Lock()
	defer q.mu.Unlock()
	b := q.b
	q.b, q.last, q.lastLen = backlog{}, 0, 0
	return b
}

// executeStream runs one exec call and streams its output as events. The
// call runs in a goroutine of its own, which this handler awaits before
// it returns whatever happens to the client.
func (s *server) executeStream(w http.ResponseWriter, r *http.Request, req port.ExecuteRequest) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	q := &chunkQueue{notify: make(chan struct{}, 1)}
	req.OnOutput = q.push
	type ended struct {
		res port.Result
		err error
	}
	done := make(chan ended, 1)
	go func() {
		res, err := s.port.Execute(ctx, r.PathValue("id"), req)
		done <- ended{res, checkResult(res, err)}
	}()

	rc := http.NewResponseController(w)
	started := false
	var failed error // writing to the client failed: it is gone
	send := func(event string, v any) {
		if failed != nil {
			return
		}
		if !started {
			h := w.Header()
			h.Set("Content-Type", contract.EventStreamType)
			h.Set("Cache-Control", "no-cache")
			h.Set("X-Accel-Buffering", "no") // nginx: pass events on as they come
			w.WriteHeader(http.StatusOK)
			started = true
		}
		var b []byte
		if event == "" {
			b = sse.AppendComment(nil, "keep-alive")
		} else {
			data, err := json.Marshal(v)
			if err != nil { // only a bug: the values are this package's types
				data = []byte(`{"detail":"internal error"}`)
				event = contract.EventError
			}
			// JSON holds no line break: one data line, the canonical
			// form `codeport conformance` holds a server to.
			b = sse.AppendEvent(nil, event, data)
		}
		if _, err := w.Write(b); err != nil {
			failed = err
		} else if err := rc.Flush(); err != nil {
			failed = err
		}
		if failed != nil {
			cancel() // nobody reads the rest: stop the program
		}
	}
	sendChunks := func(b backlog) {
		for runs, text := b.runs, b.text; len(runs) > 0; {
			v, k := binary.Uvarint(runs)
			runs = runs[k:]
			stream, n := port.Stdout, int(v>>1)
			if v&1 == 1 {
				stream = port.Stderr
			}
			send(string(stream), contract.OutputEvent{Text: string(text[:n])})
			text = text[n:]
		}
	}
	alive := time.NewTicker(keepAliveEvery)
	defer alive.Stop()
	for {
		select {
		case <-q.notify:
			sendChunks(q.take())
		case <-alive.C:
			if started {
				send("", nil)
			}
		case e := <-done:
			s.executed(r, e.res, e.err)
			rest := q.take()
			if e.err != nil && !started && len(rest.runs) == 0 {
				s.writeError(w, r, e.err)
				return
			}
			sendChunks(rest)
			if e.err != nil {
				_, _, body := errorAnswer(r, e.err)
				if rec, ok := w.(*recorder); ok {
					rec.err = e.err
				}
				send(contract.EventError, body)
				return
			}
			send(contract.EventResult, responseOf(e.res, req))
			return
		}
	}
}
