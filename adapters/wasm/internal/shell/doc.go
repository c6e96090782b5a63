// Package shell implements the contract's bash_code_execution tool for the
// in-process backend: a POSIX shell (mvdan.cc/sh, bash dialect) whose
// commands are implemented in Go.
//
// It runs only inside the sandbox: package guest builds it into a WASI
// program, and package wasmshell runs that program under wazero, one
// instance per session, over the session's mounts (/workspace and /tmp, the
// same as the session's Python) and within the session's memory limit.
// Every file this package opens is a guest path that the mounts resolve
// and confine; the shell has no host path to name. Untrusted input (the
// script, and what its commands parse: regular expressions, sed and awk
// programs, archives) is parsed in the guest's memory, never in the
// gateway's.
//
// Every path, from a command argument, a redirection, a glob or test, is
// resolved against the shell's current directory and must lead inside
// /workspace or /tmp (or be /dev/null, /dev/stdin, /dev/stdout or
// /dev/stderr); anything else fails with "outside the workspace". A command
// stops at its next step once the context of Run ends, and the host polls
// (Options.Poll) reach the commands' loops: the guest has no preemption.
// chmod never changes a mount's root, nor makes anything group- or
// world-writable, setuid, setgid or sticky. $$ and $PPID are 3 and 2, the
// fixed process IDs of Go on wasip1: the guest has no other.
//
// The commands are echo, printf, pwd, cd, cat, ls, mkdir, rm, rmdir, cp, mv,
// touch, chmod, ln (which refuses: the mounts have no links), head, tail,
// wc, grep, sed, awk, cut, tr, paste, sort, uniq, tee, find, xargs, diff,
// cmp, comm, join, tac, rev, nl, fold, column, expand, unexpand, split, od,
// expr, printenv, cksum, seq, yes, bc, date, sleep, timeout, basename,
// dirname, readlink,
// realpath, stat, du, df, tree, file, tar, gzip, gunzip, zcat, zip, unzip,
// base32, base64, md5sum, sha1sum, sha224sum, sha256sum, sha384sum,
// sha512sum, env, which, type (which knows the script's functions),
// command, umask (every file is made under 022: it prints that mask and
// refuses another), trap (a signal never reaches the shell: traps on
// signals are dropped, so "trap f INT TERM EXIT" sets its EXIT trap; -p
// prints the traps set), time (its report on stderr as in bash, with the
// real time only: user and sys read 0), uname, whoami, id, hostname, nproc,
// true, false, test/[ and the interpreter's other builtins, bash/sh (a
// child shell in the same interpreter), ./script (a shell or Python
// script, by its #! line), and python/python3, which Options.Python runs
// as a program of its own. Anything else is "command not found", status
// 127, with the reason for package managers and downloaders (pip, curl).
//
// Each command is in a file named after it (grep.go, sort.go) or after its
// small family (head_tail.go, cp_mv.go, expand_unexpand.go); the command
// table in commands.go lists them all. What several commands share is in
// a file named for what it is: commands.go (the table and a command's
// call), flags.go (options), input.go (operands and lines), output.go,
// fileapi.go and fs.go (files and paths; fs.go says what confines a path),
// mounts.go, fileinfo.go (how a file is described), archive.go (what tar,
// gzip, zip and unzip share), sysinfo.go (the sandbox's identity),
// regex.go, printf.go, width.go, timezone.go and dateparse.go. shell.go,
// redirect.go, guard.go, nesting.go and timeclause.go are the
// interpreter's side.
//
// Usage (in the guest):
//
//	sh := shell.New(shell.Options{Python: runPython, MaxFileBytes: 10 << 20, Poll: poll})
//	code, err := sh.Run(ctx, "mkdir -p out && ls -l | tee out/list.txt", os.Stdout, os.Stderr)
//	if err != nil {
//		// ctx ended: code is 124 (deadline) or 130 (cancelled)
//	}
//
// The current directory, variables, functions and options persist between
// the Run calls of a Shell, as in one bash process. Background jobs (cmd &)
// do not: whatever is still running when the script ends is stopped.
package shell
