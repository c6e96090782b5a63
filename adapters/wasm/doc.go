// Package wasm is the in-process CodeExecutionPort: CPython 3.13 compiled
// to WASI, run by wazero inside the gateway's own process. No container, no
// service, no child process, and nothing to install: the runtime (built by
// internal/cpython/runtime/build.sh, committed) is embedded in the binary.
//
// The interpreter is compiled once per process (and cached on disk across
// restarts). At start the adapter boots CPython once, in a template
// instance, imports the common modules, and takes an image of its memory
// and globals (kept in the same cache, so a later start maps it instead of
// booting); every session starts from that image, mapped copy-on-write, so
// a session starts in well under a millisecond and shares the pages it
// does not write. The pages every session writes are copied at once, and
// an instance whose session ended cleanly is reset to the image and used
// again (recycle.go says what is put back, and when an instance is closed
// instead). Each session has its own workspace directory,
// mounted as /workspace and used as the working directory, and a private
// /tmp. Nothing else of the host is visible: no other files, no environment,
// no network, no host callbacks.
//
// The module is a reactor: the host calls its exports, and the return of a
// call is its completion, so nothing a program writes (to a descriptor, a
// stream or its memory) can end a call early or choose its outcome.
// Inside, a small driver (driver.py) runs cells in a persistent __main__
// namespace, so globals and imports survive between calls; stdout and
// stderr are captured per call at the WASI level.
//
// Limits hold while they happen: output beyond the per-stream limit is
// dropped as it is written, workspace writes beyond the quota fail, memory
// is capped per instance, and a call past its deadline (or cancelled) is
// stopped where it runs, in Python or in C: the build put a check of an
// interrupt global at every loop header, which the host sets. The call is
// awaited before Execute returns, with the lost state reported in the
// result.
//
// A Config is built with With methods, each returning a modified copy;
// they are the one way to set a setting, since Config holds its Settings
// unexported. WithSettings sets them all at once, from a Settings filled
// elsewhere (package binding fills one from flags, environment and YAML).
//
//	a, err := wasm.New(wasm.NewConfig().WithMemoryLimit(512 << 20))
//	if err != nil {
//		return err
//	}
//	defer a.Close()
//	s, err := a.CreateSession(ctx, port.CreateSessionRequest{})
//	if err != nil {
//		return err
//	}
//	res, err := a.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(2 ** 10)"})
package wasm
