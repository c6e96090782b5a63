// Package mcpserver serves a port.CodeExecutionPort as a Model Context
// Protocol server, built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk). `codeport mcp` runs it over
// stdio or streamable HTTP; a gateway can serve it over any SDK transport.
//
// New returns an *mcp.Server with these tools:
//
//   - run_python {code, session_id?, timeout_seconds?}: runs a cell. Its
//     description is the capability description's purpose hint. With a
//     session_id the cell runs in that session, whose variables, imports
//     and files persist between calls; without one it runs in a fresh
//     session made for the call and destroyed after it.
//   - create_session {idle_timeout_seconds?, max_lifetime_seconds?} gives a
//     session_id; destroy_session {session_id} ends it.
//   - bash {command, session_id?} and text_editor {command, path, ...,
//     session_id?}, only when the port offers those tools (Capabilities.Tools).
//
// A call's result holds the text a model reads (stdout, stderr, the return
// code, the files produced and a note when the program did not complete,
// worded as gateway/responses words them) and the same as structured
// content: {stdout, stderr, return_code, outcome, state_lost,
// output_truncated, files}. A program that raises, times out or runs out of
// memory is a result like any other, as in the contract; isError is set
// only when the call could not run (bad input, an unknown or busy session,
// no capacity), with a message saying what to do.
//
// Each file a call produced is the resource
// codeport://sessions/{session_id}/outputs/{file_id}, readable with
// resources/read (as text for text/* and JSON media types, as a blob
// otherwise) while its session lives. Files of up to 1 MiB, 4 MiB a call,
// are also embedded in the result; a larger one is linked (or, for a call
// without a session, named in the text as too large).
//
// While a call runs, its output goes to the client as it is written: as
// progress notifications (message: the text) when the request carries a
// progress token, and as log messages (logger "stdout" or "stderr", level
// info or warning) when the client asked for logs.
//
// Serving the in-process adapter over stdio:
//
//	p, err := wasm.New(wasm.NewConfig())
//	if err != nil {
//		return err
//	}
//	defer p.Close()
//	caps, err := p.Describe(ctx) // binding.Bound's Describe adds the purpose hint
//	if err != nil {
//		return err
//	}
//	srv := mcpserver.New(p, caps, mcpserver.WithVersion("1.0.0"))
//	return srv.Run(ctx, &mcpserver.IOTransport{Reader: os.Stdin, Writer: os.Stdout})
//
// Hostile clients: CheckMessage holds each message to JSON-RPC 2.0 and to
// contract v1's rule on repeated keys. IOTransport is the SDK's stdio
// transport but for that: a malformed line is answered with a JSON-RPC
// error and the next one read, where the SDK's would end the connection
// and every session made over it. CheckRequests puts the same check, and
// a cap on the body, before the SDK's streamable HTTP handler.
// Authentication and tenants are the listener's (package server's Guard,
// whose Port keeps each tenant to its own sessions).
//
// Nothing this package logs holds code, program output or file contents.
package mcpserver
