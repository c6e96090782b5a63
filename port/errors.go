package port

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors. Adapters wrap them with context (fmt.Errorf("...: %w",
// ErrX)); callers test with errors.Is. Messages never carry user code,
// program output or file contents.
var (
	// ErrSessionNotFound: no live session has that id (never created,
	// destroyed, reclaimed, or lost with its worker).
	ErrSessionNotFound = errors.New("session not found")
	// ErrSessionBusy: the session is running another call.
	ErrSessionBusy = errors.New("session busy")
	// ErrAtCapacity: the backend cannot take another session or call now.
	// The error is a *CapacityError carrying a retry-after hint.
	ErrAtCapacity = errors.New("at capacity")
	// ErrRateLimited: the caller is over a limit of its own, not the
	// backend over its capacity: a server's per-tenant quota (sessions at
	// once, executions per second). The error is a *CapacityError with
	// RateLimited set, so it matches ErrAtCapacity too: code that backs
	// off when the backend is full backs off here as well, with the same
	// retry hint, and code that must tell the two apart asks for this one.
	ErrRateLimited = errors.New("rate limited")
	// ErrInvalidRequest: the request is malformed or misses a field its
	// tool kind requires.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrUnsupportedTool: the tool kind is unknown, or not offered by this
	// backend.
	ErrUnsupportedTool = errors.New("unsupported tool kind")
	// ErrPathEscapesWorkspace: a path leads outside the session workspace.
	ErrPathEscapesWorkspace = errors.New("path escapes workspace")
	// ErrFileTooLarge: a file is over the backend's size cap, or would put
	// the workspace over its quota.
	ErrFileTooLarge = errors.New("file too large")
	// ErrFileNotFound: no such file or directory in the workspace.
	ErrFileNotFound = errors.New("file not found")
	// ErrIsDirectory: a file operation named a directory (or a listing
	// named a file).
	ErrIsDirectory = errors.New("is a directory")
	// ErrRuntimeFailure: the backend itself failed; the call did not run
	// to an outcome.
	ErrRuntimeFailure = errors.New("runtime failure")
	// ErrUnauthorized: a remote backend refused the credential.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrBackendUnreachable: a remote backend could not be reached or gave
	// an answer that is not contract v1.
	ErrBackendUnreachable = errors.New("backend unreachable")
)

// CapacityError is the error of a refused admission. It matches
// ErrAtCapacity with errors.Is, and ErrRateLimited too when RateLimited is
// set.
type CapacityError struct {
	// What was refused, for the message ("sessions", "workers", ...).
	Resource string
	// Limit is the capacity in force, 0 when unknown.
	Limit int
	// RetryAfter is how long the caller should wait before trying again.
	RetryAfter time.Duration
	// Detail, when set, is the whole message: the text a remote backend
	// or a worker gave with the refusal.
	Detail string
	// RateLimited says that the limit is the caller's own share (its
	// tenant's quota), not the backend's capacity: the backend has room,
	// this caller must wait. Its code is then "rate_limited", which a
	// server answers 429 rather than 503.
	RateLimited bool
}

func (e *CapacityError) Error() string {
	if e.Detail != "" {
		return e.Detail
	}
	if e.RateLimited {
		return fmt.Sprintf("rate limited: at most %d %s; retry after %s", e.Limit, e.Resource, e.RetryAfter)
	}
	if e.Limit > 0 {
		return fmt.Sprintf("at capacity: %d %s in use; retry after %s", e.Limit, e.Resource, e.RetryAfter)
	}
	return fmt.Sprintf("at capacity: no %s free; retry after %s", e.Resource, e.RetryAfter)
}

// Is makes errors.Is(err, ErrAtCapacity) hold, and errors.Is(err,
// ErrRateLimited) for a rate limit.
func (e *CapacityError) Is(target error) bool {
	return target == ErrAtCapacity || e.RateLimited && target == ErrRateLimited
}
