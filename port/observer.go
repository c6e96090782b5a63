package port

import (
	"context"
	"log/slog"
	"time"
)

// Op names an operation of the port, in logs and observations.
type Op string

// The operations.
const (
	OpCreateSession   Op = "create_session"
	OpExecute         Op = "execute"
	OpDestroySession  Op = "destroy_session"
	OpListFiles       Op = "list_files"
	OpGetFile         Op = "get_file"
	OpPutFile         Op = "put_file"
	OpGetOutputFile   Op = "get_output_file"
	OpDescribe        Op = "describe"
	OpSnapshotSession Op = "snapshot_session"
	OpRestoreSession  Op = "restore_session"
	OpListSessions    Op = "list_sessions"
)

// Call is one call a Port served, as an Observer sees it. It carries no
// code, output or file contents, and no path: only what may be logged.
type Call struct {
	Op Op
	// Adapter names the adapter serving the call (DriverInfo.Name).
	Adapter string
	// SessionID is the session called (for CreateSession, the one made).
	SessionID string
	// Tool and Timeout are an Execute's tool kind and resolved timeout.
	Tool    ToolKind
	Timeout time.Duration
	Started time.Time

	// Set when the call has ended:

	Duration time.Duration
	// Err is the call's error: it could not run. ErrorCode(Err) names it.
	Err error
	// Outcome, ReturnCode, StateLost and OutputTruncated are an Execute's
	// result.
	Outcome         Outcome
	ReturnCode      int
	StateLost       bool
	OutputTruncated bool
	// Bytes is the size of the file of a GetFile, GetOutputFile or
	// PutFile.
	Bytes int64
	// OutputBytes is the size of an Execute's stdout and stderr together,
	// as returned (after truncation).
	OutputBytes int64
}

// Observer watches every call a Port serves: the hook for metrics,
// tracing and per-tenant accounting, written once for every adapter.
type Observer interface {
	// StartCall is called before the call reaches the driver. The context
	// it returns is the one the driver sees (to carry a trace span, say);
	// return ctx when there is nothing to add.
	StartCall(ctx context.Context, c *Call) context.Context
	// EndCall is called once the call has returned, with the context
	// StartCall returned and c completed.
	EndCall(ctx context.Context, c *Call)
}

// logObserver is the Port's own log: one record per call.
type logObserver struct {
	log     *slog.Logger
	adapter string
}

func (o logObserver) StartCall(ctx context.Context, _ *Call) context.Context { return ctx }

func (o logObserver) EndCall(ctx context.Context, c *Call) {
	attrs := make([]slog.Attr, 0, 9)
	attrs = append(attrs, slog.String("op", string(c.Op)), slog.String("adapter", o.adapter))
	if c.SessionID != "" {
		attrs = append(attrs, slog.String("session", c.SessionID))
	}
	if c.Tool != "" {
		attrs = append(attrs, slog.String("tool", string(c.Tool)))
	}
	attrs = append(attrs, slog.Int64("duration_ms", c.Duration.Milliseconds()))
	level := slog.LevelDebug
	switch {
	case c.Err != nil:
		code := ErrorCode(c.Err)
		attrs = append(attrs, slog.String("error_code", code))
		if code == "" || code == "runtime_failure" || code == "backend_unreachable" {
			// A failure of the backend, not a refusal: its message (which
			// never holds user data) is what an operator needs.
			attrs = append(attrs, slog.String("error", c.Err.Error()))
			level = slog.LevelWarn
		}
	case c.Op == OpExecute:
		attrs = append(attrs, slog.String("outcome", string(c.Outcome)), slog.Int("return_code", c.ReturnCode),
			slog.Bool("state_lost", c.StateLost), slog.Bool("output_truncated", c.OutputTruncated))
		level = slog.LevelInfo
	case c.Op == OpCreateSession, c.Op == OpDestroySession:
		level = slog.LevelInfo
	}
	o.log.LogAttrs(context.WithoutCancel(ctx), level, "call", attrs...)
}
