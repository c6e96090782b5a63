package wasm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/codeport/codeport/internal/editor"
	"github.com/codeport/codeport/internal/hostmem"
	"github.com/codeport/codeport/internal/workspace"
	"github.com/codeport/codeport/port"
)

// adapter is the in-process driver: each session is a fresh CPython
// instance in wazero with its own workspace directory.
type adapter struct {
	cfg     Config
	metrics *metrics

	// ready is closed when the runtime is compiled (eng set) or failed
	// (engErr set).
	ready  chan struct{}
	eng    *engine
	engErr error

	sessionsDir    string
	ownSessionsDir bool
	claim          *workspace.Claim // this process's part of a configured sessions directory

	// hibDir holds hibernated sessions; hibLock locks a configured one.
	hibDir  string
	hibLock *os.File

	mu       sync.Mutex
	sessions map[string]*session
	slots    int // live sessions plus those being created

	// pool holds ready sandboxes; refill asks fillPool to top it up.
	pool chan *sandbox
	// spareDirs holds emptied sandbox directories for the next sandboxes
	// (see sandbox.discard).
	spareDirs chan string
	refill    chan struct{}
	// warm is closed once the pool first holds its size (WaitWarm).
	warm     chan struct{}
	warmOnce sync.Once

	stop     context.CancelFunc // ends the background goroutines
	bg       sync.WaitGroup
	stopOnce sync.Once
}

var (
	_ port.Driver   = (*adapter)(nil)
	_ port.Readier  = (*adapter)(nil)
	_ port.Admitter = (*adapter)(nil)
)

// New checks the configuration, then compiles the embedded interpreter and
// makes the image sessions start from in the background: New returns at
// once, the Port's Ready reports when sessions can start, and
// CreateSession waits for it. opts configure the portable layer (its
// observers; its log is the configuration's logger unless port.WithLogger
// names another).
func New(cfg Config, opts ...port.Option) (*port.Port, error) {
	a, err := newAdapter(cfg)
	if err != nil {
		return nil, err
	}
	return port.New(a, opts...), nil
}

func newAdapter(cfg Config) (*adapter, error) {
	if err := cfg.settings.Validate(); err != nil {
		return nil, err
	}
	py, err := cfg.settings.runtime()
	if err != nil {
		return nil, err
	}
	if cfg.settings.MaxSessions == 0 {
		// Resolved once: the limit published and enforced stays the same
		// for the adapter's life.
		b := hostmem.Read()
		cfg.settings.MaxSessions = cfg.settings.sessionLimit(b)
		cfg.logger.Info("max-sessions follows from memory", "max_sessions", cfg.settings.MaxSessions,
			"memory_bytes", b.Bytes, "from", b.Source, "memory_limit", cfg.settings.MemoryLimit)
	}
	a := &adapter{cfg: cfg, ready: make(chan struct{}), sessions: map[string]*session{},
		pool: make(chan *sandbox, cfg.settings.WarmPool), refill: make(chan struct{}, 1), warm: make(chan struct{}),
		spareDirs: make(chan string, spareSandboxDirs)}
	if cfg.registerer != nil {
		if a.metrics, err = newMetrics(cfg.registerer); err != nil {
			return nil, fmt.Errorf("register metrics: %w", err)
		}
	}
	a.sessionsDir = cfg.settings.SessionsDir
	if a.sessionsDir == "" {
		if a.sessionsDir, a.claim, err = workspace.DefaultDir("codeport-sessions-"); err != nil {
			return nil, err
		}
		a.ownSessionsDir = a.claim == nil
		logSweep(cfg.logger, a.claim)
	} else if a.claim, err = claimSessionsDir(cfg.settings.SessionsDir, cfg.logger); err != nil {
		return nil, err
	} else {
		a.sessionsDir = a.claim.Dir()
	}
	if cfg.settings.HibernateAfter > 0 || cfg.settings.HibernateDir != "" {
		if err := a.openHibernation(); err != nil {
			a.releaseDirs()
			return nil, err
		}
	}
	settleWazeroVersion()
	ctx, cancel := context.WithCancel(context.Background())
	a.stop = cancel
	a.bg.Add(3)
	go func() {
		defer a.bg.Done()
		t := time.Now()
		a.eng, a.engErr = newEngine(ctx, py, cfg.settings.CompilationCacheDir, cfg.settings.ImageCache, cfg.settings.MemoryLimit, cfg.settings.warmModules(py), !cfg.lazyShell, a.workspaceFigures(), cfg.logger)
		switch {
		case a.engErr != nil && ctx.Err() != nil:
			// Close stopped it (a server that could not listen closes
			// the port it had just opened): not a failure of the runtime.
			cfg.logger.Debug("wasm runtime start stopped: the adapter closed", "error", a.engErr)
			close(a.ready)
			return
		case a.engErr != nil:
			cfg.logger.Error("wasm runtime failed", "error", a.engErr)
			close(a.ready)
			return
		}
		cfg.logger.Info("wasm runtime ready", "compile_seconds", time.Since(t).Seconds())
		close(a.ready)
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
		if a.engErr != nil || cfg.settings.WarmPool == 0 {
			return
		}
		a.askRefill()
		a.fillPool(ctx)
	}()
	return a, nil
}

// Info implements port.Driver.
func (a *adapter) Info() port.DriverInfo {
	return port.DriverInfo{Name: "wasm", Logger: a.cfg.logger, Limits: a.cfg.settings.Limits(), StreamsOutput: true}
}

// Ready reports whether the runtime is compiled and sessions start without
// waiting.
func (a *adapter) Ready() bool {
	select {
	case <-a.ready:
		return a.engErr == nil
	default:
		return false
	}
}

// WaitReady waits until the runtime is compiled, and reports its failure.
func (a *adapter) WaitReady(ctx context.Context) error {
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

// CreateSession implements port.Driver.
func (a *adapter) CreateSession(ctx context.Context, req port.CreateSessionRequest) (port.Session, error) {
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
	a.sessions[s.id] = s
	a.mu.Unlock()
	a.metrics.SessionOpened()
	return s.handle(), nil
}

func (a *adapter) reserveSlot() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.slots >= a.cfg.settings.MaxSessions {
		return &port.CapacityError{Resource: "sessions", Limit: a.cfg.settings.MaxSessions, RetryAfter: a.cfg.settings.RetryAfter}
	}
	a.slots++
	return nil
}

// HasRoom implements port.Admitter: whether reserveSlot would succeed
// now, so that a restore at capacity is refused before its snapshot is
// read.
func (a *adapter) HasRoom() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.slots >= a.cfg.settings.MaxSessions {
		return &port.CapacityError{Resource: "sessions", Limit: a.cfg.settings.MaxSessions, RetryAfter: a.cfg.settings.RetryAfter}
	}
	return nil
}

func (a *adapter) releaseSlot() {
	a.mu.Lock()
	a.slots--
	a.mu.Unlock()
}

func (a *adapter) newSession(ctx context.Context, req port.CreateSessionRequest) (*session, error) {
	sb, err := a.takeSandbox(ctx)
	if err != nil {
		return nil, err
	}
	return a.sessionOver(sb, uuid.NewString(), req.IdleTimeout, req.MaxLifetime), nil
}

// sessionOver is a session, created now, over a sandbox: a new one's or a
// restored one's. The hints are clamped to the adapter's ceilings.
func (a *adapter) sessionOver(sb *sandbox, id string, idle, lifetime time.Duration) *session {
	now := time.Now()
	sctx, cancel := context.WithCancel(context.Background())
	s := &session{
		sandbox: sb,
		id:      id,
		editor:  a.newEditor(sb),
		created: now,
		idle:    a.cfg.settings.Limits().IdleTimeout(idle),
		// lifetime bounds the session from its creation.
		lifetime: a.cfg.settings.Limits().Lifetime(lifetime),
		ctx:      sctx, cancel: cancel,
	}
	s.lastActive.Store(now.UnixNano())
	return s
}

// newEditor is the text editor tool over a sandbox's workspace.
func (a *adapter) newEditor(sb *sandbox) *editor.Editor {
	return editor.New(sb.ws, editor.Options{
		MaxFileBytes:    a.cfg.settings.FileLimit,
		MaxHistoryBytes: min(a.cfg.settings.WorkspaceLimit, 64<<20),
		// A view is output, kept to the output limit as a call's is.
		MaxViewBytes: a.cfg.settings.OutputLimit,
	})
}

// workspaceFigures tells a session's interpreter what shutil.disk_usage
// reports: the workspace's byte limit and what a directory costs against
// it, as the session's quota (newSandboxDirs) charges them, in decimal.
func (a *adapter) workspaceFigures() string {
	dirBytes := int64(0)
	if a.cfg.settings.WorkspaceEntries > 0 {
		dirBytes = workspace.DirBytes
	}
	return strconv.FormatInt(max(a.cfg.settings.WorkspaceLimit, 0), 10) + " " + strconv.FormatInt(dirBytes, 10)
}

// startInterpreter makes an interpreter over a session's mounts, restored
// from the image.
func (a *adapter) startInterpreter(ctx context.Context, m mounts) (*interpreter, error) {
	t := time.Now()
	it, err := a.eng.start(ctx, m, a.workspaceFigures())
	if err != nil {
		return nil, err
	}
	a.metrics.InstanceStarted(time.Since(t).Seconds())
	return it, nil
}

// lookup finds a live session.
func (a *adapter) lookup(id string) (*session, error) {
	a.mu.Lock()
	s := a.sessions[id]
	a.mu.Unlock()
	if s == nil {
		return nil, fmt.Errorf("%w: %q", port.ErrSessionNotFound, id)
	}
	return s, nil
}

// Execute implements port.Driver.
func (a *adapter) Execute(ctx context.Context, id string, req port.ExecuteRequest) (port.Result, error) {
	s, err := a.lookup(id)
	if err != nil {
		return port.Result{}, err
	}
	if err := a.lockCall(ctx, s); err != nil {
		return port.Result{}, err
	}
	defer s.mu.Unlock()
	if s.gone.Load() {
		return port.Result{}, fmt.Errorf("%w: %q", port.ErrSessionNotFound, s.id)
	}
	if err := a.wake(ctx, s); err != nil {
		return port.Result{}, err
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

	res := port.Result{Tool: req.Tool}
	// A loss outside any call (a host step, a snapshot saved without the
	// memory) is this call's to report, whatever its tool.
	lost := s.lost
	s.ws.Changes().Reset() // what was written between calls is not this call's
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
	a.collectOutputs(s, &res)
	if lost != "" {
		res.StateLost = true
		res.Stderr = appendNote(res.Stderr, lostNote(lost))
		s.lost = ""
	}
	return res, nil
}

// lockCall takes s.mu for a call on s. A session held by another call is
// busy: the call is refused, not queued. A session held by a hibernation
// (the reaper saving it) is waited for, until ctx ends: the call then
// wakes it.
func (a *adapter) lockCall(ctx context.Context, s *session) error {
	for !s.mu.TryLock() {
		h := s.hibernating.Load()
		if h == nil {
			// The hibernation may have ended between the two looks.
			if s.mu.TryLock() {
				return nil
			}
			return fmt.Errorf("%w: session %s is running another call", port.ErrSessionBusy, s.id)
		}
		select {
		case <-*h:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (a *adapter) executeCode(ctx context.Context, s *session, req port.ExecuteRequest, res *port.Result) error {
	kind, display := byte(requestCell), a.cfg.settings.DisplayValues
	if req.DisplayValues != nil {
		display = *req.DisplayValues
	}
	if display {
		kind = requestDisplay
	}
	r, err := a.runPython(ctx, s, kind, req.Code, req.Timeout, req.OnOutput)
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
//
// out, when set, receives the output as the program writes it.
func (a *adapter) runPython(ctx context.Context, s *session, kind byte, payload string, timeout time.Duration, out func(port.Stream, []byte)) (cellResult, error) {
	if s.interp == nil {
		it, err := a.startInterpreter(ctx, s.mounts())
		if err != nil {
			return cellResult{}, err
		}
		s.interp = it
	}
	refusals, entryRefusals := s.quota.Refusals(), s.quota.EntryRefusals()
	if out != nil {
		s.interp.stdout.stream(func(b []byte) { out(port.Stdout, b) })
		s.interp.stderr.stream(func(b []byte) { out(port.Stderr, b) })
		defer s.interp.stdout.stream(nil)
		defer s.interp.stderr.stream(nil)
	}
	r := s.interp.run(ctx, kind, payload, timeout, int(a.cfg.settings.OutputLimit), a.cfg.settings.Limits().MemoryBytes)
	if s.quota.Refusals() != refusals {
		// WASI has no ENOSPC a host can return (the program saw EIO), so
		// the cause is told here.
		r.stderr = appendNote(r.stderr, a.cfg.settings.quotaNote(s.quota.EntryRefusals() != entryRefusals))
	}
	if r.dead {
		s.interp.kill()
		s.interp = nil
	}
	return r, nil
}

// DestroySession implements port.Driver. A call running in the session is
// stopped and awaited before the session's capacity is released.
func (a *adapter) DestroySession(_ context.Context, id string) error {
	a.mu.Lock()
	s := a.sessions[id]
	delete(a.sessions, id)
	a.mu.Unlock()
	if s == nil {
		return nil
	}
	a.finish(s)
	return nil
}

// finish stops a session taken out of the map and releases its slot.
func (a *adapter) finish(s *session) {
	if s.destroy() {
		a.metrics.Hibernated(-1)
	} else {
		a.releaseSlot()
	}
	a.metrics.SessionClosed()
}

// ListFiles implements port.Driver.
func (a *adapter) ListFiles(ctx context.Context, id, dir string) ([]port.FileInfo, error) {
	s, err := a.lookup(id)
	if err != nil {
		return nil, err
	}
	release, err := a.awake(ctx, s)
	if err != nil {
		return nil, err
	}
	defer release()
	s.touch()
	return s.ws.List(dir)
}

// GetFile implements port.Driver.
func (a *adapter) GetFile(ctx context.Context, id, path string) (io.ReadCloser, port.FileInfo, error) {
	s, err := a.lookup(id)
	if err != nil {
		return nil, port.FileInfo{}, err
	}
	release, err := a.awake(ctx, s)
	if err != nil {
		return nil, port.FileInfo{}, err
	}
	defer release()
	s.touch()
	return s.ws.Open(path)
}

// PutFile implements port.Driver.
func (a *adapter) PutFile(ctx context.Context, id, path string, r io.Reader) (port.FileInfo, error) {
	s, err := a.lookup(id)
	if err != nil {
		return port.FileInfo{}, err
	}
	release, err := a.awake(ctx, s)
	if err != nil {
		return port.FileInfo{}, err
	}
	defer release()
	s.touch()
	return s.ws.Write(path, r, a.cfg.settings.FileLimit)
}

// GetOutputFile implements port.Driver.
func (a *adapter) GetOutputFile(ctx context.Context, id, fileID string) (io.ReadCloser, port.FileInfo, error) {
	s, err := a.lookup(id)
	if err != nil {
		return nil, port.FileInfo{}, err
	}
	release, err := a.awake(ctx, s)
	if err != nil {
		return nil, port.FileInfo{}, err
	}
	defer release()
	s.touch()
	return s.outputs.Open(fileID)
}

// Describe implements port.Driver.
func (a *adapter) Describe(context.Context) (port.Capabilities, error) {
	return Capabilities(a.cfg.settings), nil
}

// Capabilities is the description of the runtime under settings s: what
// Describe reports, known without compiling or starting anything (so a
// host of the runtime in other processes describes it without waiting
// for one).
func Capabilities(s Settings) port.Capabilities {
	modules, lims := describeModules()
	// Settings that passed Validate name a runtime this build has; an
	// unknown profile is described as the default, with no packages.
	py, _ := s.runtime()
	return port.Capabilities{
		Backend:            "wasm",
		Runtime:            "CPython",
		RuntimeVersion:     RuntimeVersion,
		Tools:              []port.ToolKind{port.ToolCodeExecution, port.ToolBashCodeExecution, port.ToolTextEditorExecution},
		Packages:           slices.Clone(py.Packages),
		UnavailableModules: modules,
		Limitations:        append(append(lims, py.Limitations...), s.workspaceLimitation()),
		ShellCommands:      slices.Clone(shellCommands),
		OutputFiles:        true,
		InlineImages:       s.InlineImages,
		DisplaysValues:     s.DisplayValues,
		StreamsOutput:      true,
		Network:            false,
		WorkingDirectory:   workspace.GuestRoot,
		Limits:             s.Limits(),
	}
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
	{[]string{"ctypes", "curses", "fcntl", "grp", "mmap", "pty", "readline", "resource", "syslog", "termios", "tty"},
		"WebAssembly has no foreign functions and WASI no terminals, groups, signals or memory mapping"},
	{[]string{"ssl"}, "no OpenSSL; there is no network either"},
	{[]string{"ensurepip", "venv"}, "left out of the build: packages cannot be installed"},
	{[]string{"idlelib", "tkinter", "turtle", "turtledemo"}, "left out of the build: there is no display"},
}

// limitations are what the build cannot do though the modules import;
// TestLimitationsAreReal checks them.
var limitations = []string{
	"Threads and subprocesses cannot be started (threading, subprocess and multiprocessing import, but starting one raises an error)",
	"Permission bits: os.chmod, like the bash tool's chmod, never makes a file group- or world-writable, set-id or sticky (those bits are left off) and leaves a directory its owner's rwx; os.stat, os.lstat and os.DirEntry.stat report the bits, but os.fstat and a stat through dir_fd do not (WASI's file status has none); os.fchmod and os.lchmod are missing",
	"File descriptors cannot be duplicated (os.dup raises OSError; os has no dup2): pytest runs with its defaults but captures output at the sys level (capsys works, capfd does not)",
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

// Close destroys every session, stops the background work and waits for
// it. The Port calls it once no call is in flight.
func (a *adapter) Close() error {
	var err error
	a.stopOnce.Do(func() {
		a.mu.Lock()
		live := make([]*session, 0, len(a.sessions))
		for id, s := range a.sessions {
			live = append(live, s)
			delete(a.sessions, id)
		}
		a.mu.Unlock()
		// The background work (the reaper, the pool, a start of the
		// runtime still under way) ends first: nothing hibernates or
		// reclaims a session under what follows.
		a.stop()
		a.bg.Wait()
		if a.hibLock != nil {
			// Sessions kept for the next start: saved, not destroyed. A
			// session that could not be saved is destroyed below; one
			// already asleep (perhaps since a previous process) is left
			// as it is, even when the runtime never became ready.
			if a.engErr == nil {
				a.hibernateAll(live)
			}
			awake := live[:0]
			for _, s := range live {
				if !s.asleep.Load() {
					awake = append(awake, s)
				} else {
					s.cancel()
				}
			}
			live = awake
		}
		var wg sync.WaitGroup
		for _, s := range live {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a.finish(s)
			}()
		}
		wg.Wait()
		if a.eng != nil {
			err = a.eng.close(context.Background())
		}
		a.removeSpareDirs()
		err = errors.Join(err, a.releaseDirs())
	})
	return err
}

// releaseDirs removes the sessions directory the adapter made, releases
// its part of a configured one, and unlocks the hibernation directory.
func (a *adapter) releaseDirs() error {
	var err error
	if a.ownSessionsDir {
		err = errors.Join(err, os.RemoveAll(a.sessionsDir))
	}
	if a.claim != nil {
		err = errors.Join(err, a.claim.Release())
	}
	if a.hibLock != nil {
		err = errors.Join(err, a.hibLock.Close())
	}
	return err
}

// reap reclaims sessions left idle past their idle timeout or alive past
// their maximum lifetime.
func (a *adapter) reap(ctx context.Context) {
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
			a.hibernateIdle(ctx, now)
		}
	}
}
