// Package shell implements the contract's bash_code_execution tool for the
// in-process backend: a POSIX shell (mvdan.cc/sh, bash dialect) whose
// commands are implemented in Go and whose file access is confined to the
// session's workspace. No host process is ever started.
//
// The guest sees the workspace as /workspace, its initial and home
// directory. Every path, from a command argument, a redirection, a glob or
// test, is resolved against the shell's current directory and must lead
// inside /workspace (or be /dev/null, /dev/stdin, /dev/stdout or
// /dev/stderr); anything else fails with "outside the workspace". Paths
// are walked one directory at a time from the workspace root, refusing
// symbolic links; files are written and removed through the
// *workspace.Workspace, which charges the session quota.
//
// The shell runs in the gateway's process, so no input may end or starve
// that process. Every command stops at its next step once the context of
// Run ends, however deep or wide the tree it walks. A stack guard refuses
// to nest functions, eval, source, $(...) and child shells (or parse text)
// deeper than a limit far below Go's 1 GB stack limit, which would end the
// process: the whole script then ends with status 1 and bash's "maximum
// function nesting level exceeded". chmod never changes the workspace
// root, nor makes anything group- or world-writable, setuid, setgid or
// sticky. $$ and $PPID are 1 and 0, not the gateway's process IDs.
//
// The commands are echo, printf, pwd, cd, cat, ls, mkdir, rm, rmdir, cp, mv,
// touch, chmod, head, tail, wc, grep, sort, uniq, tee, find, seq, basename,
// dirname, env, which, type, sleep, true, false, test/[ and the
// interpreter's other builtins, bash/sh (a child shell in the same
// interpreter), ./script (a shell or Python script, by its #! line), and
// python/python3, which Options.Python runs. Anything else is "command not
// found", status 127.
//
// Usage:
//
//	sh := shell.New(shell.Options{Workspace: ws, Python: runPython, MaxFileBytes: 10 << 20})
//	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
//	defer cancel()
//	code, err := sh.Run(ctx, "mkdir -p out && ls -l | tee out/list.txt", &stdout, &stderr)
//	if err != nil {
//		// ctx ended: code is 124 (deadline) or 130 (cancelled)
//	}
//
// The current directory, variables, functions and options persist between
// the Run calls of a Shell, as in one bash process. Background jobs (cmd &)
// do not: whatever is still running when the script ends is stopped.
package shell
