// Package wasmshell runs the bash tool's shell (../guest, embedded as
// runtime/shell.wasm) as a WASI guest under wazero: one instance per
// session, over that session's mounts, within its memory limit.
//
// The shell and every command it runs (grep, sed, awk, tar, ...) parse
// untrusted input only inside the guest: nothing of it is in the gateway's
// heap, a session's allocations count against its own linear memory, and
// its files are what the mounts give (the same as the session's Python), so
// confinement is the sandbox's, not path checks. A guest that exhausts its
// memory, crashes or ignores its deadline ends alone; the next call starts
// a fresh shell.
//
// Every shell starts from the engine's template (image.go): one instance
// whose Go runtime has started, taken as an image of its memory and
// globals before any session's shell exists in it, which each shell's
// memory maps copy-on-write where the host can (Config.Image).
//
// Usage:
//
//	eng, err := wasmshell.NewEngine(ctx, wasmshell.Config{MemoryBytes: 256 << 20})
//	sh, err := eng.Start(ctx, wasmshell.Options{Workspace: ws, Tmp: tmp, Python: runPython})
//	defer sh.Close()
//	res, err := sh.Run(ctx, "ls | wc -l", &stdout, &stderr)
package wasmshell
