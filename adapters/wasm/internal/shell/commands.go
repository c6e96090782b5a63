package shell

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
)

// A command is one of the programs the shell provides. It returns its exit
// status; it stops early, with any status, once c.ctx is done.
type command func(c *call) int

// commands maps names to implementations: the command table, filled by
// the init function below (the commands refer to the map through env,
// which, etc., so it cannot be filled where it is declared). Each command
// is in the file named after it, or after its family (head and tail in
// head_tail.go).
var commands = make(map[string]command)

func init() {
	commands["awk"] = cmdAwk
	commands["base32"] = cmdBase64 // base64.go
	commands["base64"] = cmdBase64
	commands["basename"] = cmdBasename
	commands["bash"] = cmdBash
	commands["bc"] = cmdBc
	commands["cat"] = cmdCat
	commands["cd"] = cmdCd
	commands["chmod"] = cmdChmod
	commands["cksum"] = cmdCksum
	commands["cmp"] = cmdCmp
	commands["column"] = cmdColumn
	commands["comm"] = cmdComm
	commands["command"] = cmdCommandV
	commands["cp"] = cmdCp
	commands["cut"] = cmdCut
	commands["date"] = cmdDate
	commands["df"] = cmdDf
	commands["diff"] = cmdDiff
	commands["dirname"] = cmdDirname
	commands["du"] = cmdDu
	commands["echo"] = cmdEcho
	commands["env"] = cmdEnv
	commands["expand"] = cmdExpand
	commands["expr"] = cmdExpr
	commands["false"] = func(*call) int { return 1 }
	commands["file"] = cmdFile
	commands["find"] = cmdFind
	commands["fold"] = cmdFold
	commands["grep"] = cmdGrep
	commands["gunzip"] = cmdGzip // gzip.go
	commands["gzip"] = cmdGzip
	commands["head"] = cmdHead
	commands["hostname"] = cmdHostname
	commands["id"] = cmdId
	commands["join"] = cmdJoin
	commands["ln"] = cmdLn
	commands["ls"] = cmdLs
	for name := range sumAlgos { // md5sum, sha1sum, ... sha512sum: sums.go
		commands[name] = cmdSum
	}
	commands["mkdir"] = cmdMkdir
	commands["mv"] = cmdMv
	commands["nl"] = cmdNl
	commands["nproc"] = cmdNproc
	commands["od"] = cmdOd
	commands["paste"] = cmdPaste
	commands["printenv"] = cmdPrintenv
	commands["printf"] = cmdPrintf
	commands["pwd"] = cmdPwd
	commands["python"] = cmdPython
	commands["python3"] = cmdPython // python.go
	commands["readlink"] = cmdReadlink
	commands["realpath"] = cmdRealpath
	commands["rev"] = cmdRev
	commands["rm"] = cmdRm
	commands["rmdir"] = cmdRmdir
	commands["sed"] = cmdSed
	commands["seq"] = cmdSeq
	commands["sh"] = cmdBash // bash.go
	commands["sleep"] = cmdSleep
	commands["sort"] = cmdSort
	commands["split"] = cmdSplit
	commands["stat"] = cmdStat
	commands["tac"] = cmdTac
	commands["tail"] = cmdTail
	commands["tar"] = cmdTar
	commands["tee"] = cmdTee
	commands["timeout"] = cmdTimeout
	commands["touch"] = cmdTouch
	commands["tr"] = cmdTr
	commands["trap"] = cmdTrap // trap.go: printing only
	commands["tree"] = cmdTree
	commands["true"] = func(*call) int { return 0 }
	commands["type"] = cmdType
	commands["umask"] = cmdUmask // umask.go
	commands["uname"] = cmdUname
	commands["unexpand"] = cmdUnexpand
	commands["uniq"] = cmdUniq
	commands["unzip"] = cmdUnzip
	commands["wc"] = cmdWc
	commands["which"] = cmdWhich
	commands["whoami"] = cmdWhoami
	commands["xargs"] = cmdXargs
	commands["yes"] = cmdYes
	commands["zcat"] = cmdGzip // gzip.go
	commands["zip"] = cmdZip
}

// Commands lists the commands the shell provides besides the
// interpreter's builtins, sorted: what a capability description tells a
// model.
func Commands() []string {
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// call is one run of a command.
type call struct {
	ctx    context.Context
	sh     *Shell
	name   string
	args   []string // without the name
	dir    string   // the guest current directory
	env    expand.Environ
	rawIn  io.Reader // the interpreter's stdin, nil if none
	stdin  io.Reader // never nil; stops reading once ctx is done
	stdout io.Writer
	stderr io.Writer
	// bufs are the output buffers out handed this call, given back to the
	// shell's pool when the command has returned (dispatch).
	bufs []*bufio.Writer
}

// exec runs a simple command that is neither a function nor a builtin of the
// interpreter (or one the call handler diverted).
func (s *Shell) exec(ctx context.Context, args []string) (err error) {
	hc := interp.HandlerCtx(ctx)
	name, _ := strings.CutPrefix(args[0], internalPrefix)
	defer func() {
		// Commands may run in pipeline goroutines, where a panic would
		// take the whole process down.
		if p := recover(); p != nil {
			if hc.Stderr != nil {
				fmt.Fprintf(hc.Stderr, "bash: %s: internal error: %v\n", name, p)
			}
			err = interp.ExitStatus(1)
		}
	}()
	ctx = s.polled(ctx)
	c := &call{
		ctx:    ctx,
		sh:     s,
		name:   name,
		args:   args[1:],
		dir:    hc.Dir,
		env:    hc.Env,
		rawIn:  hc.Stdin,
		stdout: hc.Stdout,
		stderr: hc.Stderr,
	}
	if max := s.fs.max; max > 0 {
		c.stdout = capSubst(c.stdout, max)
		c.stderr = capSubst(c.stderr, max)
	}
	return c.finish(c.dispatch())
}

// capSubst caps the output a command writes into a command substitution
// ($(...)), which the interpreter collects in memory, at max bytes.
func capSubst(w io.Writer, max int64) io.Writer {
	if sb, ok := w.(*strings.Builder); ok {
		return &substWriter{sb: sb, max: max}
	}
	return w
}

type substWriter struct {
	sb  *strings.Builder
	max int64
}

func (w *substWriter) Write(p []byte) (int, error) {
	if room := w.max - int64(w.sb.Len()); int64(len(p)) > room {
		n, _ := w.sb.Write(p[:max(room, 0)])
		return n, fmt.Errorf("command substitution output over %d bytes", w.max)
	}
	return w.sb.Write(p)
}

// finish turns a status into the exec handler's result: a done ctx stops
// the interpreter.
func (c *call) finish(code int) error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	if code&0xff != 0 {
		return interp.ExitStatus(uint8(code))
	}
	return nil
}

func (c *call) dispatch() int {
	if c.stdout == nil {
		c.stdout = io.Discard
	}
	if c.stderr == nil {
		c.stderr = io.Discard
	}
	in := c.rawIn
	if in == nil {
		in = strings.NewReader("")
	}
	c.stdin = &ctxReader{ctx: c.ctx, r: in}
	if f, ok := c.rawIn.(interface{ SetReadDeadline(time.Time) error }); ok {
		// Unblock a read from a pipe when ctx ends.
		stop := context.AfterFunc(c.ctx, func() { f.SetReadDeadline(deadlinePassed) })
		defer stop()
	}
	defer c.releaseBufs()
	return c.run()
}

// run runs the command c names, after dispatch set up its streams.
func (c *call) run() int {
	switch c.name {
	case tooManyTestArgs:
		fmt.Fprintf(c.stderr, "bash: %s: too many arguments\n", c.args[0])
		return 2
	case timeCommand:
		return cmdTimeReport(c)
	}
	if strings.Contains(c.name, "/") {
		return c.runFile()
	}
	cmd, ok := commands[c.name]
	if !ok {
		fmt.Fprintf(c.stderr, "bash: %s: command not found%s\n", c.name, missingWhy[c.name])
		return 127
	}
	return cmd(c)
}

// missingWhy explains, after "command not found", the commands a program
// most often reaches for in vain here, so that it does not try the next
// package manager or downloader in turn.
var missingWhy = map[string]string{
	"pip":     noInstall,
	"pip3":    noInstall,
	"conda":   noInstall,
	"uv":      noInstall,
	"npm":     noInstall,
	"apt":     noInstall,
	"apt-get": noInstall,
	"curl":    noNetwork,
	"wget":    noNetwork,
	"ssh":     noNetwork,
	"git":     " (this sandbox has no git and no network)",
}

const (
	noInstall = " (this sandbox has no network and installs no packages: use the modules python3 already has)"
	noNetwork = " (this sandbox has no network access)"
)

// builtinOnly are the commands of the table that exist only as shell
// builtins, never as files in $PATH.
var builtinOnly = map[string]bool{"cd": true, "command": true, "trap": true, "type": true, "umask": true}

// available reports whether name is a command of the table that can run
// here.
func (c *call) available(name string) bool {
	_, ok := commands[name]
	if (name == "python" || name == "python3") && c.sh.opts.Python == nil {
		return false
	}
	return ok
}

// runCommand runs argv as a command of its own, the way env does: only
// the commands of the table (or a script named by a path) — the shell's
// functions and builtins are not visible, as they are not to GNU xargs or
// timeout. ctx bounds it (timeout's deadline) and in is its standard input.
// found is false for a command that does not exist, which the caller
// reports in its own words (nothing has been printed).
func (c *call) runCommand(ctx context.Context, argv []string, in io.Reader) (code int, found bool) {
	name := argv[0]
	if !strings.Contains(name, "/") && (!c.available(name) || builtinOnly[name]) {
		return 127, false
	}
	// "xargs xargs xargs ... cmd" recurses once per word.
	if c.sh.guard.tooDeep() {
		c.sh.refuse(c.name)
		return 1, true
	}
	sub := *c
	sub.bufs = nil // the caller's buffers stay the caller's (see releaseBufs)
	sub.ctx = ctx
	sub.name, sub.args = name, argv[1:]
	sub.stdin = &ctxReader{ctx: ctx, r: in}
	if f, ok := in.(*os.File); ok && ctx != c.ctx {
		// Unblock a read from a pipe at the deadline, and make the pipe
		// readable again for what follows if only the deadline passed.
		// stop returning false means only that the deadline's function
		// has started, on a goroutine of its own: the reset waits for it
		// to be done, or it could set the past deadline after the reset,
		// and the next command would read nothing.
		set := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			defer close(set)
			f.SetReadDeadline(deadlinePassed)
		})
		defer func() {
			if !stop() {
				<-set
				if c.ctx.Err() == nil {
					f.SetReadDeadline(time.Time{})
				}
			}
		}()
	}
	return sub.run(), true
}

// errorf prints "name: message" on stderr; nothing once the call is
// stopped (a walk cut short by its deadline fails on every step left).
func (c *call) errorf(format string, args ...any) {
	if c.stopped() {
		return
	}
	fmt.Fprintf(c.stderr, c.name+": "+format+"\n", args...)
}

// stopped reports whether the call's context is done: the command is to
// stop at its next step, whatever it was doing.
func (c *call) stopped() bool { return c.ctx.Err() != nil }

// pollContext is a command's context in the guest: asking it whether it is
// done first asks the host (Options.Poll), which cancels the call's context
// if the host wants it stopped. Every check a command makes, in its loops
// and in the file walks, is then a check of the host's stop.
type pollContext struct {
	context.Context
	poll func()
}

func (c pollContext) Err() error {
	c.poll()
	return c.Context.Err()
}

// fail prints "name: arg: message" for err and returns status.
func (c *call) fail(status int, arg string, err error) int {
	c.errorf("%s: %s", arg, errText(err))
	return status
}

// usageError prints "name: message" and GNU's "Try" line; it returns
// status.
func (c *call) usageError(status int, format string, args ...any) int {
	c.errorf(format, args...)
	fmt.Fprintf(c.stderr, "Try '%s --help' for more information.\n", c.name)
	return status
}
