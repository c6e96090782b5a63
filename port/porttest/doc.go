// Package porttest is an in-memory fake of a code-execution backend, for
// the unit tests of gateway code written against port.CodeExecutionPort. It
// needs no interpreter, no files on disk and no network, starts in
// microseconds, and passes the conformance suite (package conformance) like
// the real adapters, so that what a gateway's tests see of it holds in
// production.
//
// It is a port.Driver served through port.New, the layer every adapter is
// served through, so requests are validated, tool use ids minted, timeouts
// resolved and closing handled exactly as in production. Behind that layer
// its semantics are real rather than canned: sessions with ids, a session
// limit (*port.CapacityError), one call at a time per session
// (port.ErrSessionBusy), lifetime hints clamped and idle or expired
// sessions reclaimed, an in-memory workspace per session with the real
// adapters' path rules and limits, and the real text editor (the same code
// as the wasm adapter's, with the same outputs).
//
// No Python runs. code_execution and bash_code_execution are offered only
// when the test supplies an Executor (WithExecutor) to play the program; it
// sees the session's files, and its result goes back through the port as a
// backend's would, timeouts and output limits included. Without one those
// kinds are not listed by Describe and are refused with
// port.ErrUnsupportedTool, as on a backend that lacks them.
//
// A gateway's test uses it like this:
//
//	p := porttest.New(
//		porttest.WithMaxSessions(2),
//		porttest.WithExecutor(func(ctx context.Context, s porttest.Session, req port.ExecuteRequest) (port.Result, error) {
//			if req.Code == "print(6 * 7)" {
//				return port.Result{Stdout: "42\n"}, nil
//			}
//			return port.Result{Stderr: "NameError: name 'x' is not defined\n", ReturnCode: 1}, nil
//		}),
//	)
//	defer p.Close()
//	gw := mygateway.New(p) // the code under test, which sees a port.CodeExecutionPort
//
// Its Driver has hooks for what a test cannot provoke through the port:
// Stall makes a session's next call last until the test releases it (a
// busy session, a slow backend, a cancellation), Sessions lists the live
// sessions (did the gateway destroy what it made?), and WithClock lets a
// test move time to see sessions reclaimed.
package porttest
