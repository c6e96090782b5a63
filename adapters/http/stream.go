package httpadapter

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/codeport/codeport/contract"
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
// Everything is bounded by the response cap: the output events together,
// each line, and the result.
func (a *adapter) execStream(ctx context.Context, c *call, body []byte, out func(port.Stream, []byte)) (int, []byte, error) {
	callCtx, cancel := context.WithTimeoutCause(ctx, c.wall, errWallClock)
	defer cancel()
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
	defer a.finish(resp)
	limit := a.cfg.MaxResponseBytes
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	var event string
	var data []byte
	var streamed int64
	for {
		line, err := readLine(r, limit)
		if err != nil {
			if errors.Is(err, errLineTooLong) {
				return resp.StatusCode, nil, violation(c, resp.StatusCode, fmt.Sprintf("an event line over the %d-byte cap", limit))
			}
			if errors.Is(err, io.EOF) {
				return resp.StatusCode, nil, violation(c, resp.StatusCode, "the event stream ended without a result event")
			}
			return resp.StatusCode, nil, transportError(ctx, callCtx, c, err)
		}
		switch {
		case len(line) == 0: // the end of an event
			switch event {
			case contract.EventStdout, contract.EventStderr:
				var o contract.OutputEvent
				if err := json.Unmarshal(data, &o); err != nil {
					return resp.StatusCode, nil, violation(c, resp.StatusCode, "a "+event+" event whose data is not an output event")
				}
				if streamed += int64(len(o.Text)); streamed > limit {
					return resp.StatusCode, nil, violation(c, resp.StatusCode, fmt.Sprintf("output events over the %d-byte cap", limit))
				}
				out(port.Stream(event), []byte(o.Text))
			case contract.EventResult:
				return resp.StatusCode, data, nil
			case contract.EventError:
				return resp.StatusCode, nil, eventError(c, data)
			}
			event, data = "", nil
		case line[0] == ':': // a comment
		case bytes.HasPrefix(line, []byte("event:")):
			event = string(bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("event:")), []byte(" ")))
		case bytes.HasPrefix(line, []byte("data:")):
			d := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			if data != nil {
				data = append(append(data, '\n'), d...) // SSE joins data lines
			} else {
				data = append([]byte{}, d...)
			}
			if int64(len(data)) > limit {
				return resp.StatusCode, nil, violation(c, resp.StatusCode, fmt.Sprintf("an event over the %d-byte cap", limit))
			}
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line of the stream without its end (LF, CRLF or CR
// before LF), refusing one over limit bytes.
func readLine(r *bufio.Reader, limit int64) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if int64(len(line)) > limit+2 {
			return nil, errLineTooLong
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return nil, err
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		return bytes.TrimSuffix(line, []byte("\r")), nil
	}
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
