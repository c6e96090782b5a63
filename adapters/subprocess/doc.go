// Package subprocess is the CodeExecutionPort with process isolation: each
// session lives in a worker process (the codeport binary's hidden `worker`
// command, hosting the wasm adapter), started and spoken to through
// hashicorp/go-plugin over gRPC. The gateway's own process never runs user
// code, so a crash, a runaway allocation or a hang in the runtime costs one
// worker, not the gateway.
//
// As with the wasm adapter, a Config is built with With methods, the one
// way to set its settings: WithWasm sets the runtime's from a wasm.Config,
// WithSettings every setting at once from a Settings (as package binding
// does).
//
//	a, err := subprocess.New(subprocess.NewConfig().
//		WithWorkerCommand("/usr/local/bin/codeport", "worker").
//		WithWasm(wasm.NewConfig().WithMemoryLimit(256 << 20)).
//		WithWorkers(2, 16))
//	if err != nil {
//		return err
//	}
//	defer a.Close() // stops every worker; none is left behind
//	s, err := a.CreateSession(ctx, port.CreateSessionRequest{})
//	...
//	res, err := a.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(1)"})
//	if res.Outcome == port.OutcomeSessionLost {
//		// the worker died during the call; the session is gone
//	}
//
// # Workers
//
// A pool keeps a minimum of idle workers started, each with an interpreter
// booted and the common modules imported, and starts more on demand up to
// a maximum; past it CreateSession is refused with a *port.CapacityError.
// By default a worker hosts one session and is retired with it
// (WithSessionsPerWorker, WithRecycleAfter), so nothing one session's
// program leaves in a process can reach another session. Workers shared
// by several sessions cost far less (a process's compiled code and Go
// runtime are most of its memory, and starting one most of a cold
// session's wait); WithTenantWorkers shares them among one tenant's
// sessions only (port.TenantOf, which the server sets from the
// credential), so that tenants still never share a process.
//
// # Containment
//
// Beyond what the wasm adapter enforces inside a worker (memory, output,
// time), each worker runs:
//   - under an RLIMIT_DATA (and an RLIMIT_AS with room for what the Go
//     runtime reserves) it sets on itself before starting the runtime,
//     and in a cgroup v2 group with memory.max where the host delegates a
//     writable memory controller (detected when the adapter starts; the
//     reason it is off is logged);
//   - with an empty environment (only its configuration and go-plugin's
//     handshake variables), stdin on /dev/null, its own process group, and
//     a parent-death signal so that it dies with the gateway;
//   - under a watchdog: if a call has not returned a grace period after its
//     deadline (or after its caller gave up), the worker is killed with
//     SIGKILL. A session's first bash call also has the start timeout,
//     for its shell's start, which comes before the command's timeout.
//
// No session spends its worker's data limit: its memory does not grow
// within a reserve of it (the program gets a MemoryError, the
// memory_limit outcome, as at its own limit), so that the Go runtime,
// whose allocations die at the limit, keeps room.
//
// A worker that crashes, is killed, runs out of memory or is killed by the
// watchdog during a call makes that call return a port.Result with the
// session_lost outcome (return code 124 for the watchdog, 137 for memory,
// 128+n for signal n); its session is gone (port.ErrSessionNotFound
// afterwards), the worker is replaced, and other sessions are untouched.
// Workers' stderr (their log records and any runtime crash report, never
// program output, which the wasm adapter captures in memory) is passed to
// the configured logger.
//
// # Snapshots
//
// The adapter is a port.Snapshotter: with port.WithSnapshotKey, the
// session's worker writes the snapshot of its interpreter and workspace
// (the wasm adapter's own format), the parent's Port seals it, and a
// restore is streamed to whichever worker would take a new session, so a
// snapshot made in one worker, or by the in-process adapter of the same
// build, restores in any other. Hibernation is not offered.
//
// # The worker protocol
//
// One gRPC service whose messages are protobuf BytesValues holding JSON,
// so that no generated code is needed; file contents travel as raw chunks
// and are never held whole in memory. A cancelled call is cancelled in the
// worker, whose result (partial output included) is still awaited.
//
// Every call carries the W3C trace context of its context (traceparent,
// tracestate) in its gRPC metadata, and the worker's port sees it, so a
// worker that traces continues the parent's trace. The codeport binary's
// worker traces when its parent hands it OTEL_* variables
// (WithWorkerTraceEnv; `codeport serve` passes its own when it exports
// over OTLP):
//
//	cfg := subprocess.NewConfig().WithWorkerTraceEnv([]string{
//		"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318"})
package subprocess
