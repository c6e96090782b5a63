package httpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/internal/sse"
	"github.com/codeport/codeport/port"
)

// execStream is Execute's exchange when the caller wants the output while
// the program runs: it asks for Server-Sent Events (codeport's extension
// of the exec route, see contract/openapi.yaml), hands each stdout and
// stderr event to out as it arrives, and returns the body of the result
// event, which is the exec response. A backend that answers with plain
// JSON (one that does not stream: the reference backend) is read as
// without streaming; the Port then delivers the output at the end.
//
// The stream is read by the rules of the HTML standard (internal/sse), as
// any event-stream client reads it. Everything is bounded by the response
// cap: the output events together, and each event, the result's included,
// as it is read.
//
// The result event completes the answer, and the call returns with it.
// What follows is drained behind the caller (drainBehind), within the
// wall clock and until Close, so that the connection is reused once the
// backend ends the stream: a backend that keeps the stream open after its
// result (an event framework holding the connection for more, a proxy)
// would otherwise hold the call until its wall clock ran out. The
// request's context is therefore not ctx itself, which the caller (the
// Port) cancels as the call returns, but one detached from it to which
// ctx's end is passed on until the result has arrived.
func (a *adapter) execStream(ctx context.Context, c *call, body []byte, out func(port.Stream, []byte)) (int, []byte, error) {
	callCtx, cancel := context.WithTimeoutCause(context.WithoutCancel(ctx), c.wall, errWallClock)
	stop := context.AfterFunc(ctx, cancel)
	draining := false // the rest of the response is drained behind the caller
	defer func() {
		if !draining {
			stop()
			cancel()
		}
	}()
	req, err := a.newRequest(callCtx, c, "", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", contract.EventStreamType+", application/json;q=0.5")
	resp, err := a.do(ctx, callCtx, c, req)
	if err != nil {
		return 0, nil, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != contract.EventStreamType || resp.StatusCode != http.StatusOK {
		return a.readAnswer(ctx, callCtx, c, resp)
	}
	defer func() {
		if !draining {
			a.finish(resp)
		}
	}()
	limit := a.cfg.settings.MaxResponseBytes
	events := sse.NewReader(resp.Body, sse.Options{MaxEventBytes: eventCap(limit)})
	var streamed int64
	for {
		ev, err := events.Next()
		if err != nil {
			var tooLarge *sse.TooLargeError
			switch {
			case errors.As(err, &tooLarge):
				return resp.StatusCode, nil, violation(c, resp.StatusCode, fmt.Sprintf("an event over the %d-byte cap", limit))
			case errors.Is(err, io.EOF):
				return resp.StatusCode, nil, violation(c, resp.StatusCode, "the event stream ended without a result event")
			}
			return resp.StatusCode, nil, transportError(ctx, callCtx, c, err)
		}
		switch ev.Type {
		case contract.EventStdout, contract.EventStderr:
			var o contract.OutputEvent
			if err := json.Unmarshal(ev.Data, &o); err != nil {
				return resp.StatusCode, nil, violation(c, resp.StatusCode, "a "+ev.Type+" event whose data is not an output event")
			}
			if streamed += int64(len(o.Text)); streamed > limit {
				return resp.StatusCode, nil, violation(c, resp.StatusCode, fmt.Sprintf("output events over the %d-byte cap", limit))
			}
			out(port.Stream(ev.Type), []byte(o.Text))
		case contract.EventResult:
			if stop() {
				// ctx has not ended: the drain is no longer the caller's.
				draining = true
				a.drainBehind(resp, cancel)
			}
			return resp.StatusCode, ev.Data, nil
		case contract.EventError:
			return resp.StatusCode, nil, eventError(c, ev.Data)
		}
	}
}

// eventOverhead is what an event holds besides its data: its type and
// the "data: " of the line being read (see sse.Options.MaxEventBytes).
const eventOverhead = 256

// eventCap bounds one event of a stream whose data may be as large as a
// response body of limit bytes.
func eventCap(limit int64) int {
	if limit > math.MaxInt-eventOverhead {
		return math.MaxInt
	}
	return int(limit) + eventOverhead
}

// eventError is the port error an error event names by its code.
func eventError(c *call, data []byte) error {
	detail, code := readDetail(data, c.secrets), readCode(data)
	prefix := fmt.Sprintf("httpadapter: %s: error event (detail %q, code %q)", c, detail, code)
	if err, ok := codedError(c, prefix, code, 0); ok {
		return err
	}
	return fmt.Errorf("%s: %w", prefix, port.ErrBackendUnreachable)
}
