package contract

import "github.com/codeport/codeport/port"

// The codes of an error body's "code" member that are not the port's: the
// HTTP server's own refusals, which no port call made. The port's codes
// (port.ErrorCodes: "session_not_found", "at_capacity", ...) name the
// sentinel error behind a refusal; these name what the server refused
// before or without asking the port.
//
// Codes are stable: a code is never renamed or given another meaning, so a
// client may branch on one without reading the detail; new codes may be
// added, and a client must treat a code it does not know as absent.
const (
	// CodeRequestTooLarge: a JSON request body over the server's cap.
	// An upload over the upload cap is "file_too_large" instead.
	CodeRequestTooLarge = "request_too_large"
	// CodeUnsupportedMediaType: a body of a media type the route does not
	// take: an upload that is not multipart/form-data, or a JSON route's
	// body that is not application/json. Requiring JSON's own type makes
	// every JSON call a request a browser will not send across origins
	// without asking first (a CORS preflight, which the server does not
	// grant).
	CodeUnsupportedMediaType = "unsupported_media_type"
	// CodeRouteNotFound: no route serves the path (or the route is turned
	// off, as /metrics without a gatherer).
	CodeRouteNotFound = "route_not_found"
	// CodeMethodNotAllowed: the route does not serve the method.
	CodeMethodNotAllowed = "method_not_allowed"
	// CodeNotReady: the backend is not ready yet (GET /healthz).
	CodeNotReady = "not_ready"
	// CodeInternalError: an error that names none of the port's sentinels.
	CodeInternalError = "internal_error"
	// CodeRequestTimeout: the request body did not arrive within the
	// server's read timeout, so a client that stalls cannot hold a
	// connection and its handler indefinitely.
	CodeRequestTimeout = "request_timeout"
	// CodeHostNotAllowed: the Host header names a host the server does not
	// answer to, or a browser sent the request from another origin. An
	// unauthenticated server on loopback answers only to loopback names, so
	// that a web page cannot reach it through DNS rebinding.
	CodeHostNotAllowed = "host_not_allowed"
)

// serverCodes are the codes above, in a fixed order.
var serverCodes = []string{
	CodeRequestTooLarge,
	CodeUnsupportedMediaType,
	CodeRouteNotFound,
	CodeMethodNotAllowed,
	CodeNotReady,
	CodeInternalError,
	CodeRequestTimeout,
	CodeHostNotAllowed,
}

// ErrorCodes lists every code an error body may carry: the port's, then
// the server's own, each once. openapi.yaml enumerates the same list.
func ErrorCodes() []string {
	return append(port.ErrorCodes(), serverCodes...)
}
