package port

import (
	"context"
	"log/slog"
)

// Driver is what an adapter implements. Consumers never hold one: New
// wraps it in a *Port, as database/sql wraps a driver.Conn in a *sql.DB,
// and every adapter's constructor returns that *Port. The Port does once,
// for every adapter, what each would otherwise repeat, so a driver may
// rely on it:
//
//   - requests are validated against Info before they reach the driver:
//     the tool kind is known (or Info.ForwardsUnknownTools), its required
//     input is there and within Info.Limits, lifetime hints and timeouts
//     are not negative;
//   - ExecuteRequest.Timeout is resolved by Info.Limits.Timeout; a
//     result's Tool and ToolUseID are filled in when the driver leaves them
//     empty (a tool use id is minted when the request brought none);
//   - session ids are non-empty, at most MaxIDBytes and not "." or "..";
//     a path of GetFile and PutFile is non-empty, and every path is at most
//     MaxPathBytes with no NUL byte;
//   - every call's context ends when the Port is closed, no call starts
//     after Close began, and Driver.Close is called once, after every call
//     in flight has returned;
//   - calls are logged and observed (Observer) by the Port: a driver logs
//     only what is its own (a worker process lost, a runtime compiled).
//
// A driver returns the sentinel errors of this package (wrapped with
// context) and never puts user code, program output or file contents in
// an error's text.
type Driver interface {
	// Info is what the Port needs to know of the driver before any call.
	// It is read once, by New.
	Info() DriverInfo

	// The operations, with CodeExecutionPort's meaning, called only as
	// above. Close releases everything the driver holds; it is called
	// once.
	CodeExecutionPort
}

// DriverInfo is a driver's static description: what the Port checks
// requests against.
type DriverInfo struct {
	// Name names the adapter in logs ("wasm", "http", "subprocess").
	Name string
	// Logger is the driver's logger: the Port logs its calls there unless
	// WithLogger names another. Nil logs nothing.
	Logger *slog.Logger
	// Limits are enforced by the Port where they are set (zero fields are
	// not checked): SourceBytes bounds code and commands, FileBytes the
	// editor's file_text, and DefaultTimeout and MaxTimeout resolve a
	// call's timeout.
	Limits Limits
	// Tools are the tool kinds the driver runs; nil means every kind of
	// contract v1.
	Tools []ToolKind
	// ForwardsUnknownTools lets a tool kind contract v1 does not know
	// through to the driver unchecked, for a remote backend that may offer
	// more.
	ForwardsUnknownTools bool
	// StreamsOutput says that the driver calls ExecuteRequest.OnOutput as
	// the output is written. What it delivers so must be a prefix of the
	// Result's streams: the Port delivers the rest when the call returns
	// (the notes a driver appends at the end), serializes the calls and
	// drops any after the return. Without it, the Port gives the driver no
	// OnOutput and delivers each stream in one chunk at the end.
	StreamsOutput bool
}

// Readier is implemented by a driver that needs time before it can start
// sessions without waiting (compiling a runtime, starting processes).
type Readier interface {
	// Ready reports whether a session would start now without waiting.
	Ready() bool
	// WaitReady waits until it would, or reports why it never will.
	WaitReady(ctx context.Context) error
}

// Bounds of what the Port passes to a driver.
const (
	// MaxIDBytes bounds a session id: a longer one names no session.
	MaxIDBytes = 256
	// MaxPathBytes bounds a workspace path (Linux's PATH_MAX).
	MaxPathBytes = 4096
)
