package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/codeport/codeport/contract"
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
// sends it, or live output could not be checked): every event is a known
// one whose data matches its schema, output events come before one final
// result or error event, and nothing follows it. A stream the adapter
// closes before its end is not judged on its end.
type eventChecker struct {
	r     io.ReadCloser
	v     *validatingTransport
	req   *http.Request
	where string

	mu       sync.Mutex
	pending  []byte // an incomplete line
	event    string
	data     []byte
	terminal string // the final event, once seen
	reported bool
	size     int
}

func (c *eventChecker) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.feed(p[:n])
	if errors.Is(err, io.EOF) && c.terminal == "" {
		c.fail("the event stream ended without a result or error event")
	}
	return n, err
}

func (c *eventChecker) Close() error { return c.r.Close() }

// feed parses the lines in b; c.mu is held.
func (c *eventChecker) feed(b []byte) {
	if c.size += len(b); c.size > maxValidatedBody {
		c.fail(fmt.Sprintf("an event stream over %d bytes, not validated further", maxValidatedBody))
		return
	}
	c.pending = append(c.pending, b...)
	for {
		i := bytes.IndexByte(c.pending, '\n')
		if i < 0 {
			return
		}
		line := bytes.TrimSuffix(c.pending[:i], []byte("\r"))
		c.pending = c.pending[i+1:]
		switch {
		case len(line) == 0:
			if c.event != "" || c.data != nil {
				c.dispatch()
			}
			c.event, c.data = "", nil
		case line[0] == ':':
		case bytes.HasPrefix(line, []byte("event: ")):
			c.event = string(line[len("event: "):])
		case bytes.HasPrefix(line, []byte("data: ")):
			if c.data != nil {
				c.fail("an event with more than one data line")
			}
			c.data = append([]byte{}, line[len("data: "):]...)
		default:
			c.fail(fmt.Sprintf("a line that is not an event, data or comment line: %q", clipBody(line)))
		}
	}
}

// dispatch checks one complete event; c.mu is held.
func (c *eventChecker) dispatch() {
	name, ok := eventSchemas[c.event]
	switch {
	case !ok:
		c.fail(fmt.Sprintf("an event named %q", c.event))
		return
	case c.terminal != "":
		c.fail(fmt.Sprintf("a %s event after the %s event", c.event, c.terminal))
		return
	}
	var v any
	if err := json.Unmarshal(c.data, &v); err != nil {
		c.fail(fmt.Sprintf("%s event data is not JSON: %s", c.event, clipBody(c.data)))
		return
	}
	if err := c.v.doc.Components.Schemas[name].Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		c.fail(fmt.Sprintf("%s event data does not match %s: %s", c.event, name, violationText(err)))
		return
	}
	if c.event == contract.EventResult || c.event == contract.EventError {
		c.terminal = c.event
	}
}

// fail reports the stream's first problem; c.mu is held.
func (c *eventChecker) fail(what string) {
	if !c.reported {
		c.reported = true
		c.v.violation(c.req, fmt.Sprintf("%s -> 200 (events): %s", c.where, what))
	}
}
