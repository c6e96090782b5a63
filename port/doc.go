// Package port defines CodeExecutionPort, the one interface through which a
// gateway runs model-written code, whatever backend answers: CPython in
// process (adapters/wasm), a remote contract v1 sandbox (adapters/http) or
// worker processes (adapters/subprocess).
//
// The package holds the contract (operations, value types, typed outcomes
// and typed errors) and the portable layer every adapter is wrapped in
// (Port, below), which also seals and checks snapshots (SnapshotSession,
// RestoreSession) and names the node a session lives on (WithNodeID). It
// knows no transport and has no dependencies, so gateway code and
// adapters can both import it without pulling in a runtime; the HTTP
// routes are package server's.
//
// A gateway uses it like this:
//
//	sess, err := p.CreateSession(ctx, port.CreateSessionRequest{})
//	if err != nil {
//		return err // errors.Is(err, port.ErrAtCapacity) and friends
//	}
//	defer p.DestroySession(context.WithoutCancel(ctx), sess.ID)
//	res, err := p.Execute(ctx, sess.ID, port.ExecuteRequest{
//		Tool: port.ToolCodeExecution,
//		Code: "print(6 * 7)",
//	})
//	if err != nil {
//		return err // the call could not run at all
//	}
//	fmt.Print(res.Stdout) // "42\n"; res.Outcome says how the program ended
//
// A failed program is not an error: Execute returns a Result whose Outcome is
// OutcomeProgramError (or TimedOut, MemoryLimit, ...). Errors are reserved for
// calls that could not run, and are tested with errors.Is against the
// sentinels in this package (ErrSessionNotFound, ErrSessionBusy, ...), or with
// errors.As against *CapacityError for the retry-after hint. Each sentinel has
// a stable code (ErrorCode, ErrorFromCode) that carries it across a network or
// a process boundary.
//
// Adapters do not implement CodeExecutionPort themselves: they implement the
// smaller Driver, and New wraps it in a *Port, as database/sql wraps its
// drivers. The Port does what every adapter needs once: it validates
// requests, mints tool use ids, resolves timeouts, refuses calls after Close
// with ErrClosed, cancels and awaits the calls in flight before the driver
// closes, logs every call and hands it to Observers (metrics, tracing,
// per-tenant accounting). Optional interfaces (Readier) say what only some
// drivers can do.
package port
