package shell

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
)

// A command is one of the programs the shell provides. It returns its exit
// status; it stops early, with any status, once c.ctx is done.
type command func(c *call) int

// commands maps names to implementations. Each file that defines
// commands adds them from an init function of its own (the commands refer to
// the map through env, which, etc., so it cannot be filled where it is
// declared).
var commands = make(map[string]command)

func init() {
	commands["basename"] = cmdBasename
	commands["bash"] = cmdBash
	commands["cat"] = cmdCat
	commands["cd"] = cmdCd
	commands["chmod"] = cmdChmod
	commands["command"] = cmdCommandV
	commands["cp"] = cmdCp
	commands["dirname"] = cmdDirname
	commands["echo"] = cmdEcho
	commands["env"] = cmdEnv
	commands["false"] = func(*call) int { return 1 }
	commands["find"] = cmdFind
	commands["grep"] = cmdGrep
	commands["head"] = cmdHead
	commands["ls"] = cmdLs
	commands["mkdir"] = cmdMkdir
	commands["mv"] = cmdMv
	commands["printf"] = cmdPrintf
	commands["pwd"] = cmdPwd
	commands["python"] = cmdPython
	commands["python3"] = cmdPython
	commands["rm"] = cmdRm
	commands["rmdir"] = cmdRmdir
	commands["seq"] = cmdSeq
	commands["sh"] = cmdBash
	commands["sleep"] = cmdSleep
	commands["sort"] = cmdSort
	commands["tail"] = cmdTail
	commands["tee"] = cmdTee
	commands["touch"] = cmdTouch
	commands["true"] = func(*call) int { return 0 }
	commands["type"] = cmdType
	commands["uniq"] = cmdUniq
	commands["wc"] = cmdWc
	commands["which"] = cmdWhich
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
	return c.run()
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

// writeFailed reports a failed write of the output and returns the status:
// a closed pipe ends the command quietly (as SIGPIPE would).
func (c *call) writeFailed(err error) int {
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) || errors.Is(err, io.ErrClosedPipe) {
		return 141
	}
	if c.ctx.Err() != nil {
		return 1
	}
	c.errorf("write error: %s", errText(err))
	return 1
}

// out returns a buffered stdout; the command calls flush at the end.
func (c *call) out() *bufio.Writer { return bufio.NewWriterSize(c.stdout, 32<<10) }

// flush flushes w and returns status, or the status of a write error.
func (c *call) flush(w *bufio.Writer, status int) int {
	if err := w.Flush(); err != nil {
		return c.writeFailed(err)
	}
	return status
}

// target resolves a path argument.
func (c *call) target(p string) (target, error) { return resolve(c.dir, p) }

// openInput opens an input operand: "-" and /dev/stdin are stdin, /dev/null
// is empty, anything else a regular file of the workspace. The returned
// closer is never nil.
func (c *call) openInput(p string) (io.Reader, func(), error) {
	if p == "-" {
		return c.stdin, func() {}, nil
	}
	t, err := c.target(p)
	if err != nil {
		return nil, nil, err
	}
	switch t.dev {
	case devStdin:
		return c.stdin, func() {}, nil
	case devNull, devStdout, devStderr:
		return strings.NewReader(""), func() {}, nil
	}
	f, err := c.sh.fs.open(c.ctx, t.rel)
	if err != nil {
		return nil, nil, err
	}
	return &ctxReader{ctx: c.ctx, r: f}, func() { f.Close() }, nil
}

// readAll reads r whole, refusing more than MaxFileBytes.
func (c *call) readAll(r io.Reader) ([]byte, error) {
	max := c.sh.fs.max
	if max > 0 {
		r = io.LimitReader(r, max+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if max > 0 && int64(len(data)) > max {
		return nil, fmt.Errorf("input over %d bytes: %w", max, errInputTooLarge)
	}
	return data, nil
}

var errInputTooLarge = errors.New("input too large")

// lineReader reads lines of at most MaxFileBytes bytes.
type lineReader struct {
	r   *bufio.Reader
	max int64
}

func (c *call) lines(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: c.sh.fs.max}
}

// next returns the next line without its newline, and whether it had one.
// At the end it returns io.EOF.
func (l *lineReader) next() (line []byte, nl bool, err error) {
	for {
		chunk, err := l.r.ReadSlice('\n')
		line = append(line, chunk...)
		if l.max > 0 && int64(len(line)) > l.max {
			return nil, false, fmt.Errorf("line over %d bytes: %w", l.max, errInputTooLarge)
		}
		switch {
		case err == nil:
			return line[:len(line)-1], true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return line, false, nil
		default:
			return nil, false, err
		}
	}
}

// deadlinePassed is a read deadline in the past.
var deadlinePassed = time.Unix(1, 0)

// ctxReader stops reading once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r *ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// exportedEnv lists the exported variables of env as "NAME=value", sorted.
func exportedEnv(env expand.Environ) []string {
	vars := map[string]expand.Variable{}
	env.Each(func(name string, vr expand.Variable) bool {
		vars[name] = vr // a later occurrence takes priority
		return true
	})
	var list []string
	for name, vr := range vars {
		// The interpreter sets PWD unexported; bash's is exported.
		if vr.IsSet() && (vr.Exported || name == "PWD") && vr.Kind == expand.String {
			list = append(list, name+"="+vr.Str)
		}
	}
	slices.Sort(list)
	return list
}

// opts are the parsed options of a command line.
type opts struct {
	flags map[byte]int
	vals  map[byte][]string
}

func (o opts) has(f byte) bool { return o.flags[f] > 0 }

// last returns the last value given to option f, or def.
func (o opts) last(f byte, def string) string {
	if v := o.vals[f]; len(v) > 0 {
		return v[len(v)-1]
	}
	return def
}

// getopt parses options in the GNU way: short flags may be grouped and may
// come after operands; "--" ends the options. bools are the flags without a
// value, withValue those taking one (-n 5 or -n5). long maps long options
// (without "--") to a short flag, or to 0 to accept and ignore them;
// "--name=value" gives a value.
func (c *call) getopt(args []string, bools, withValue string, long map[string]byte) (opts, []string, bool) {
	o := opts{flags: map[byte]int{}, vals: map[byte][]string{}}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			rest = append(rest, a)
			continue
		}
		if strings.HasPrefix(a, "--") {
			name, val, hasVal := strings.Cut(a[2:], "=")
			f, ok := long[name]
			if !ok {
				c.errorf("unrecognized option '%s'", a)
				return o, nil, false
			}
			switch {
			case f == 0:
			case strings.IndexByte(withValue, f) >= 0:
				if !hasVal {
					if i+1 >= len(args) {
						c.errorf("option '--%s' requires an argument", name)
						return o, nil, false
					}
					i++
					val = args[i]
				}
				o.vals[f] = append(o.vals[f], val)
			default:
				o.flags[f]++
			}
			continue
		}
		for j := 1; j < len(a); j++ {
			f := a[j]
			switch {
			case strings.IndexByte(bools, f) >= 0:
				o.flags[f]++
			case strings.IndexByte(withValue, f) >= 0:
				v := a[j+1:]
				if v == "" {
					if i+1 >= len(args) {
						c.errorf("option requires an argument -- '%c'", f)
						return o, nil, false
					}
					i++
					v = args[i]
				}
				o.vals[f] = append(o.vals[f], v)
				j = len(a)
			default:
				c.errorf("invalid option -- '%c'", f)
				return o, nil, false
			}
		}
	}
	return o, rest, true
}

// stat describes the workspace file t (never following a symbolic link).
func (c *call) lstat(t target) (fs.FileInfo, error) {
	if t.dev != "" {
		return devInfo{name: t.dev}, nil
	}
	return c.sh.fs.lstat(c.ctx, t.rel)
}
