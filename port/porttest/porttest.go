package porttest

import (
	"context"
	"fmt"
	"time"

	"github.com/codeport/codeport/port"
)

// Executor runs a code_execution or bash_code_execution call in place of
// an interpreter or a shell. s is the session the call runs in, with its
// files; req is the request as the Port completed it (tool use id set,
// timeout resolved).
//
// The Result goes back through the Port as a backend's would: Tool and
// ToolUseID are filled in, an empty Outcome becomes OutcomeCompleted for
// return code 0 and OutcomeProgramError otherwise, Duration is measured if
// left zero, and output over Limits.OutputBytes is truncated with a notice.
// ctx ends at the call's deadline (req.Timeout) or when the caller gives
// up, the session is destroyed or the Port is closed: an executor that
// stops then returns ctx.Err() with the output it had so far, and the call
// is reported as timed out or cancelled, as a real backend reports a
// program it stopped. Any other error is the call's error (return the
// sentinels of package port). Returning OutcomeSessionLost ends the
// session, as a crashed worker would.
//
// An executor is called for one call at a time per session, but for
// several sessions at once.
type Executor func(ctx context.Context, s Session, req port.ExecuteRequest) (port.Result, error)

// Option configures the fake.
type Option func(*config)

type config struct {
	limits     port.Limits
	executors  map[port.ToolKind]Executor
	now        func() time.Time
	retryAfter time.Duration
	problems   []string // reported by NewDriver
}

// DefaultLimits are the limits of a fake made without WithLimits: those of
// the wasm adapter's defaults that a fake can keep (30 s per call, at most
// 300 s; 1 MiB of output per stream and of source; 100 MiB of workspace
// and 50 MiB per file per session; 64 sessions; 10 minutes idle, hints up
// to an hour, an hour of life), so that a gateway tested against the fake
// meets the limits of a default deployment. MemoryBytes is zero: nothing
// here measures memory.
func DefaultLimits() port.Limits {
	return port.Limits{
		DefaultTimeout:     30 * time.Second,
		MaxTimeout:         300 * time.Second,
		OutputBytes:        1 << 20,
		SourceBytes:        1 << 20,
		WorkspaceBytes:     100 << 20,
		FileBytes:          50 << 20,
		MaxSessions:        64,
		DefaultIdleTimeout: 10 * time.Minute,
		MaxIdleTimeout:     time.Hour,
		MaxLifetime:        time.Hour,
	}
}

// WithLimits replaces every limit, one set by an earlier WithMaxSessions
// included (a zero field means no limit of that kind).
// They are enforced as a real adapter enforces them: by the Port
// (SourceBytes, the editor's FileBytes, the timeouts) or by the fake
// (MaxSessions, WorkspaceBytes, FileBytes of uploads, OutputBytes of an
// Executor's output, the session lifetimes), and Describe reports them.
// MemoryBytes is reported but not enforced.
func WithLimits(l port.Limits) Option {
	return func(c *config) { c.limits = l }
}

// WithMaxSessions sets Limits.MaxSessions: how many sessions may be live at
// once (0 for no limit). The next CreateSession is refused with a
// *port.CapacityError.
func WithMaxSessions(n int) Option {
	return func(c *config) { c.limits.MaxSessions = n }
}

// WithExecutor offers the given tool kinds, code_execution or
// bash_code_execution or both (code_execution when none is given), and
// runs their calls with fn. Without an executor for a kind, Describe does
// not list it and the Port refuses it with port.ErrUnsupportedTool, as a
// backend without it would. The editor is built in (the real adapters'
// own) and cannot be replaced.
func WithExecutor(fn Executor, kinds ...port.ToolKind) Option {
	return func(c *config) {
		if fn == nil {
			c.problems = append(c.problems, "WithExecutor: nil executor")
			return
		}
		if len(kinds) == 0 {
			kinds = []port.ToolKind{port.ToolCodeExecution}
		}
		for _, k := range kinds {
			if k != port.ToolCodeExecution && k != port.ToolBashCodeExecution {
				c.problems = append(c.problems, fmt.Sprintf("WithExecutor: %q is not code_execution or bash_code_execution", k))
				continue
			}
			c.executors[k] = fn
		}
	}
}

// WithClock makes the fake read the time from now: the sessions' creation
// and activity times, file times, and when idle and expired sessions are
// reclaimed. With a clock the test advances, reclamation is tested without
// waiting. Durations of calls are measured on the real clock.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.now = now
		}
	}
}

// New returns a port served by a fake made with opts: the Port every
// adapter is served through (port.New), over NewDriver. It panics when the
// options are inconsistent, which is a mistake in the test.
func New(opts ...Option) *port.Port {
	return port.New(NewDriver(opts...))
}

func newConfig(opts []Option) config {
	c := config{limits: DefaultLimits(), executors: map[port.ToolKind]Executor{}, now: time.Now, retryAfter: time.Second}
	for _, opt := range opts {
		if opt != nil {
			opt(&c)
		}
	}
	l := c.limits
	if l.DefaultTimeout < 0 || l.MaxTimeout < 0 || l.MemoryBytes < 0 || l.OutputBytes < 0 || l.SourceBytes < 0 ||
		l.WorkspaceBytes < 0 || l.FileBytes < 0 || l.MaxSessions < 0 || l.DefaultIdleTimeout < 0 ||
		l.MaxIdleTimeout < 0 || l.MaxLifetime < 0 {
		c.problems = append(c.problems, "a limit is negative")
	}
	if l.MaxTimeout > 0 && l.DefaultTimeout > l.MaxTimeout {
		c.problems = append(c.problems, "the default timeout is above the maximum")
	}
	if l.MaxIdleTimeout > 0 && l.DefaultIdleTimeout > l.MaxIdleTimeout {
		c.problems = append(c.problems, "the default idle timeout is above the maximum")
	}
	return c
}

// tools lists the kinds offered, in the contract's order.
func (c *config) tools() []port.ToolKind {
	var tools []port.ToolKind
	for _, k := range []port.ToolKind{port.ToolCodeExecution, port.ToolBashCodeExecution} {
		if c.executors[k] != nil {
			tools = append(tools, k)
		}
	}
	return append(tools, port.ToolTextEditorExecution)
}

// Info implements port.Driver: the Port refuses the kinds not offered and
// enforces the limits that are its to enforce.
func (d *Driver) Info() port.DriverInfo {
	return port.DriverInfo{Name: "porttest", Limits: d.cfg.limits, Tools: d.cfg.tools()}
}

// Describe implements port.Driver. It says what the fake is: no
// interpreter runs, so it promises no packages and no network, and lists
// only the tool kinds it runs.
func (d *Driver) Describe(context.Context) (port.Capabilities, error) {
	lim := "No interpreter runs here: this is porttest's in-memory fake, whose workspace and text editor are real"
	if len(d.cfg.executors) > 0 {
		lim += "; code_execution and bash_code_execution, where offered, run the test's executor"
	}
	return port.Capabilities{
		Backend:          "porttest",
		Runtime:          "none",
		Tools:            d.cfg.tools(),
		Limitations:      []string{lim},
		OutputFiles:      true,
		Network:          false,
		WorkingDirectory: guestRoot,
		Limits:           d.cfg.limits,
	}, nil
}
