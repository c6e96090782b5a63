package server

import (
	"context"
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
// order; the texts of a stream's events add up to that stream of the
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

// chunkQueue holds output chunks between the call, which must never wait
// on the client, and the handler, which writes them. Its size is bounded
// by the port's output limits: a call streams at most what its result
// holds.
type chunkQueue struct {
	mu     sync.Mutex
	chunks []queued
	notify chan struct{}
}

type queued struct {
	stream port.Stream
	text   string
}

func (q *chunkQueue) push(s port.Stream, b []byte) {
	q.mu.Lock()
	q.chunks = append(q.chunks, queued{s, string(b)})
	q.mu.Unlock()
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

func (q *chunkQueue) take() []queued {
	q.mu.Lock()
	defer q.mu.Unlock()
	c := q.chunks
	q.chunks = nil
	return c
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
	sendChunks := func(chunks []queued) {
		for _, c := range chunks {
			send(string(c.stream), contract.OutputEvent{Text: c.text})
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
			if e.err != nil && !started && len(rest) == 0 {
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
