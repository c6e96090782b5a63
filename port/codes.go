package port

import (
	"errors"
	"time"
)

// ErrClosed: the port (or the adapter behind it) was closed; no call runs
// after Close.
var ErrClosed = errors.New("closed")

// An error code is the stable, machine-readable name of a sentinel error.
// Codes cross process and network boundaries (the contract's error bodies,
// the worker protocol) so that errors.Is holds on the far side without
// anyone reading an error's text.
//
// The table is ordered: an error that wraps several sentinels (a runtime
// failure caused by a closed adapter, say) gets the code of the first one
// listed, whatever order it wraps them in.
var errorCodes = []struct {
	code string
	err  error
}{
	{"closed", ErrClosed},
	// Before at_capacity, which a rate limit also matches.
	{"rate_limited", ErrRateLimited},
	{"at_capacity", ErrAtCapacity},
	{"unauthorized", ErrUnauthorized},
	{"session_not_found", ErrSessionNotFound},
	{"session_busy", ErrSessionBusy},
	{"unsupported_tool", ErrUnsupportedTool},
	{"path_escapes_workspace", ErrPathEscapesWorkspace},
	{"file_too_large", ErrFileTooLarge},
	{"file_not_found", ErrFileNotFound},
	{"is_directory", ErrIsDirectory},
	{"invalid_snapshot", ErrInvalidSnapshot},
	{"unsupported", ErrUnsupported},
	{"invalid_request", ErrInvalidRequest},
	{"backend_unreachable", ErrBackendUnreachable},
	{"runtime_failure", ErrRuntimeFailure},
}

// ErrorCode is the code of the sentinel err wraps ("session_not_found",
// "at_capacity", ...), or "" when it wraps none of this package's.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	for _, c := range errorCodes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return ""
}

// ErrorCodes lists every code ErrorCode can return, in its order of
// precedence.
func ErrorCodes() []string {
	codes := make([]string, len(errorCodes))
	for i, c := range errorCodes {
		codes[i] = c.code
	}
	return codes
}

// CodedError is an error received from elsewhere (a remote backend, a
// worker process) whose code named one of this package's sentinels: its
// text is the remote's, and errors.Is matches the sentinel.
type CodedError struct {
	Code    string
	Message string
	// RetryAfter is the remote's retry hint, for at_capacity.
	RetryAfter time.Duration
	sentinel   error
}

func (e *CodedError) Error() string { return e.Message }

// Unwrap returns the sentinel the code names.
func (e *CodedError) Unwrap() error { return e.sentinel }

// ErrorFromCode rebuilds an error received with code and message. It
// reports false for an unknown code (a newer peer's, or none), so the
// caller can fall back on what else it knows (an HTTP status). The code
// "at_capacity" and "rate_limited" give a *CapacityError, so its retry hint
// survives.
func ErrorFromCode(code, message string, retryAfter time.Duration) (error, bool) {
	for _, c := range errorCodes {
		if c.code != code {
			continue
		}
		switch c.err {
		case ErrAtCapacity:
			return &CapacityError{RetryAfter: retryAfter, Detail: message}, true
		case ErrRateLimited:
			return &CapacityError{RetryAfter: retryAfter, Detail: message, RateLimited: true}, true
		}
		return &CodedError{Code: code, Message: message, RetryAfter: retryAfter, sentinel: c.err}, true
	}
	return nil, false
}
