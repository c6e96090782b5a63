package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/codeport/codeport/contract"
)

// A request body must arrive at the minimum body rate (WithMinBodyRate):
// the server's read timeout alone let a client that sends a byte a second
// hold its connection, its handler and whatever the handler holds for the
// body (a restore's temporary file, a slot of the restores at once) for
// the whole timeout. The rate is averaged over the window: a body may
// pause for up to the window, and what it sent faster than the rate
// earns it no more than the window of credit. In terms of deadlines:
// the body starts with the window to send its first bytes; every n bytes
// read move the deadline n/rate later, to no more than the window from
// now; a read still waiting at the deadline fails, and the request is
// answered 408 (code request_timeout) and its connection closed, as at
// the read timeout.
//
// The deadline is the connection's read deadline, set before each read
// of the body, in the goroutine that reads it, and never later than the
// server's own read timeout (http.Server.ReadTimeout, counted from the
// handler's start, so at most the time the headers took beyond it). It is
// set no more once the body has ended: net/http then lifts the deadline to
// watch for the client going away during the execution, which this must
// not cut.

// rateBody enforces the minimum rate on a request body.
type rateBody struct {
	body io.ReadCloser
	rc   *http.ResponseController
	rate float64 // bytes per second
	// window is the longest pause, and the most credit a body can earn.
	window time.Duration
	// deadline is when the next byte must have arrived.
	deadline time.Time
	// hard is the server's read deadline, zero when it has none.
	hard time.Time
	// done: the body ended or failed, or deadlines cannot be set; reads
	// pass through.
	done bool
}

// limitBodyRate returns r with the minimum rate on its body, if it has
// one and the handler's rate is set. It is a shallow copy: the server's
// own request keeps its body, whose type net/http looks at once the
// handler has returned (to drain what is left of it, or close the
// connection gracefully when too much is).
func (s *server) limitBodyRate(w http.ResponseWriter, r *http.Request) *http.Request {
	if s.cfg.minBodyRate <= 0 || r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return r
	}
	now := time.Now()
	b := &rateBody{body: r.Body, rc: http.NewResponseController(w), rate: float64(s.cfg.minBodyRate),
		window: s.cfg.minBodyWindow, deadline: now.Add(s.cfg.minBodyWindow)}
	if srv, ok := r.Context().Value(http.ServerContextKey).(*http.Server); ok && srv.ReadTimeout > 0 {
		b.hard = now.Add(srv.ReadTimeout)
	}
	// Set now, not only at the first read: a handler that answers
	// without reading the body leaves net/http to drain it, which then
	// waits no longer than the window either.
	if err := b.rc.SetReadDeadline(b.next()); err != nil {
		return r // no deadlines here (a test's recorder)
	}
	r = r.WithContext(r.Context())
	r.Body = b
	return r
}

// next is the read deadline in force: the rate's, or the server's read
// timeout if that comes first.
func (b *rateBody) next() time.Time {
	if !b.hard.IsZero() && b.hard.Before(b.deadline) {
		return b.hard
	}
	return b.deadline
}

func (b *rateBody) Read(p []byte) (int, error) {
	if b.done {
		return b.body.Read(p)
	}
	dl := b.next()
	own := dl.Equal(b.deadline)
	if err := b.rc.SetReadDeadline(dl); err != nil {
		// A writer without deadlines (a test's recorder): the server's
		// own timeouts are all there is.
		b.done = true
		return b.body.Read(p)
	}
	n, err := b.body.Read(p)
	if n > 0 {
		now := time.Now()
		credit := time.Duration(float64(n) / b.rate * float64(time.Second))
		b.deadline = b.deadline.Add(credit)
		if limit := now.Add(b.window); b.deadline.After(limit) {
			b.deadline = limit
		}
	}
	if err != nil {
		b.done = true
		if own && isTimeout(err) {
			return n, &slowBodyError{err: err, rate: int64(b.rate), window: b.window}
		}
	}
	return n, err
}

func (b *rateBody) Close() error { return b.body.Close() }

// slowBodyError is the read error of a body cut off for arriving slower
// than the minimum rate. It is a timeout (os.ErrDeadlineExceeded), and
// answered 408 as one.
type slowBodyError struct {
	err    error
	rate   int64
	window time.Duration
}

func (e *slowBodyError) Error() string {
	return fmt.Sprintf("request body arrived slower than %d bytes per second over %s: %v", e.rate, e.window, e.err)
}

func (e *slowBodyError) Unwrap() error { return e.err }

// timeoutAnswer is the refusal of a body read that failed at a read
// deadline (isTimeout): the minimum rate's, or the read timeout's.
func timeoutAnswer(err error) error {
	var slow *slowBodyError
	if errors.As(err, &slow) {
		return refuse(contract.CodeRequestTimeout, fmt.Sprintf("the request body arrived slower than the server's minimum rate of %d bytes per second (averaged over %s)", slow.rate, slow.window))
	}
	return errReadTimeout
}

// isTimeout reports whether a read of the request body failed at the
// connection's read deadline: the read timeout's or the minimum rate's.
func isTimeout(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded)
}
