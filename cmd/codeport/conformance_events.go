package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/internal/sse"
)

// eventSchemas are the schemas the data of each event of a streamed exec
// must match (see the exec route in contract/openapi.yaml).
var eventSchemas = map[string]string{
	contract.EventStdout: "OutputEvent",
	contract.EventStderr: "OutputEvent",
	contract.EventResult: "ExecResponse",
	contract.EventError:  "Error",
}

// isEventStream reports whether a response is a stream of events.
func isEventStream(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == contract.EventStreamType
}

// eventChecker validates a streamed exec as it passes to the adapter,
// without holding it back (the adapter must see each event when the server
// sends it, or live output could not be checked): the stream is in the
// canonical form our server writes (sse.Options.Canonical: LF line ends,
// each event an "event: " then one "data: " line, comments, nothing
// else), every event is a known one whose data matches its schema, output
// events come before one final result or error event, and nothing follows
// it. A stream the adapter closes before its end is not judged on its end.
//
// The events are read by the same reader as the adapter's (internal/sse),
// which holds at most maxValidatedBody bytes of one event.
type eventChecker struct {
	r     io.ReadCloser
	v     *validatingTransport
	req   *http.Request
	where string

	mu       sync.Mutex
	events   *sse.Decoder
	terminal string // the final event, once seen
	reported bool
}

func newEventChecker(r io.ReadCloser, v *validatingTransport, req *http.Request) *eventChecker {
	return &eventChecker{r: r, v: v, req: req, where: req.Method + " " + req.URL.Path,
		events: sse.NewDecoder(sse.Options{MaxEventBytes: maxValidatedBody, Canonical: true})}
}

func (c *eventChecker) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.feed(p[:n])
	if errors.Is(err, io.EOF) {
		if err := c.events.End(); err != nil {
			c.failStream(err)
		}
		if c.terminal == "" {
			c.fail("the event stream ended without a result or error event")
		}
	}
	return n, err
}

func (c *eventChecker) Close() error { return c.r.Close() }

// feed parses b, checking each event it completes; c.mu is held. Once
// the stream has failed, the rest is not parsed.
func (c *eventChecker) feed(b []byte) {
	for len(b) > 0 && !c.reported {
		n, ev, err := c.events.Decode(b)
		b = b[n:]
		if err != nil {
			c.failStream(err)
			return
		}
		if ev != nil {
			c.dispatch(*ev)
		}
	}
}

// failStream reports what the reader found wrong with the stream; c.mu
// is held.
func (c *eventChecker) failStream(err error) {
	var tooLarge *sse.TooLargeError
	var form *sse.FormatError
	switch {
	case errors.As(err, &tooLarge):
		c.fail(fmt.Sprintf("an event over %d bytes, not validated further", maxValidatedBody))
	case errors.As(err, &form):
		what := fmt.Sprintf("line %d: %s", form.Line, form.Reason)
		if form.Text != "" {
			what += fmt.Sprintf(": %q", clipBody([]byte(form.Text)))
		}
		c.fail(what)
	default:
		c.fail(err.Error())
	}
}

// dispatch checks one complete event; c.mu is held.
func (c *eventChecker) dispatch(ev sse.Event) {
	name, ok := eventSchemas[ev.Type]
	switch {
	case !ok:
		c.fail(fmt.Sprintf("an event named %q", ev.Type))
		return
	case c.terminal != "":
		c.fail(fmt.Sprintf("a %s event after the %s event", ev.Type, c.terminal))
		return
	}
	var v any
	if err := json.Unmarshal(ev.Data, &v); err != nil {
		c.fail(fmt.Sprintf("%s event data is not JSON: %s", ev.Type, clipBody(ev.Data)))
		return
	}
	if err := c.v.doc.Components.Schemas[name].Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		c.fail(fmt.Sprintf("%s event data does not match %s: %s", ev.Type, name, violationText(err)))
		return
	}
	if ev.Type == contract.EventResult || ev.Type == contract.EventError {
		c.terminal = ev.Type
	}
}

// fail reports the stream's first problem; c.mu is held.
func (c *eventChecker) fail(what string) {
	if !c.reported {
		c.reported = true
		c.v.violation(c.req, fmt.Sprintf("%s -> 200 (events): %s", c.where, what))
	}
}
