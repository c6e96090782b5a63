package mcpserver

//lint:file-ignore SA1019 MCP deprecates logging from protocol 2026-07-28 on, but clients of the earlier versions use it, and the SDK serves both.

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codeport/codeport/port"
)

// logOutput sends output as a log message: logger "stdout" at level info,
// or "stderr" at warning. The session sends it only when the client asked
// for messages of that level (logging/setLevel, or the request's log level
// from protocol 2026-07-28 on).
func logOutput(ctx context.Context, session *mcp.ServerSession, stream port.Stream, text string) error {
	level := mcp.LoggingLevel("info")
	if stream == port.Stderr {
		level = "warning"
	}
	return session.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: string(stream), Data: text})
}
