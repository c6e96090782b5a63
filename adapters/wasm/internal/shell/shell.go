package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// Python runs python or python3 as a program of its own (never in the
// session's code_execution interpreter). argv is the command line as typed
// (argv[0] is "python" or "python3"); relative paths in it are relative to
// the shell's current directory, which InvocationFrom(ctx) reports together
// with the exported variables. stdin is the whole of its standard input. Python must return promptly
// once ctx is done. A non-nil error means the interpreter could not run the
// command at all; the shell prints it and the command fails.
type Python func(ctx context.Context, argv []string, stdin []byte, stdout, stderr io.Writer) (exitCode int, err error)

// Options configures a Shell.
type Options struct {
	// Python runs python and python3; nil makes them fail with
	// "python: not available" and status 127.
	Python Python
	// MaxFileBytes caps the size of a file a command writes (redirections,
	// cp, tee, ...), of the input a command holds in memory (sort, a line of
	// grep, a script) and of what a command writes into a command
	// substitution $(...); <= 0 means no cap beyond the workspace quota.
	MaxFileBytes int64
	// Poll, when set, is called before every command and often by
	// commands in their loops: a guest without preemption checks the
	// host's stop there, cancelling the context of Run if it is asked to
	// stop (a loop that never waits would not otherwise see it).
	Poll func()
	// Chmod, when set, sets the permission bits of a file, by its
	// absolute guest path (WASI has no call for it); nil makes chmod fail.
	Chmod func(guestPath string, mode fs.FileMode) error
	// Mode, when set, reports the permission bits of a file by its
	// absolute guest path (WASI reports none); ok is false when it cannot.
	Mode func(guestPath string) (perm fs.FileMode, ok bool)
	// Quota, when set, reports the session's byte quota (0: none) and
	// what is used of it, for df.
	Quota func() (limit, used int64)
	// Zone, when set, returns the TZif data of an IANA time zone
	// ("Europe/Paris") for TZ; nil leaves TZ to fixed offsets (see
	// dateLocation).
	Zone func(name string) ([]byte, bool)
}

// Invocation describes where a delegated command (python) runs.
type Invocation struct {
	// Dir is the shell's current directory, "/workspace" or below.
	Dir string
	// Env lists the exported variables as "NAME=value", sorted by name.
	Env []string
}

type invocationKey struct{}

// InvocationFrom returns the Invocation of the command whose ctx this is,
// for a Python function. ok is false for a ctx that does not come from the
// shell.
func InvocationFrom(ctx context.Context) (inv Invocation, ok bool) {
	inv, ok = ctx.Value(invocationKey{}).(Invocation)
	return inv, ok
}

// Shell is the bash_code_execution tool of one session: a POSIX shell
// interpreter whose commands are implemented in Go, confined to the
// session's workspace. The current directory, the variables (exported or
// not), functions and shell options persist from one Run to the next.
//
// A Shell runs one command at a time; concurrent calls of Run wait for each
// other.
type Shell struct {
	opts Options
	fs   *fsys

	mu      sync.Mutex // held by Run
	runner  *interp.Runner
	initErr error
	// parser parses the scripts of Run, one at a time (a parser is reused
	// once done; a new one each time was a tenth of an `echo hi`). Child
	// shells, which may parse at the same time, use their own.
	parser *syntax.Parser

	filesMu sync.Mutex
	files   map[*fileWriter]struct{}
	kept    []*os.File // standard inputs kept by exec

	// guard keeps scripts from nesting deep enough to overflow the Go
	// stack (see guard.go); active is the Run in progress, which a refusal
	// ends.
	guard  stackGuard
	active atomic.Pointer[runState]

	// outBufs holds the output buffers of commands that ended (call.out),
	// so that a command does not allocate and clear 32 KiB of them each
	// time it runs: in the WebAssembly guest that was a fifth of an
	// `echo hi`.
	outBufs sync.Pool
	// readBufs holds the read buffers (readBufSize bytes) of commands
	// that ended (call.readBuf): allocating and clearing one for every
	// command was a fifth of a `wc -l </dev/null` in the guest, counting
	// the collections its garbage brought on.
	readBufs sync.Pool

	// clock times the time clauses (timeclause.go).
	clock clock
}

// New returns the shell of a session. Its current directory is /workspace.
func New(opts Options) *Shell {
	s := &Shell{
		opts:   opts,
		fs:     &fsys{max: opts.MaxFileBytes, chmodFn: opts.Chmod, modeFn: opts.Mode},
		files:  make(map[*fileWriter]struct{}),
		parser: newParser(),
	}
	s.runner, s.initErr = s.newRunner("bash", guestRoot, initialEnv(), nil, nil, nil)
	return s
}

// initialEnv is the environment a session starts with; nothing comes from
// the host.
func initialEnv() []string {
	return []string{
		"HOME=" + guestRoot,
		"PWD=" + guestRoot,
		"PATH=/usr/bin:/bin",
		"LANG=C.UTF-8",
		"TMPDIR=" + tmpRoot,
	}
}

// Run runs command, a bash script, writing its output to stdout and
// stderr (nil discards), from several goroutines but one write at a time.
// It returns the script's exit status: a failed command is a status, not an
// error. The error is non-nil only when ctx ended before the script did
// (status 124 for a deadline, 130 for a cancellation) or when the shell
// could not be set up. A script that nests too deep (see guard.go) ends
// with status 1 and one line on stderr.
//
// When Run returns, nothing writes to stdout or stderr any more: background
// jobs have been stopped and waited for, files opened for writing are
// closed and in place. (The interpreter feeds a here-document to its
// command from a goroutine of its own; that goroutine ends when the command
// does, as its pipe is then closed.)
func (s *Shell) Run(ctx context.Context, command string, stdout, stderr io.Writer) (exitCode int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.initErr != nil {
		return 1, s.initErr
	}
	if err := ctx.Err(); err != nil {
		return ctxStatus(err), err
	}
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	var wmu sync.Mutex
	// A refusal of the stack guard stops the whole run through runCtx.
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	st := &runState{stop: stop}
	out := &lockedWriter{mu: &wmu, w: stdout, run: st}
	errw := &lockedWriter{mu: &wmu, w: stderr, run: st, stderr: true}

	file, code, nested := s.parse(s.parser, command, "bash", errw)
	if nested {
		// The stack is shallow here: the text itself nests too deep.
		fmt.Fprintf(errw, "bash: %v\n", errParseNesting)
	}
	if file == nil {
		return code, nil
	}
	defer s.closeFiles()
	if err := interp.StdIO(nil, out, errw)(s.runner); err != nil {
		return 1, err
	}
	s.active.Store(st)
	defer s.active.Store(nil)
	code, settled, err := s.runScript(runCtx, s.runner, file, errw)
	if name := st.refused.Load(); name != nil && ctx.Err() == nil {
		errw.mu.Lock()
		io.WriteString(errw.w, nestingMessage(*name))
		errw.mu.Unlock()
		code, settled, err = 1, false, nil
	}
	s.settle(s.runner, code, settled)
	return code, err
}

// parse parses a script with p (nil: a new parser), printing a syntax
// error as bash does (status 2). nested reports a parse the stack guard
// stopped (and prints nothing): the text nests too deep, or the parse
// started too deep already.
func (s *Shell) parse(p *syntax.Parser, src, name string, stderr io.Writer) (file *syntax.File, code int, nested bool) {
	file, err := s.parseGuarded(p, src, name)
	if errors.Is(err, errParseNesting) {
		return nil, 2, true
	}
	if err != nil {
		fmt.Fprintln(stderr, err) // "name:line:col: message"
		return nil, 2, false
	}
	// One walk finds a process substitution, quotes the tildes and
	// rewrites the time clauses (a script with a process substitution is
	// not run, whatever the rest).
	var procSubst bool
	syntax.Walk(file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ProcSubst:
			procSubst = true
		case *syntax.Word:
			quoteUserTilde(n)
		case *syntax.Stmt:
			if tc, ok := n.Cmd.(*syntax.TimeClause); ok {
				s.rewriteTime(n, tc)
			}
		}
		return !procSubst
	})
	if procSubst {
		fmt.Fprintln(stderr, "bash: process substitution <(...) and >(...) is not supported here; use a pipe or a file")
		return nil, 2, false
	}
	return file, 0, false
}

// quoteUserTilde makes "~name" literal, as for a user that does not exist:
// expanding it would look the name up in the host's user database. "~",
// "~/..." (the workspace, via HOME), "~+" and "~-" still expand.
func quoteUserTilde(w *syntax.Word) {
	if len(w.Parts) == 0 {
		return
	}
	if lit, ok := w.Parts[0].(*syntax.Lit); ok && len(lit.Value) > 1 && lit.Value[0] == '~' && isNameByte(lit.Value[1]) {
		lit.Value = `\` + lit.Value
	}
}

func isNameByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// runFile runs a parsed script on r and stops what it left running in the
// background. The status follows Run's rules.
func (s *Shell) runFile(ctx context.Context, r *interp.Runner, file *syntax.File, stderr io.Writer) (code int, err error) {
	code, _, err = s.runScript(ctx, r, file, stderr)
	return code, err
}

// runScript is runFile, and reports whether r's $? is the status already
// and nothing ran after the script: settled is true when the script ran
// to its end (not stopped, not ended by exit or an error of the
// interpreter's) and left no background job to wait for.
func (s *Shell) runScript(ctx context.Context, r *interp.Runner, file *syntax.File, stderr io.Writer) (code int, settled bool, err error) {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "bash: internal error: %v\n", p)
			code, settled, err = 1, false, nil
		}
	}()
	jobs := backgroundJobs(r)
	err = r.Run(runCtx, file)
	exited := r.Exited()
	// Background jobs (cmd &) do not outlive the command: stop them and
	// wait for them, so that no goroutine runs once Run has returned. The
	// jobs of earlier scripts were waited for at their end: only a script
	// that started one waits (backgroundJobs is -1 where it cannot tell).
	cancel()
	waited := jobs < 0 || backgroundJobs(r) != jobs
	if waited {
		waitBackground(r)
	}
	if cerr := ctx.Err(); cerr != nil {
		return ctxStatus(cerr), false, cerr
	}
	// The runner's $? is the script's status unless something ran since
	// (the wait) or the script's end was not a plain status: an exit
	// (which leaves $? marked as exiting), or an error of the interpreter's
	// or a handler's (whose status Run reports as 1).
	settled = !waited && !exited
	var status interp.ExitStatus
	switch {
	case err == nil:
		return 0, settled, nil
	case errors.As(err, &status):
		_, plain := err.(interp.ExitStatus)
		return int(status), settled && plain, nil
	}
	fmt.Fprintf(stderr, "bash: %v\n", err)
	return 1, false, nil
}

// waitStmt and settleStmt end a Run in the session's runner: the EXIT
// trap is a script's, run at the end of each command, not at every later
// one.
var (
	waitStmt   = mustParse("builtin wait")
	settleStmt = mustParse("builtin trap - EXIT")
	// statusTrue and statusFalse, run as bare commands, leave $? at 0 and 1.
	statusTrue  = mustParse("builtin :").Cmd
	statusFalse = mustParse("builtin false").Cmd
)

func mustParse(src string) *syntax.Stmt {
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil {
		panic(err)
	}
	return f.Stmts[0]
}

// waitBackground waits for the background jobs of r, whose context has
// been cancelled. Its output is discarded (xtrace would print the wait).
func waitBackground(r *interp.Runner) {
	interp.StdIO(nil, io.Discard, io.Discard)(r)
	r.Run(context.Background(), waitStmt)
}

// settle resets the per-command state of the session's runner and leaves
// $? at the script's status for the next Run. settled says that $? is that
// status already (see runScript): then only an EXIT trap, if the script
// set one, needs a run to clear it.
func (s *Shell) settle(r *interp.Runner, code int, settled bool) {
	interp.StdIO(nil, io.Discard, io.Discard)(r)
	ctx := context.Background()
	if exitTrapSet(r) {
		r.Run(ctx, settleStmt)
		settled = false
	}
	if settled {
		return
	}
	// A bare command (not a statement) run by Run sets $? to its status
	// without an ERR trap or set -e, which only statements run. The two
	// common statuses need no subshell, nor a parse: a call's cost.
	switch code &= 0xff; code {
	case 0:
		r.Run(ctx, statusTrue)
	case 1:
		r.Run(ctx, statusFalse)
	default:
		// "(exit N) && :" sets $? to N without an ERR trap or set -e.
		r.Run(ctx, mustParse(fmt.Sprintf("(builtin exit %d) && builtin :", code)))
	}
}

func ctxStatus(err error) int {
	if errors.Is(err, context.DeadlineExceeded) {
		return returnCodeTimedOut
	}
	return returnCodeCancelled
}

// newRunner returns an interpreter whose every file access and command goes
// through this shell, in the guest directory dir with the exported
// variables env. name is the command that starts it (bash, sh, ./script).
func (s *Shell) newRunner(name, dir string, env []string, stdin io.Reader, stdout, stderr io.Writer) (*interp.Runner, error) {
	r, err := interp.New(
		interp.Env(expand.ListEnviron(env...)),
		guestDir(dir),
		interp.StdIO(stdin, stdout, stderr),
		interp.CallHandler(s.callHandler),
		interp.ExecHandlers(s.execMiddleware),
		interp.OpenHandler(s.openHandler),
		interp.ReadDirHandler2(s.readDirHandler),
		interp.StatHandler(s.statHandler),
		interp.AccessHandler(s.accessHandler),
	)
	if err != nil {
		return nil, fmt.Errorf("shell: %w", err)
	}
	// The setup runs a command, where the stack guard may find a child
	// shell nested too deep: it refuses the shell by its name.
	ctx := context.WithValue(context.Background(), childShellKey{}, name)
	if err := r.Run(ctx, mustParse("builtin :")); err != nil {
		return nil, fmt.Errorf("shell: setting up: %w", err)
	}
	return r, nil
}

// childShellKey marks the context of the setup of a child shell, with its
// name.
type childShellKey struct{}

// guestDir sets the interpreter's directory to a guest path, which does not
// exist on the host (interp.Dir would check that it does).
func guestDir(dir string) interp.RunnerOption {
	return func(r *interp.Runner) error {
		r.Dir = dir
		return nil
	}
}

// lockedWriter serialises the writes of the goroutines of one Run (pipeline
// stages, background jobs) to the caller's writers; stdout and stderr share
// the mutex as they may be the same writer. Once the stack guard has
// refused a command, writes are dropped: the levels of the recursion print
// the interpreter's error one by one as they unwind, and Run explains the
// refusal once at the end.
type lockedWriter struct {
	mu  *sync.Mutex
	w   io.Writer
	run *runState
	// stderr: the Run's standard error, where set -x traces go; the
	// traces of internal calls are dropped (internalTrace).
	stderr bool
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	if l.run.refused.Load() != nil || l.stderr && internalTrace(p) {
		return len(p), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// internalPrefix marks the commands the call handler diverts from the
// interpreter's builtins to this package's versions. A shell word cannot
// start with a NUL byte, so no user command or function has such a name.
const internalPrefix = "\x00"

// overridden are the builtins this package replaces: its echo and printf
// report write errors (a full quota) as failures, its pwd and type do not
// look at the host's file system.
var overridden = map[string]bool{"echo": true, "printf": true, "pwd": true, "type": true, "umask": true}

// callHandler runs before every simple command, builtins included: every
// function call, eval, source and child shell passes here, so it is where
// the stack guard stops a recursion (see guard.go).
func (s *Shell) callHandler(ctx context.Context, args []string) ([]string, error) {
	name := args[0]
	if s.opts.Poll != nil {
		s.opts.Poll()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if w, ok := interp.HandlerCtx(ctx).Stdout.(interface{ Broken() bool }); ok && w.Broken() {
		// A write of this pipeline stage found nobody reading: bash's
		// stage would have died of SIGPIPE there. This stage is a
		// subshell of the interpreter's, which exit ends alone.
		return []string{"builtin", "exit", "141"}, nil
	}
	if s.guard.tooDeep() {
		if shell, ok := ctx.Value(childShellKey{}).(string); ok {
			name = shell
		}
		s.refuse(name)
		return nil, errNesting
	}
	args, err := s.checkNested(ctx, args)
	if err != nil {
		return nil, err
	}
	switch {
	case overridden[name]:
		return divert(args), nil
	case name == "command" && len(args) > 1 && (args[1] == "-v" || args[1] == "-V"):
		return divert(args), nil
	case name == "trap":
		return trapArgs(args), nil
	case name == "cd" && len(args) <= 2:
		// The builtin checks the directory through the stat handler; check
		// it first to explain a refusal.
		hc := interp.HandlerCtx(ctx)
		if _, msg := s.cdTarget(ctx, hc.Dir, hc.Env, args[1:]); msg != "" {
			return divert(args), nil
		}
	case name == "exec" && len(args) == 1:
		// "exec < file" keeps its redirections for the rest of the
		// script, and the interpreter never closes them: Run does.
		if f, ok := interp.HandlerCtx(ctx).Stdin.(*os.File); ok {
			s.filesMu.Lock()
			s.kept = append(s.kept, f)
			s.filesMu.Unlock()
		}
	}
	return args, nil
}

// builtinTarget returns the index in args of the command that runs:
// "builtin" and "command" run their argument as a builtin without calling
// this handler again.
func builtinTarget(args []string) int {
	i := 0
	for i+1 < len(args) {
		switch args[i] {
		case "builtin":
			i++
			continue
		case "command":
			if args[i+1] == "-p" && i+2 < len(args) {
				i += 2
			} else {
				i++
			}
			continue
		}
		break
	}
	return i
}

// checkNested looks at the commands that make the interpreter parse text at
// run time (eval, source, trap, alias, unset 'a[expr]') or parse their
// arguments recursively (test and [): a parse of theirs nests as deep as
// the text does, without the call handler in between, so the text is
// parsed here first under the stack guard and refused if it nests too
// deep. It also makes the path of source a guest one (the builtin looks the
// script up in $PATH first).
func (s *Shell) checkNested(ctx context.Context, args []string) ([]string, error) {
	i := builtinTarget(args)
	if i > maxBuiltinChain {
		// The interpreter recurses once per "builtin" or "command" word,
		// with a large frame each time.
		s.refuse(args[0])
		return nil, errNesting
	}
	name, rest := args[i], args[i+1:]
	nested := false
	switch name {
	case "eval":
		if len(rest) == 0 {
			break
		}
		nested = s.nestsTooDeep(strings.Join(rest, " "))
	case "source", ".":
		if len(rest) == 0 || rest[0] == "" {
			break
		}
		hc := interp.HandlerCtx(ctx)
		args = slices.Clone(args)
		args[i+1] = guestAbs(hc.Dir, rest[0])
		nested = s.sourcedNestsTooDeep(ctx, args[i+1])
	case "trap":
		if len(rest) > 0 && rest[0] == "--" {
			rest = rest[1:]
		}
		if len(rest) < 2 || strings.HasPrefix(rest[0], "-") && rest[0] != "-" {
			break
		}
		nested = s.nestsTooDeep(rest[0])
	case "alias":
		for _, a := range rest {
			if _, v, ok := strings.Cut(a, "="); ok && !nested {
				for _, err := range syntax.NewParser().WordsSeq(guardedReader{strings.NewReader(v), &s.guard}) {
					if errors.Is(err, errParseNesting) {
						nested = true
					}
				}
			}
		}
	case "unset":
		for _, a := range rest {
			if l := strings.IndexByte(a, '['); l > 0 && strings.HasSuffix(a, "]") && !nested {
				_, err := syntax.NewParser().Arithmetic(guardedReader{strings.NewReader(a[l+1 : len(a)-1]), &s.guard})
				nested = errors.Is(err, errParseNesting)
			}
		}
	case "test", "[":
		if len(rest) > maxTestArgs {
			return []string{internalPrefix + tooManyTestArgs, name}, nil
		}
	}
	if nested {
		s.refuse(name)
		return nil, errNesting
	}
	return args, nil
}

// maxBuiltinChain bounds "builtin builtin ... command command ... name".
const maxBuiltinChain = 64

// tooManyTestArgs is the internal command a test or [ with more than
// maxTestArgs arguments is diverted to, with the name as typed. (It starts
// with a NUL byte after the prefix too, so no user command has its name.)
const tooManyTestArgs = "\x00test"

func divert(args []string) []string {
	args = slices.Clone(args)
	args[0] = internalPrefix + args[0]
	return args
}

// cdTarget returns the directory cd would change to, or the message of its
// refusal.
func (s *Shell) cdTarget(ctx context.Context, dir string, env expand.Environ, args []string) (string, string) {
	var p string
	switch {
	case len(args) == 0:
		p = env.Get("HOME").String()
	case args[0] == "-":
		p = env.Get("OLDPWD").String()
	default:
		p = args[0]
	}
	if p == "" {
		return "", "" // the builtin explains
	}
	t, err := resolve(dir, p)
	if err == nil && t.dev != "" {
		err = syscall.ENOTDIR
	}
	if err == nil {
		var fi fs.FileInfo
		fi, err = s.fs.stat(ctx, t.rel)
		if err == nil && !fi.IsDir() {
			err = syscall.ENOTDIR
		}
	}
	if err != nil {
		return "", fmt.Sprintf("%s: %s", p, errText(err))
	}
	return t.abs, ""
}

// execMiddleware is the interpreter's exec handler: it never calls next (the
// interpreter's default, which starts host processes).
func (s *Shell) execMiddleware(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	return s.exec
}

// openHandler opens the files of redirections (< > >>) and of source.
func (s *Shell) openHandler(ctx context.Context, p string, flag int, _ os.FileMode) (io.ReadWriteCloser, error) {
	ctx = s.polled(ctx)
	hc := interp.HandlerCtx(ctx)
	t, err := resolve(hc.Dir, p)
	if err != nil {
		return nil, pathError(p, err)
	}
	write := flag&(os.O_WRONLY|os.O_RDWR) != 0
	switch t.dev {
	case devNull:
		if write {
			return nopWriteCloser{io.Discard}, nil
		}
		return emptyFile()
	case devStdout, devStderr:
		if !write {
			return nil, pathError(p, fs.ErrPermission)
		}
		if t.dev == devStdout {
			return nopWriteCloser{hc.Stdout}, nil
		}
		return nopWriteCloser{hc.Stderr}, nil
	case devStdin:
		if write || hc.Stdin == nil {
			return emptyFile()
		}
		if f, ok := hc.Stdin.(*os.File); ok {
			return f, nil // closing it twice is harmless
		}
		return emptyFile()
	}
	if !write {
		f, err := s.fs.open(ctx, t.rel)
		if err != nil {
			return nil, pathError(p, err)
		}
		return f, nil
	}
	if flag&os.O_RDWR != 0 {
		return nil, pathError(p, errors.New("opening a file for reading and writing is not supported"))
	}
	return s.createFile(ctx, t, flag&os.O_APPEND != 0, hc.Stderr)
}

// createFile opens the workspace file t for writing, as a redirection does:
// the directory must exist, the file is created or (unless appending)
// emptied.
func (s *Shell) createFile(ctx context.Context, t target, appending bool, report io.Writer) (*fileWriter, error) {
	if t.root {
		return nil, pathError(t.arg, errIsDirectory)
	}
	if fi, err := s.fs.stat(ctx, path.Dir(t.rel)); err != nil {
		return nil, pathError(t.arg, err)
	} else if !fi.IsDir() {
		return nil, pathError(t.arg, syscall.ENOTDIR)
	}
	fi, err := s.fs.stat(ctx, t.rel)
	switch {
	case err == nil && fi.IsDir():
		return nil, pathError(t.arg, errIsDirectory)
	case err == nil && !fi.Mode().IsRegular():
		return nil, pathError(t.arg, errors.New("not a regular file"))
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, pathError(t.arg, err)
	}
	return s.startWrite(t.arg, t.rel, appending, report), nil
}

// readDirHandler lists directories for globbing. A directory it may not
// list (outside the workspace, through a symbolic link) reads as empty, so
// a pattern there matches nothing and stays as typed, for the command to
// refuse.
func (s *Shell) readDirHandler(ctx context.Context, p string) ([]fs.DirEntry, error) {
	ctx = s.polled(ctx)
	hc := interp.HandlerCtx(ctx)
	t, err := resolve(hc.Dir, p)
	if err != nil || t.dev != "" {
		return nil, nil
	}
	infos, err := s.fs.readDir(ctx, t.rel)
	switch {
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, fs.ErrNotExist):
		return nil, &fs.PathError{Op: "readdir", Path: p, Err: err}
	case err != nil:
		return nil, nil
	}
	entries := make([]fs.DirEntry, len(infos))
	for i, info := range infos {
		entries[i] = fs.FileInfoToDirEntry(info)
	}
	return entries, nil
}

// statHandler describes files for test, [ and cd. A symbolic link is
// described (for test -L) but never followed.
func (s *Shell) statHandler(ctx context.Context, p string, followSymlinks bool) (fs.FileInfo, error) {
	ctx = s.polled(ctx)
	hc := interp.HandlerCtx(ctx)
	t, err := resolve(hc.Dir, p)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	if t.dev != "" {
		return devInfo{name: path.Base(t.dev)}, nil
	}
	var fi fs.FileInfo
	if followSymlinks {
		fi, err = s.fs.stat(ctx, t.rel)
	} else {
		fi, err = s.fs.lstat(ctx, t.rel)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	return fi, nil
}

// accessHandler answers test -r, -w, -x (and cd's check) from the owner's
// permission bits.
func (s *Shell) accessHandler(ctx context.Context, p string, mode interp.AccessMode) error {
	fi, err := s.statHandler(ctx, p, true)
	if err != nil {
		return err
	}
	perm := fi.Mode().Perm() >> 6
	if uint32(perm)&uint32(mode) != uint32(mode) {
		return &fs.PathError{Op: "access", Path: p, Err: fs.ErrPermission}
	}
	return nil
}

// polled is ctx with the host's stop checked at every Err (see
// pollContext): the interpreter's own file work (globs over thousands of
// entries, tests, redirections) checks it too.
func (s *Shell) polled(ctx context.Context) context.Context {
	if s.opts.Poll == nil {
		return ctx
	}
	if _, ok := ctx.(pollContext); ok {
		return ctx
	}
	return pollContext{Context: ctx, poll: s.opts.Poll}
}
