// Package httpadapter is the CodeExecutionPort over a remote backend that
// speaks code-execution contract v1: the reference otari-sandbox-container,
// another `codeport serve`, or anything else that implements the contract.
//
// The package lives in adapters/http but is named httpadapter. A package
// named http would collide with net/http in every file that uses both, and
// code that configures this adapter nearly always does (WithHTTPClient takes
// an *http.Client). Since the last element of the import path differs from
// the package name, import it with the name spelled out, as below.
//
//	import httpadapter "github.com/codeport/codeport/adapters/http"
//
//	a, err := httpadapter.New(httpadapter.NewConfig("https://sandbox.internal:8080").
//		WithToken(os.Getenv("CODEPORT_TOKEN")).
//		WithTimeoutMargin(10 * time.Second))
//	if err != nil {
//		return err // a malformed base URL; New never contacts the server
//	}
//	defer a.Close()
//	s, err := a.CreateSession(ctx, port.CreateSessionRequest{})
//	if err != nil {
//		return err // errors.Is(err, port.ErrBackendUnreachable) and friends
//	}
//	defer a.DestroySession(context.WithoutCancel(ctx), s.ID)
//	res, err := a.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(2 ** 10)"})
//
// A Config is built with With methods, as above, each returning a modified
// copy: they are the one way to set its settings, since Config holds its
// Settings unexported. WithSettings sets them all at once from a Settings
// filled elsewhere (package binding fills one from flags, environment and
// YAML).
//
// # Wall clocks
//
// Every call has a client-side wall clock, as the contract asks of a
// client. Execute allows itself the timeout it grants the backend (the
// request's, or WithDefaultTimeout's when the request gives none) plus
// WithTimeoutMargin; other calls get WithRequestTimeout. File transfers
// measure that clock from the last progress, so a large file may take as
// long as it needs while a stalled one is given up. A call whose wall clock
// runs out fails with port.ErrBackendUnreachable.
//
// A call whose context the caller cancels (or whose deadline passes) fails
// with an error wrapping ctx.Err(), not with a Result whose Outcome is
// cancelled: the request was abandoned on the wire, and whether the remote
// program ran, finished or is still running is unknown.
//
// # Errors
//
// An error body's code decides, when it has one: `codeport serve` sends
// {"detail", "code"}, and the code names the port's sentinel
// (port.ErrorFromCode: "session_not_found" is port.ErrSessionNotFound,
// "at_capacity" a *port.CapacityError with the Retry-After header's hint,
// and so on) or one of the server's own refusals ("route_not_found" and
// "method_not_allowed" are port.ErrBackendUnreachable, since every route
// the adapter calls is contract v1's; "request_too_large" and
// "unsupported_media_type" port.ErrInvalidRequest; "internal_error"
// port.ErrRuntimeFailure). A remote "closed", the server shutting down, is
// a *port.CapacityError too: it is not this port closing. No detail is
// ever read to decide anything.
//
// Without a code the adapter knows (the reference backend sends none), the
// HTTP status decides: 401 port.ErrUnauthorized, 403
// port.ErrPathEscapesWorkspace, 404 port.ErrSessionNotFound (see below for
// file operations), 409 port.ErrSessionBusy, 413 port.ErrFileTooLarge, 503
// (and 429) a *port.CapacityError whose RetryAfter comes from the
// Retry-After header (seconds or an HTTP date; 1 s when absent or
// unreadable), 400 port.ErrUnsupportedTool for an Execute whose tool kind is
// not one of contract v1's (port.ErrIsDirectory for file operations, whose
// 400 the contract reserves for that; port.ErrInvalidRequest otherwise),
// 422 and other 4xx port.ErrInvalidRequest. A 5xx other than 503, a
// redirect, a transport failure and a 2xx body that is not contract v1
// (not JSON, or missing session_id, tool_use_id, result_block or files) are
// port.ErrBackendUnreachable.
//
// A 404 without a code from a file operation means an unknown session or a
// missing file, and the answer does not say which. The adapter then asks:
// it lists the session's workspace root (GET
// /sessions/{id}/files/list?path=.), which exists as long as the session
// does. A 404 there gives port.ErrSessionNotFound, a success
// port.ErrFileNotFound; when the probe fails otherwise, the missing file
// stands. (A backend with file routes but no listing would have every such
// 404 read as a lost session.) A 404 from CreateSession means the base URL
// does not lead to a contract v1 backend, and is
// port.ErrBackendUnreachable.
//
// Messages carry the method, path, HTTP status and the backend's detail
// when the detail is a string (or a FastAPI-style list of {loc, msg}),
// shortened to 200 bytes. They never carry user code, program output or
// file contents: request bodies are never echoed, response bodies are never
// quoted beyond that detail, and a detail that quotes the request's code,
// command or editor text is withheld.
//
// Parsing is lenient, as the contract asks: unknown fields are ignored, a
// null stdout or stderr reads as "", a null return_code as 0. A response
// without codeport's outcome field gets its Outcome from the return code
// (completed for 0, program_error otherwise).
//
// # Tracing
//
// Every request carries the W3C trace context of its call's context
// (traceparent, tracestate), so a backend that traces (`codeport serve`
// with OTEL_* set) continues the caller's trace. WithTracerProvider adds a
// client span per request, named by the contract's route; its attributes
// never include the query, which holds workspace paths.
//
//	a, err := httpadapter.New(httpadapter.NewConfig(url).WithTracerProvider(tp),
//		port.WithObserver(tracing.NewObserver(tp)))
//
// # Sessions and Close
//
// The adapter keeps no state about sessions: it forwards every call, and
// sessions belong to the remote backend and to the callers that created
// them. Close does not destroy remote sessions (destroy your own; the
// backend reclaims abandoned ones by its idle timeout); it closes idle
// connections, and every later call fails with port.ErrRuntimeFailure.
//
// No goroutine outlives a call. PutFile streams its reader into the request
// through a pipe fed by one goroutine that the call ends and awaits before
// returning, so PutFile returns only once a Read of the caller's reader in
// progress has returned.
package httpadapter
