// Package wasm is the in-process CodeExecutionPort: CPython 3.12 compiled
// to WASI, run by wazero inside the gateway's own process. No container, no
// service, no child process.
//
// The interpreter is compiled once per process (and cached on disk across
// restarts); every session gets a fresh instance with its own workspace
// directory, mounted as /workspace and used as the working directory, and a
// private /tmp. Nothing else of the host is visible: no other files, no
// environment, no network, no host callbacks.
//
// Inside each instance a small driver (driver.py) runs cells in a
// persistent __main__ namespace, so globals and imports survive between
// calls. Cells arrive and completions leave over a private control file,
// never over stdout or stderr, which are captured per call at the WASI
// level: nothing a program prints can desynchronise a session.
//
// Limits hold while they happen: output beyond the per-stream limit is
// dropped as it is written, workspace writes beyond the quota fail, memory
// is capped per instance, and a call past its deadline (or cancelled) is
// stopped where it runs and awaited before Execute returns, with the lost
// state reported in the result.
//
//	a, err := wasm.New(wasm.NewConfig().WithMemoryLimit(512 << 20))
//	if err != nil {
//		return err // e.g. wasm.ErrRuntimeAsset: run `make runtime`
//	}
//	defer a.Close()
//	s, err := a.CreateSession(ctx, port.CreateSessionRequest{})
//	if err != nil {
//		return err
//	}
//	res, err := a.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(2 ** 10)"})
package wasm
