package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/codeport/codeport/contract"
)

// preallocBytes is the most of a body's announced size that is made room
// for before its bytes arrive.
const preallocBytes = 64 << 10

// CheckRequests returns next behind the check every message gets
// (CheckMessage), for the SDK's streamable HTTP handler: the body of a
// POST is read, up to maxBytes, and one that is not a message the server
// takes is answered 400 with the JSON-RPC error response, as the SDK
// answers what it cannot decode, but by the same rules as on stdio
// (a repeated key among them, which the SDK would let the last one win).
// A body over maxBytes is answered 413, and one that did not arrive before
// the server's read timeout 408, as contract v1's server answers them
// ({"detail", "code"}); either way no more of it is read.
//
// The body is held once whole (the SDK reads it whole too), so maxBytes
// bounds what each request can make the server hold; put the handler
// behind one that caps bodies before they are read (package server's
// Guard) for the same answer to a body that announces its size.
func CheckRequests(next http.Handler, maxBytes int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > maxBytes {
			refuseBody(w, http.StatusRequestEntityTooLarge, contract.CodeRequestTooLarge, fmt.Sprintf("request body is over the %d-byte limit", maxBytes))
			return
		}
		// Room is made as the bytes arrive: a size announced (up to
		// maxBytes) and not sent would otherwise have each connection hold
		// maxBytes for nothing. Only a small body gets its room at once.
		var buf bytes.Buffer
		if r.ContentLength > 0 {
			buf.Grow(int(min(r.ContentLength, preallocBytes)))
		}
		_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, maxBytes))
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			refuseBody(w, http.StatusRequestEntityTooLarge, contract.CodeRequestTooLarge, fmt.Sprintf("request body is over the %d-byte limit", tooLarge.Limit))
			return
		case errors.Is(err, os.ErrDeadlineExceeded):
			w.Header().Set("Connection", "close")
			refuseBody(w, http.StatusRequestTimeout, contract.CodeRequestTimeout, "the request body did not arrive within the server's read timeout")
			return
		case err != nil:
			refuseBody(w, http.StatusBadRequest, "invalid_request", "the request body could not be read")
			return
		}
		// An empty body is the SDK's to refuse, as it does.
		if buf.Len() > 0 {
			if rf := CheckMessage(buf.Bytes()); rf != nil {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write(rf.Response())
				return
			}
		}
		r.Body = io.NopCloser(&buf)
		r.ContentLength = int64(buf.Len())
		next.ServeHTTP(w, r)
	})
}

// refuseBody answers a body that could not be read whole as contract v1's
// server answers one ({"detail", "code"}), as package server's Guard
// answers a body that announces too large a size.
func refuseBody(w http.ResponseWriter, status int, code, detail string) {
	b, _ := json.Marshal(contract.Error{Detail: detail, Code: code})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
