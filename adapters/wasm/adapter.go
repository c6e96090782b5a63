package wasm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/codeport/codeport/internal/bytesize"
	"github.com/codeport/codeport/internal/editor"
	"github.com/codeport/codeport/internal/telemetry"
	"github.com/codeport/codeport/internal/workspace"
	"github.com/codeport/codeport/port"
)

// Adapter is the in-process CodeExecutionPort: each session is a fresh
// CPython instance in wazero with its own workspace directory.
type Adapter struct {
	cfg     Config
	metrics *telemetry.Metrics

	// ready is closed when the runtime is compiled (eng set) or failed
	// (engErr set).
	ready  chan struct{}
	eng    *engine
	engErr error

	sessionsDir    string
	ownSessionsDir bool

	mu       sync.Mutex
	sessions map[string]*session
	slots    int // live sessions plus those being created
	closed   bool

	// pool holds ready sandboxes; refill asks fillPool to top it up.
	pool   chan *sandbox
	refill chan struct{}
	// warm is closed once the pool first holds its size (WaitWarm).
	warm     chan struct{}
	warmOnce sync.Once

	stop     context.CancelFunc // ends the background goroutines
	bg       sync.WaitGroup
	stopOnce sync.Once
}

var _ port.CodeExecutionPort = (*Adapter)(nil)

// New checks the configuration, then compiles the embedded interpreter and
// makes the image sessions start from in the background: New returns at
// once, Ready reports when sessions can start, and CreateSession waits for
// it.
func New(cfg Config) (*Adapter, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var err error
	a := &Adapter{cfg: cfg, ready: make(chan struct{}), sessions: map[string]*session{},
		pool: make(chan *sandbox, cfg.poolSize), refill: make(chan struct{}, 1), warm: make(chan struct{})}
	if cfg.registerer != nil {
		if a.metrics, err = telemetry.New(cfg.registerer); err != nil {
			return nil, fmt.Errorf("register metrics: %w", err)
		}
	}
	a.sessionsDir = cfg.sessionsDir
	if a.sessionsDir == "" {
		if a.sessionsDir, err = os.MkdirTemp("", "codeport-sessions-"); err != nil {
			return nil, fmt.Errorf("sessions directory: %w", err)
		}
		a.ownSessionsDir = true
	} else if err := os.MkdirAll(a.sessionsDir, 0o700); err != nil {
		return nil, fmt.Errorf("sessions directory: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.stop = cancel
	a.bg.Add(3)
	go func() {
		defer a.bg.Done()
		defer close(a.ready)
		t := time.Now()
		a.eng, a.engErr = newEngine(ctx, cfg.compileCache, cfg.memoryBytes, cfg.warmModules, cfg.logger)
		if a.engErr == nil {
			cfg.logger.Info("wasm runtime ready", "compile_seconds", time.Since(t).Seconds())
		} else {
			cfg.logger.Error("wasm runtime failed", "error", a.engErr)
		}
	}()
	go func() {
		defer a.bg.Done()
		a.reap(ctx)
	}()
	go func() {
		defer a.bg.Done()
		select {
		case <-a.ready:
		case <-ctx.Done():
			return
		}
		if a.engErr != nil || cfg.poolSize == 0 {
			return
		}
		a.askRefill()
		a.fillPool(ctx)
	}()
	return a, nil
}

func (c Config) validate() error {
	bad := func(what string) error { return fmt.Errorf("wasm adapter config: %s", what) }
	switch {
	case c.defaultTimeout <= 0 || c.maxTimeout <= 0:
		return bad("timeouts must be positive")
	case c.defaultTimeout > c.maxTimeout:
		return bad("default timeout above the maximum")
	case c.memoryBytes < minMemoryBytes:
		return bad(fmt.Sprintf("memory limit below %s (the interpreter starts with 20 MiB)", bytesize.Format(minMemoryBytes)))
	case c.memoryBytes > 4<<30:
		return bad("memory limit above 4 GiB (wasm32 addresses 4 GiB)")
	case c.outputBytes <= 0 || c.sourceBytes <= 0 || c.workspaceBytes <= 0 || c.fileBytes <= 0:
		return bad("output, source, workspace and file limits must be positive")
	case c.maxSessions <= 0:
		return bad("max sessions must be positive")
	case c.defaultIdle <= 0 || c.maxIdle <= 0 || c.maxLifetime <= 0:
		return bad("session lifetimes must be positive")
	case c.defaultIdle > c.maxIdle:
		return bad("default idle timeout above the maximum")
	case c.poolSize < 0 || c.poolRefill < 0:
		return bad("warm pool size and refill must be 0 or more")
	}
	return nil
}

// Ready reports whether the runtime is compiled and sessions start without
// waiting.
func (a *Adapter) Ready() bool {
	select {
	case <-a.ready:
		return a.engErr == nil
	default:
		return false
	}
}

// WaitReady waits until the runtime is compiled, and reports its failure.
func (a *Adapter) WaitReady(ctx context.Context) error {
	select {
	case <-a.ready:
		if a.engErr != nil {
			return fmt.Errorf("%w: %w", port.ErrRuntimeFailure, a.engErr)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// CreateSession implements port.CodeExecutionPort.
func (a *Adapter) CreateSession(ctx context.Context, req port.CreateSessionRequest) (port.Session, error) {
	if req.IdleTimeout < 0 || req.MaxLifetime < 0 {
		return port.Session{}, fmt.Errorf("%w: lifetime hints must be positive", port.ErrInvalidRequest)
	}
	if err := a.WaitReady(ctx); err != nil {
		return port.Session{}, err
	}
	if err := a.reserveSlot(); err != nil {
		return port.Session{}, err
	}
	s, err := a.newSession(ctx, req)
	if err != nil {
		a.releaseSlot()
		return port.Session{}, err
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		s.destroy()
		a.releaseSlot()
		return port.Session{}, fmt.Errorf("%w: adapter closed", port.ErrRuntimeFailure)
	}
	a.sessions[s.id] = s
	a.mu.Unlock()
	a.metrics.SessionOpened()
	a.cfg.logger.Info("session created", "session", s.id)
	return s.handle(), nil
}

func (a *Adapter) reserveSlot() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return fmt.Errorf("%w: adapter closed", port.ErrRuntimeFailure)
	}
	if a.slots >= a.cfg.maxSessions {
		return &port.CapacityError{Resource: "sessions", Limit: a.cfg.maxSessions, RetryAfter: a.cfg.retryAfter}
	}
	a.slots++
	return nil
}

func (a *Adapter) releaseSlot() {
	a.mu.Lock()
	a.slots--
	a.mu.Unlock()
}

func (a *Adapter) newSession(ctx context.Context, req port.CreateSessionRequest) (*session, error) {
	sb, err := a.takeSandbox(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	sctx, cancel := context.WithCancel(context.Background())
	s := &session{
		sandbox: sb,
		id:      uuid.NewString(),
		editor: editor.New(sb.ws, editor.Options{
			MaxFileBytes:    a.cfg.fileBytes,
			MaxHistoryBytes: min(a.cfg.workspaceBytes, 64<<20),
		}),
		created: now,
		idle:    clampHint(req.IdleTimeout, a.cfg.defaultIdle, a.cfg.maxIdle),
		// lifetime bounds the session from its creation.
		lifetime: clampHint(req.MaxLifetime, a.cfg.maxLifetime, a.cfg.maxLifetime),
		ctx:      sctx, cancel: cancel,
	}
	s.lastActive.Store(now.UnixNano())
	s.shell = a.newShell(s)
	return s, nil
}

// clampHint applies a lifetime hint: none gives def, and a hint is clamped
// down to ceiling, never up.
func clampHint(hint, def, ceiling time.Duration) time.Duration {
	if hint <= 0 {
		return def
	}
	return min(hint, ceiling)
}

// startInterpreter makes an interpreter over a session's directories,
// restored from the image.
func (a *Adapter) startInterpreter(ctx context.Context, workDir, tmpDir string, quota *workspace.Quota) (*interpreter, error) {
	t := time.Now()
	it, err := a.eng.start(ctx, workDir, tmpDir, quota)
	if err != nil {
		return nil, err
	}
	a.metrics.InstanceStarted(time.Since(t).Seconds())
	return it, nil
}

// lookup finds a live session.
func (a *Adapter) lookup(id string) (*session, error) {
	a.mu.Lock()
	s := a.sessions[id]
	a.mu.Unlock()
	if s == nil {
		return nil, fmt.Errorf("%w: %q", port.ErrSessionNotFound, truncateID(id))
	}
	return s, nil
}

// truncateID keeps error messages bounded whatever id a caller sends.
func truncateID(id string) string {
	if len(id) > 64 {
		id = id[:64] + "..."
	}
	return id
}

// Execute implements port.CodeExecutionPort.
func (a *Adapter) Execute(ctx context.Context, id string, req port.ExecuteRequest) (port.Result, error) {
	if err := a.validate(&req); err != nil {
		return port.Result{}, err
	}
	s, err := a.lookup(id)
	if err != nil {
		return port.Result{}, err
	}
	if !s.mu.TryLock() {
		return port.Result{}, fmt.Errorf("%w: session %s is running another call", port.ErrSessionBusy, s.id)
	}
	defer s.mu.Unlock()
	if s.gone {
		return port.Result{}, fmt.Errorf("%w: %q", port.ErrSessionNotFound, s.id)
	}
	s.busy.Store(true)
	s.touch()
	defer func() {
		s.touch()
		s.busy.Store(false)
	}()

	// The call ends early when the caller gives up or the session is
	// destroyed under it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()

	res := port.Result{ToolUseID: req.ToolUseID, Tool: req.Tool}
	switch req.Tool {
	case port.ToolCodeExecution:
		if err := a.executeCode(ctx, s, req, &res); err != nil {
			return port.Result{}, err
		}
	case port.ToolTextEditorExecution:
		t := time.Now()
		out, err := s.editor.Run(*req.Editor)
		if err != nil {
			return port.Result{}, err
		}
		res.Stdout, res.Stderr, res.ReturnCode = out.Stdout, out.Stderr, out.ReturnCode
		res.Duration = time.Since(t)
		res.Outcome = port.OutcomeCompleted
		if out.ReturnCode != 0 {
			res.Outcome = port.OutcomeProgramError
		}
	case port.ToolBashCodeExecution:
		if err := a.executeBash(ctx, s, req, &res); err != nil {
			return port.Result{}, err
		}
	}
	a.metrics.Executed(string(req.Tool), string(res.Outcome), res.Duration.Seconds())
	a.cfg.logger.Info("executed", "session", s.id, "tool", req.Tool, "outcome", res.Outcome,
		"return_code", res.ReturnCode, "duration_ms", res.Duration.Milliseconds(), "state_lost", res.StateLost)
	return res, nil
}

func (a *Adapter) executeCode(ctx context.Context, s *session, req port.ExecuteRequest, res *port.Result) error {
	r, err := a.runPython(ctx, s, requestCell, req.Code, a.clampTimeout(req.Timeout))
	if err != nil {
		return err
	}
	res.Stdout, res.Stderr, res.ReturnCode = r.stdout, r.stderr, r.returnCode
	res.Outcome, res.Duration = r.outcome, r.duration
	res.OutputTruncated, res.StateLost = r.truncated, r.dead
	return nil
}

// runPython runs one driver request in the session's interpreter, for a
// code_execution cell or a python command of the bash tool alike: it starts
// a fresh interpreter if the last one was lost (its loss was reported with
// the call that lost it), discards one that dies, and explains a write the
// workspace quota refused. The caller serialises calls on the session.
func (a *Adapter) runPython(ctx context.Context, s *session, kind byte, payload string, timeout time.Duration) (cellResult, error) {
	if s.interp == nil {
		it, err := a.startInterpreter(ctx, s.ws.Root(), s.tmpDir, s.quota)
		if err != nil {
			return cellResult{}, err
		}
		s.interp = it
	}
	refusals := s.quota.Refusals()
	r := s.interp.run(ctx, kind, payload, timeout, a.cfg.outputBytes, a.cfg.Limits().MemoryBytes)
	if s.quota.Refusals() != refusals {
		// WASI has no ENOSPC a host can return (the program saw EIO), so
		// the cause is told here.
		r.stderr = appendNote(r.stderr, fmt.Sprintf("[codeport: a write was refused because the session's files reached the workspace limit of %s]", bytesize.Format(a.cfg.workspaceBytes)))
	}
	if r.dead {
		s.interp.kill()
		s.interp = nil
	}
	return r, nil
}

// clampTimeout applies the default to a call that asks for no timeout and
// clamps one above the ceiling: clamped, not refused.
func (a *Adapter) clampTimeout(d time.Duration) time.Duration {
	return port.Limits{DefaultTimeout: a.cfg.defaultTimeout, MaxTimeout: a.cfg.maxTimeout}.Timeout(d)
}

// validate checks a request before any session is touched, and fills the
// tool use id.
func (a *Adapter) validate(req *port.ExecuteRequest) error {
	if !req.Tool.Known() {
		return fmt.Errorf("%w: %q (this backend runs code_execution, bash_code_execution and text_editor_code_execution)", port.ErrUnsupportedTool, truncateID(string(req.Tool)))
	}
	if req.Timeout < 0 {
		return fmt.Errorf("%w: timeout must be positive", port.ErrInvalidRequest)
	}
	switch req.Tool {
	case port.ToolCodeExecution:
		if req.Code == "" {
			return fmt.Errorf("%w: code_execution needs input.code", port.ErrInvalidRequest)
		}
		if len(req.Code) > a.cfg.sourceBytes {
			return fmt.Errorf("%w: code is %d bytes; the limit is %d", port.ErrInvalidRequest, len(req.Code), a.cfg.sourceBytes)
		}
		if !utf8.ValidString(req.Code) {
			return fmt.Errorf("%w: code is not valid UTF-8", port.ErrInvalidRequest)
		}
	case port.ToolBashCodeExecution:
		if req.Command == "" {
			return fmt.Errorf("%w: bash_code_execution needs input.command", port.ErrInvalidRequest)
		}
		if len(req.Command) > a.cfg.sourceBytes {
			return fmt.Errorf("%w: command is %d bytes; the limit is %d", port.ErrInvalidRequest, len(req.Command), a.cfg.sourceBytes)
		}
	case port.ToolTextEditorExecution:
		if req.Editor == nil {
			return fmt.Errorf("%w: text_editor_code_execution needs input", port.ErrInvalidRequest)
		}
		if req.Editor.FileText != nil && int64(len(*req.Editor.FileText)) > a.cfg.fileBytes {
			return fmt.Errorf("%w: file_text is %d bytes; the limit is %d", port.ErrFileTooLarge, len(*req.Editor.FileText), a.cfg.fileBytes)
		}
	}
	if req.ToolUseID == "" {
		req.ToolUseID = "srvtoolu_" + uuid.NewString()
	}
	return nil
}

// DestroySession implements port.CodeExecutionPort. A call running in the
// session is stopped and awaited before the session's capacity is
// released.
func (a *Adapter) DestroySession(_ context.Context, id string) error {
	a.mu.Lock()
	s := a.sessions[id]
	delete(a.sessions, id)
	a.mu.Unlock()
	if s == nil {
		return nil
	}
	a.finish(s)
	a.cfg.logger.Info("session destroyed", "session", id)
	return nil
}

// finish stops a session taken out of the map and releases its slot.
func (a *Adapter) finish(s *session) {
	s.destroy()
	a.releaseSlot()
	a.metrics.SessionClosed()
}

// ListFiles implements port.CodeExecutionPort.
func (a *Adapter) ListFiles(_ context.Context, id, dir string) ([]port.FileInfo, error) {
	s, err := a.lookup(id)
	if err != nil {
		return nil, err
	}
	s.touch()
	return s.ws.List(dir)
}

// GetFile implements port.CodeExecutionPort.
func (a *Adapter) GetFile(_ context.Context, id, path string) (io.ReadCloser, port.FileInfo, error) {
	s, err := a.lookup(id)
	if err != nil {
		return nil, port.FileInfo{}, err
	}
	s.touch()
	return s.ws.Open(path)
}

// PutFile implements port.CodeExecutionPort.
func (a *Adapter) PutFile(_ context.Context, id, path string, r io.Reader) (port.FileInfo, error) {
	s, err := a.lookup(id)
	if err != nil {
		return port.FileInfo{}, err
	}
	s.touch()
	return s.ws.Write(path, r, a.cfg.fileBytes)
}

// Describe implements port.CodeExecutionPort.
func (a *Adapter) Describe(context.Context) (port.Capabilities, error) {
	modules, lims := describeModules()
	return port.Capabilities{
		Backend:            "wasm",
		Runtime:            "CPython",
		RuntimeVersion:     RuntimeVersion,
		Tools:              []port.ToolKind{port.ToolCodeExecution, port.ToolBashCodeExecution, port.ToolTextEditorExecution},
		UnavailableModules: modules,
		Limitations:        lims,
		Network:            false,
		WorkingDirectory:   workspace.GuestRoot,
		Limits:             a.cfg.Limits(),
	}, nil
}

// missingModules are the standard-library modules this CPython build
// lacks, grouped by why: Describe lists the modules and states each reason
// as a limitation, so the two cannot drift apart. Measured against the
// embedded runtime (TestUnavailableModulesAreReallyUnavailable keeps the
// list honest); Windows-only modules are not listed.
var missingModules = []struct {
	modules []string
	why     string
}{
	{[]string{"ctypes", "curses", "fcntl", "grp", "mmap", "pty", "pwd", "readline", "resource", "syslog", "termios", "tty"},
		"WebAssembly has no foreign functions and WASI no terminals, users, signals or memory mapping"},
	{[]string{"ssl"}, "no OpenSSL; there is no network either"},
	{[]string{"ensurepip", "venv"}, "left out of the build: packages cannot be installed"},
	{[]string{"idlelib", "tkinter", "turtle", "turtledemo"}, "left out of the build: there is no display"},
}

// limitations are what the build cannot do though the modules import;
// TestLimitationsAreReal checks them.
var limitations = []string{
	"Threads and subprocesses cannot be started (threading, subprocess and multiprocessing import, but starting one raises an error)",
}

// describeModules returns the unavailable modules, sorted, and the
// limitations with one line per reason a module is missing.
func describeModules() (modules, lims []string) {
	lims = append(lims, limitations...)
	for _, m := range missingModules {
		modules = append(modules, m.modules...)
		lims = append(lims, fmt.Sprintf("Missing (%s): %s", m.why, strings.Join(m.modules, ", ")))
	}
	slices.Sort(modules)
	return modules, lims
}

// Close destroys every session, stops the background work and waits for it.
func (a *Adapter) Close() error {
	var err error
	a.stopOnce.Do(func() {
		a.mu.Lock()
		a.closed = true
		live := make([]*session, 0, len(a.sessions))
		for id, s := range a.sessions {
			live = append(live, s)
			delete(a.sessions, id)
		}
		a.mu.Unlock()
		var wg sync.WaitGroup
		for _, s := range live {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a.finish(s)
			}()
		}
		wg.Wait()
		a.stop()
		a.bg.Wait()
		if a.eng != nil {
			err = a.eng.close(context.Background())
		}
		if a.ownSessionsDir {
			err = errors.Join(err, os.RemoveAll(a.sessionsDir))
		}
	})
	return err
}

// reap reclaims sessions left idle past their idle timeout or alive past
// their maximum lifetime.
func (a *Adapter) reap(ctx context.Context) {
	t := time.NewTicker(a.cfg.reapInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			var victims []*session
			var reasons []string
			a.mu.Lock()
			for id, s := range a.sessions {
				reason := s.expired(now)
				if reason == "" {
					continue
				}
				delete(a.sessions, id)
				victims = append(victims, s)
				reasons = append(reasons, reason)
			}
			a.mu.Unlock()
			for i, s := range victims {
				a.finish(s)
				a.metrics.Reclaimed(reasons[i])
				a.cfg.logger.Info("session reclaimed", "session", s.id, "reason", reasons[i])
			}
		}
	}
}
