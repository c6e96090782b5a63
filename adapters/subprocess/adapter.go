package subprocess

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/internal/hostmem"
	"github.com/codeport/codeport/internal/workspace"
	"github.com/codeport/codeport/port"
)

// adapter is the driver whose sessions live in worker processes. It never
// runs user code itself.
type adapter struct {
	cfg         Config
	metrics     *metrics
	cgroups     cgroups
	sessionsDir string
	ownDir      bool
	claim       *workspace.Claim // this process's part of a configured sessions directory
	nextID      atomic.Int64

	mu       sync.Mutex
	workers  []*worker // alive or starting, not yet accounted as ended
	starting int       // workers being started (counted against max)
	// warming counts the filler's starts among them, and warmed is closed
	// (and replaced) as each ends: a caller that finds every slot taken
	// by a worker the filler is starting waits for it rather than being
	// refused for a slot that is about to open.
	warming int
	warmed  chan struct{}
	// started says a worker has started at least once; until one has,
	// startErr is the filler's last failure to start one, which
	// WaitReady reports (a configuration no worker can start under,
	// such as a worker-memory-limit below what a worker needs, would
	// otherwise keep it waiting for ever).
	started  bool
	startErr error
	sessions map[string]*session
	closed   bool // set by Close, for the background work

	wake chan struct{} // asks the filler to top up the idle workers
	// shellCached is closed once the bash tool's shell is in the
	// compilation cache (or could not be put there): part of being
	// ready, so that a worker's first bash call loads it.
	shellCached chan struct{}
	stop        context.CancelFunc
	bg          sync.WaitGroup
}

// session is a session as the parent knows it: where it lives and when
// it ends.
type session struct {
	id       string
	w        *worker
	info     port.Session
	busy     int // calls and file operations in flight
	lastUsed time.Time
	// shellUp is set once a bash call has returned: the session's shell
	// is started in its worker (see Execute).
	shellUp bool
}

var (
	_ port.Driver      = (*adapter)(nil)
	_ port.Readier     = (*adapter)(nil)
	_ port.Snapshotter = (*adapter)(nil)
)

// New starts the adapter: it starts the minimum of workers in the
// background (the first alone, so that it fills the compilation cache the
// others then read) and returns at once. opts configure the portable
// layer (its observers; its log is the configuration's logger unless
// port.WithLogger names another).
func New(cfg Config, opts ...port.Option) (*port.Port, error) {
	a, err := newAdapter(cfg)
	if err != nil {
		return nil, err
	}
	return port.New(a, opts...), nil
}

func newAdapter(cfg Config) (*adapter, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.settings.MaxSessions == 0 {
		b := hostmem.Read() // once, as the wasm adapter does
		cfg.settings.MaxSessions = cfg.sessionLimit(b)
		cfg.logger.Info("max-sessions follows from memory", "max_sessions", cfg.settings.MaxSessions,
			"memory_bytes", b.Bytes, "from", b.Source, "worker_memory_limit", cfg.dataLimit())
	}
	a := &adapter{cfg: cfg, sessions: map[string]*session{}, wake: make(chan struct{}, 1), warmed: make(chan struct{}), shellCached: make(chan struct{})}
	var err error
	if a.metrics, err = newMetrics(cfg.registerer); err != nil {
		return nil, err
	}
	// Workers killed with their parent (kill -9 of the server) leave their
	// sessions' files: remove those of processes that are gone, and keep
	// this process's workers apart from any live one's.
	a.sessionsDir = cfg.settings.SessionsDir
	if a.sessionsDir == "" {
		if a.sessionsDir, a.claim, err = workspace.DefaultDir("codeport-workers-"); err != nil {
			return nil, err
		}
		a.ownDir = a.claim == nil
	} else {
		if a.claim, err = workspace.ClaimDir(a.sessionsDir); err != nil {
			return nil, err
		}
		a.sessionsDir = a.claim.Dir()
	}
	if a.claim != nil {
		if a.claim.Swept() > 0 {
			cfg.logger.Info("removed the worker directories of processes that are gone", "count", a.claim.Swept())
		}
		if err := a.claim.SweepErr(); err != nil {
			cfg.logger.Warn("could not remove some worker directories of processes that are gone", "error", err)
		}
	}
	if cfg.cgroupMemory {
		a.cgroups = detectCgroups()
		if !a.cgroups.ok() {
			cfg.logger.Info("worker cgroups off; each worker is limited by its rlimits only", "reason", a.cgroups.reason, "data_limit", cfg.dataLimit())
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.stop = cancel
	a.bg.Add(3)
	go func() {
		defer a.bg.Done()
		defer close(a.shellCached)
		a.cacheShell(ctx)
	}()
	go func() {
		defer a.bg.Done()
		a.fill(ctx)
	}()
	go func() {
		defer a.bg.Done()
		a.watch(ctx)
	}()
	a.askFill()
	return a, nil
}

// Info implements port.Driver: the workers' limits, with the adapter's
// own session limit.
func (a *adapter) Info() port.DriverInfo {
	l := a.cfg.settings.Limits()
	l.MaxSessions = a.cfg.workers() * a.cfg.settings.SessionsPerWorker
	return port.DriverInfo{Name: "subprocess", Logger: a.cfg.logger, Limits: l, StreamsOutput: true}
}

// Close stops every worker and waits until each is reaped; nothing is left
// behind.
func (a *adapter) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	a.sessions = map[string]*session{}
	a.mu.Unlock()
	a.stop()
	a.bg.Wait() // the filler and any starts or stops it owns are done
	a.mu.Lock()
	workers := slices.Clone(a.workers)
	a.mu.Unlock()
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.end(w, causeShutdown, false)
		}()
	}
	wg.Wait()
	if a.ownDir {
		_ = os.RemoveAll(a.sessionsDir)
	}
	if a.claim != nil {
		_ = a.claim.Release()
	}
	return nil
}

// WaitReady waits until the shell is in the cache (cacheShell) and the
// minimum of workers is started and warm, so that the next CreateSession
// does not wait for a process.
func (a *adapter) WaitReady(ctx context.Context) error {
	select {
	case <-a.shellCached:
	case <-ctx.Done():
		return ctx.Err()
	}
	tenant := port.TenantOf(ctx)
	for {
		a.mu.Lock()
		// With tenant workers, a worker of ctx's tenant that has room is
		// as ready for its next session as a fresh one; and once no more
		// workers may start, there is nothing to wait for.
		idle := a.countLocked(func(w *worker) bool { return a.availableForLocked(w, tenant) })
		full := a.cfg.settings.TenantWorkers && a.liveLocked()+a.starting >= a.cfg.workers() && a.warming == 0
		started, startErr := a.started, a.startErr
		a.mu.Unlock()
		if idle >= a.cfg.settings.MinWorkers || full {
			return nil
		}
		if !started && startErr != nil {
			return fmt.Errorf("%w: no worker process has started: %w", port.ErrRuntimeFailure, startErr)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// cacheShell compiles the bash tool's shell into the compilation cache,
// beside the first worker, which compiles the interpreter: workers
// compile the shell only at their first bash call (most never run bash),
// which then loads it instead of compiling it while the call waits. A
// failure is logged: a worker then compiles it at that call, as it would
// without a cache.
func (a *adapter) cacheShell(ctx context.Context) {
	if a.cfg.settings.CompilationCacheDir == "" {
		return
	}
	m, err := wasm.PrecompileShell(ctx, a.cfg.wasmConfig())
	if err != nil {
		if ctx.Err() == nil {
			a.cfg.logger.Warn("could not compile the bash tool's shell into the cache", "error", err)
		}
		return
	}
	a.cfg.logger.Info("the bash tool's shell is in the compilation cache", "compiled", m.Compiled, "seconds", m.Duration.Seconds())
}

// idleLocked counts live workers that can take a session now: any
// session's, with tenant workers (a worker bound to a tenant is ready
// for that tenant's only).
func (a *adapter) idleLocked() int {
	return a.countLocked(func(w *worker) bool {
		return a.availableLocked(w) && (!a.cfg.settings.TenantWorkers || w.hosted == 0)
	})
}

// countLocked counts the workers ok says yes to.
func (a *adapter) countLocked(ok func(*worker) bool) int {
	n := 0
	for _, w := range a.workers {
		if ok(w) {
			n++
		}
	}
	return n
}

// liveLocked counts the workers not being stopped: the ones that count
// against the maximum (one being stopped hosts nothing and is gone in
// moments).
func (a *adapter) liveLocked() int {
	n := 0
	for _, w := range a.workers {
		if !w.ending {
			n++
		}
	}
	return n
}

func (a *adapter) availableLocked(w *worker) bool {
	return !w.ending && w.rpc != nil && w.sessions < a.cfg.settings.SessionsPerWorker && w.hosted < a.cfg.recycle()
}

// availableForLocked says whether w can take a session of tenant now:
// with tenant workers, only a worker that has hosted nothing yet or
// hosts tenant's.
func (a *adapter) availableForLocked(w *worker, tenant string) bool {
	return a.availableLocked(w) && (!a.cfg.settings.TenantWorkers || w.hosted == 0 || w.tenant == tenant)
}

func (a *adapter) askFill() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// fill keeps cfg.MinWorkers idle warm workers while fewer than the maximum
// are alive, starting one at a time so that starting never takes every
// core.
func (a *adapter) fill(ctx context.Context) {
	// failures counts the starts that failed in a row: the wait before
	// the next doubles with each, up to maxStartBackoff, so that a worker
	// that cannot start costs a few log records a minute, not one a
	// second.
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.wake:
		}
		for ctx.Err() == nil {
			a.mu.Lock()
			need := a.idleLocked() < a.cfg.settings.MinWorkers && a.liveLocked()+a.starting < a.cfg.workers()
			if need {
				a.starting++
				a.warming++
			}
			a.mu.Unlock()
			if !need {
				break
			}
			w, err := a.startWorker(ctx, true)
			a.mu.Lock()
			a.starting--
			a.warming--
			if err == nil {
				a.workers = append(a.workers, w)
				a.metrics.live.Set(float64(len(a.workers)))
				a.started, a.startErr = true, nil
			} else if !a.started && ctx.Err() == nil {
				a.startErr = err
			}
			close(a.warmed)
			a.warmed = make(chan struct{})
			a.mu.Unlock()
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				a.metrics.restarts.WithLabelValues(causeStart).Inc()
				failures++
				wait := startBackoff(failures)
				a.cfg.logger.Error("could not start a worker", "error", err, "retry_in", wait.String())
				select { // do not spin on a worker that cannot start
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			} else {
				failures = 0
			}
		}
	}
}

// maxStartBackoff bounds the filler's wait after failed starts.
const maxStartBackoff = time.Minute

// startBackoff is the filler's wait after failures starts failed in a
// row: a second, doubling, at most maxStartBackoff.
func startBackoff(failures int) time.Duration {
	if failures > 6 {
		return maxStartBackoff
	}
	return min(time.Second<<(failures-1), maxStartBackoff)
}

// watch replaces idle workers that died (nobody else would notice) and
// ends sessions past their idle timeout or lifetime.
func (a *adapter) watch(ctx context.Context) {
	t := time.NewTicker(a.cfg.healthInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		var dead []*worker
		var expired []string
		a.mu.Lock()
		for _, w := range a.workers {
			if !w.ending && w.rpc != nil && w.client.Exited() {
				dead = append(dead, w) // lose marks it ending
			}
		}
		for id, s := range a.sessions {
			if s.busy > 0 {
				continue
			}
			idle := s.info.IdleTimeout > 0 && now.Sub(s.lastUsed) > s.info.IdleTimeout
			old := s.info.MaxLifetime > 0 && now.Sub(s.info.CreatedAt) > s.info.MaxLifetime
			if idle || old {
				expired = append(expired, id)
			}
		}
		a.mu.Unlock()
		for _, w := range dead {
			a.lose(w, "")
		}
		for _, id := range expired {
			_ = a.DestroySession(ctx, id)
		}
	}
}

// CreateSession takes an idle worker (starting one if none is idle and
// fewer than the maximum are alive) and creates the session in it.
func (a *adapter) CreateSession(ctx context.Context, req port.CreateSessionRequest) (port.Session, error) {
	return a.newSession(ctx, "creating", func(ctx context.Context, w *worker) (port.Session, error) { return w.rpc.create(ctx, req) })
}

// newSession takes a worker's slot, has makeIn make the session there
// (created or restored, as doing says), and registers it, or accounts for
// the worker's failure to make one. makeIn's context outlives the
// caller's by the kill grace (graced): a caller that gives up must not
// cost the worker, and with it the worker's other sessions.
func (a *adapter) newSession(ctx context.Context, doing string, makeIn func(context.Context, *worker) (port.Session, error)) (port.Session, error) {
	if err := ctx.Err(); err != nil {
		// Gone before it was given a slot: it takes none.
		return port.Session{}, fmt.Errorf("%s the session: %w", doing, err)
	}
	t := time.Now()
	w, err := a.acquire(ctx)
	a.metrics.poolWait.Observe(time.Since(t).Seconds())
	if err != nil {
		return port.Session{}, err
	}
	defer a.askFill()
	gctx, cancel := a.graced(ctx)
	sess, err := makeIn(gctx, w)
	cancel()
	var te *transportError
	switch {
	case errors.As(err, &te):
		cause := a.lose(w, "")
		return port.Session{}, fmt.Errorf("%w: worker %s while %s the session", port.ErrRuntimeFailure, cause, doing)
	case err != nil:
		a.release(w)
		return port.Session{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed || w.ending {
		// Closed meanwhile, or the worker died: the session never existed.
		w.sessions--
		return port.Session{}, fmt.Errorf("%w: the worker ended while %s the session", port.ErrRuntimeFailure, doing)
	}
	if _, dup := a.sessions[sess.ID]; dup || sess.ID == "" {
		return port.Session{}, fmt.Errorf("%w: worker returned a session id already in use", port.ErrRuntimeFailure)
	}
	a.sessions[sess.ID] = &session{id: sess.ID, w: w, info: sess, lastUsed: time.Now()}
	return sess, nil
}

// SnapshotSession implements port.Snapshotter: the session's worker writes
// the snapshot, which is streamed here.
func (a *adapter) SnapshotSession(ctx context.Context, sessionID string, w io.Writer) error {
	return a.fileCall(ctx, sessionID, func(wk *worker) error {
		rc, _, err := wk.rpc.getFile(ctx, fileRequest{Session: sessionID, Snapshot: true})
		if err != nil {
			return err
		}
		defer rc.Close()
		if _, err := io.Copy(w, rc); err != nil {
			var te *transportError
			if errors.As(err, &te) {
				return err
			}
			return fmt.Errorf("%w: writing the snapshot: %v", port.ErrRuntimeFailure, err)
		}
		return nil
	})
}

// RestoreSession implements port.Snapshotter: a worker is taken as for a
// new session, and the snapshot streamed to it.
func (a *adapter) RestoreSession(ctx context.Context, r io.Reader, _ int64) (port.Session, error) {
	return a.newSession(ctx, "restoring", func(ctx context.Context, w *worker) (port.Session, error) { return w.rpc.restore(ctx, r) })
}

// acquire reserves a session slot on a worker. When every slot is taken
// and the filler is starting a worker, it waits for that worker (or for
// ctx) instead of refusing: the slot is moments away, as after a worker
// was retired at its recycle-after count.
func (a *adapter) acquire(ctx context.Context) (*worker, error) {
	tenant := port.TenantOf(ctx)
	for {
		a.mu.Lock()
		// Prefer a worker already hosting sessions (fills workers before
		// starting on idle ones), then a warm one.
		var pick *worker
		for _, w := range a.workers {
			if !a.availableForLocked(w, tenant) || w.client.Exited() {
				continue
			}
			if pick == nil || w.sessions > pick.sessions || w.hosted > 0 && pick.hosted == 0 {
				pick = w
			}
		}
		if pick != nil {
			pick.take(tenant)
			a.mu.Unlock()
			return pick, nil
		}
		if a.liveLocked()+a.starting < a.cfg.workers() {
			break // start one below, a.mu still held
		}
		if v := a.evictableLocked(tenant); v != nil {
			// Every worker that may live is alive, and one of them is
			// another tenant's hosting nothing: it makes room.
			v.ending = true
			a.bg.Add(1)
			go func() {
				defer a.bg.Done()
				a.end(v, causeEvicted, false)
			}()
			break // start one below, a.mu still held
		}
		if a.warming == 0 || a.closed {
			a.mu.Unlock()
			// The processes are what ran out: their sessions may be
			// fewer than they hold (a worker at its recycle-after count
			// takes none until its own end).
			return nil, &port.CapacityError{Resource: "worker processes", Limit: a.cfg.workers(), RetryAfter: a.cfg.settings.RetryAfter}
		}
		warmed := a.warmed
		a.mu.Unlock()
		select {
		case <-warmed:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: waiting for a worker being started: %w", port.ErrAtCapacity, ctx.Err())
		}
	}
	a.starting++
	a.mu.Unlock()
	// Nobody idle: start one for this caller, cold (a warm-up would only
	// add to its wait).
	w, err := a.startWorker(ctx, false)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.starting--
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			// Given up by the caller: no failure of the worker's.
			return nil, fmt.Errorf("starting a worker: %w", cerr)
		}
		a.metrics.restarts.WithLabelValues(causeStart).Inc()
		return nil, fmt.Errorf("%w: %v", port.ErrRuntimeFailure, err)
	}
	a.workers = append(a.workers, w)
	a.metrics.live.Set(float64(len(a.workers)))
	a.started, a.startErr = true, nil
	w.take(tenant)
	return w, nil
}

// evictableLocked is, with tenant workers, a worker of a tenant other
// than tenant that hosts no session now (the first found: any costs the
// same to replace), or nil. Without tenant workers a worker
// hosting nothing is available to every session, so none is evicted.
func (a *adapter) evictableLocked(tenant string) *worker {
	if !a.cfg.settings.TenantWorkers || a.closed {
		return nil
	}
	for _, w := range a.workers {
		if !w.ending && w.rpc != nil && w.sessions == 0 && w.hosted > 0 && w.tenant != tenant {
			return w
		}
	}
	return nil
}

// take gives a session of tenant a slot of w; the first binds w to the
// tenant (which matters only with tenant workers). Called with the
// adapter's mutex held.
func (w *worker) take(tenant string) {
	if w.hosted == 0 {
		w.tenant = tenant
	}
	w.sessions++
	w.hosted++
}

// release gives back a session slot; a worker that has hosted its share
// and hosts nothing more is retired.
func (a *adapter) release(w *worker) {
	a.mu.Lock()
	w.sessions--
	retire := !w.ending && w.sessions == 0 && w.hosted >= a.cfg.recycle()
	if retire {
		w.ending = true
	}
	closed := a.closed
	a.mu.Unlock()
	if retire && !closed {
		a.bg.Add(1)
		go func() {
			defer a.bg.Done()
			a.end(w, causeRecycled, false)
		}()
	}
	a.askFill()
}

// lose handles a worker that failed a call: it is killed if still alive
// (killHard says whether we are killing it for overrunning), reaped, its
// sessions dropped, and its cause returned for the caller's result.
func (a *adapter) lose(w *worker, forced string) string {
	a.mu.Lock()
	first := !w.ending
	w.ending = true
	a.mu.Unlock()
	if !first {
		// Someone else is ending it; wait for the process so that the
		// cause is known.
		w.waitExit(5 * time.Second)
		if forced != "" {
			return forced
		}
		c, _ := w.exitCause()
		return c
	}
	return a.end(w, forced, true)
}

// end stops a worker and accounts for it: graceful for a retirement or a
// shutdown, SIGKILL for a lost or overrunning one. It returns the cause.
func (a *adapter) end(w *worker, cause string, lost bool) string {
	switch {
	case lost && cause == "":
		// A failed call or a dead idle worker: the process may still be
		// exiting; give it a moment to be reaped so that its own cause
		// shows, then kill.
		if !w.waitExit(time.Second) {
			w.kill()
		}
	case lost:
		w.kill()
	default:
		w.stop()
	}
	a.cleanupWorker(w)
	if lost && cause == "" {
		// After cleanup: a memory death may show only in the cgroup.
		cause, _ = w.exitCause()
	}
	a.mu.Lock()
	if !w.ended {
		w.ended = true
		if i := slices.Index(a.workers, w); i >= 0 {
			a.workers = slices.Delete(a.workers, i, i+1)
		}
		for id, s := range a.sessions {
			if s.w == w {
				delete(a.sessions, id)
			}
		}
		a.metrics.live.Set(float64(len(a.workers)))
		if cause != causeShutdown {
			a.metrics.restarts.WithLabelValues(cause).Inc()
		}
	}
	a.mu.Unlock()
	if lost {
		a.cfg.logger.Warn("worker lost", "worker", w.id, "pid", w.pid, "cause", cause)
	} else {
		a.cfg.logger.Info("worker stopped", "worker", w.id, "pid", w.pid, "cause", cause)
	}
	a.askFill()
	return cause
}

// lookup finds a live session and marks it busy.
func (a *adapter) lookup(id string) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", port.ErrSessionNotFound, id)
	}
	return s, nil
}

// Execute runs the call in the session's worker. The worker applies the
// timeout; if it has not answered a grace period after the deadline (or
// after the caller gave up), it is killed and the call's outcome is
// session_lost, as it is when the worker dies during the call.
func (a *adapter) Execute(ctx context.Context, sessionID string, req port.ExecuteRequest) (port.Result, error) {
	s, err := a.lookup(sessionID)
	if err != nil {
		return port.Result{}, err
	}
	// A session's first bash call starts its shell (compiled, or loaded
	// from the cache, at the worker's first) before the command's timeout
	// begins, and is not cancelled with the call: the watchdog allows it
	// the time a worker may take to start, so that a slow start is not
	// taken for an overrun or for ignoring a cancellation.
	var allowance time.Duration
	a.mu.Lock()
	s.busy++
	if req.Tool == port.ToolBashCodeExecution && !s.shellUp {
		allowance = a.cfg.startTimeout
	}
	a.mu.Unlock()
	var shellUp bool
	defer func() {
		a.mu.Lock()
		s.busy--
		s.lastUsed = time.Now()
		s.shellUp = s.shellUp || shellUp
		a.mu.Unlock()
	}()

	start := time.Now()
	// The stream outlives the caller's cancellation (the worker is told
	// to cancel, and answers), not its values: the trace goes on.
	streamCtx, cancelStream := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelStream()
	done := make(chan struct{})
	// forced is why the watchdog ended the call: causeDeadline, or
	// causeCancel for a call that did not stop once cancelled. Read
	// after wg.Wait, which orders the watchdog's write before it.
	var forced string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the watchdog: owned by this call, ended before it returns
		defer wg.Done()
		hard := time.NewTimer(afterGrace(afterGrace(req.Timeout, a.cfg.killGrace), allowance))
		defer hard.Stop()
		select {
		case <-done:
			return
		case <-hard.C:
			forced = causeDeadline
		case <-ctx.Done():
			grace := time.NewTimer(afterGrace(a.cfg.killGrace, allowance))
			defer grace.Stop()
			select {
			case <-done:
				return
			case <-grace.C:
				forced = causeCancel
			}
		}
		cancelStream()
	}()
	res, err := s.w.rpc.execute(streamCtx, ctx.Done(), sessionID, req, a.cfg.settings.OutputLimit)
	close(done)
	wg.Wait()
	shellUp = err == nil && req.Tool == port.ToolBashCodeExecution

	var te *transportError
	switch {
	case errors.As(err, &te):
		cause := a.lose(s.w, forced)
		var rc int
		switch cause {
		case causeDeadline:
			rc = port.ReturnCodeTimedOut
		case causeCancel:
			rc = port.ReturnCodeCancelled
		default:
			_, rc = s.w.exitCause()
		}
		return lostResult(req, cause, rc, time.Since(start)), nil
	case errors.Is(err, port.ErrSessionNotFound):
		// The worker reclaimed it (idle timeout) before we did.
		a.forget(sessionID)
	}
	return res, err
}

// afterGrace is timeout plus grace, or the longest duration where the
// sum overflows (a max-timeout near it): an overflowed, negative sum
// would fire the watchdog at once and kill a worker running a call well
// within its time.
func afterGrace(timeout, grace time.Duration) time.Duration {
	if d := timeout + grace; d >= timeout {
		return d
	}
	return math.MaxInt64
}

// graced is ctx without its cancellation until the kill grace after it:
// for a call a worker must see through (a session made or destroyed in
// it, which the adapter's accounting follows), its caller's going away
// is no failure of the worker's, and losing the worker for it would take
// the worker's other sessions too. A worker that has not answered by the
// end of the grace is lost, as for a call past its deadline.
func (a *adapter) graced(ctx context.Context) (context.Context, context.CancelFunc) {
	g, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var mu sync.Mutex
	var grace *time.Timer
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		grace = time.AfterFunc(a.cfg.killGrace, cancel)
	})
	return g, func() {
		stop()
		mu.Lock()
		if grace != nil {
			grace.Stop()
		}
		mu.Unlock()
		cancel()
	}
}

// lostResult is the result of a call whose worker died.
func lostResult(req port.ExecuteRequest, cause string, rc int, d time.Duration) port.Result {
	why := map[string]string{
		causeDeadline: "did not stop at the call's deadline and was killed",
		causeCancel:   "did not stop when the call was cancelled and was killed",
		causeOOM:      "ran out of memory and was killed by the operating system",
		causeKilled:   "was killed",
		causeCrashed:  "crashed",
	}[cause]
	if why == "" {
		why = "ended"
	}
	tool := req.Tool
	if tool == "" {
		tool = port.ToolCodeExecution
	}
	return port.Result{
		ToolUseID: req.ToolUseID, Tool: tool, ReturnCode: rc,
		Outcome: port.OutcomeSessionLost, StateLost: true, Duration: d,
		Stderr: "codeport: the worker process hosting this session " + why +
			"; the session, its Python state and its files are gone. Create a new session.\n",
	}
}

// forget drops a session the worker no longer has and frees its slot.
func (a *adapter) forget(id string) {
	a.mu.Lock()
	s, ok := a.sessions[id]
	if ok {
		delete(a.sessions, id)
	}
	a.mu.Unlock()
	if ok {
		a.release(s.w)
	}
}

// DestroySession destroys the session in its worker and frees the slot,
// which retires the worker when it has hosted its share.
func (a *adapter) DestroySession(ctx context.Context, sessionID string) error {
	a.mu.Lock()
	s, ok := a.sessions[sessionID]
	if ok {
		delete(a.sessions, sessionID)
	}
	a.mu.Unlock()
	if !ok {
		return nil
	}
	gctx, cancel := a.graced(ctx)
	err := s.w.rpc.destroy(gctx, sessionID)
	cancel()
	var te *transportError
	if errors.As(err, &te) {
		a.lose(s.w, "")
		return nil
	}
	a.release(s.w)
	if err != nil && !errors.Is(err, port.ErrSessionNotFound) {
		return err
	}
	return nil
}

// fileCall runs a file operation against the session's worker, mapping a
// dead worker to a lost (not found) session, and a call its caller gave
// up (ctx) to the caller's reason: the connection then failed for the
// caller, not for the worker.
func (a *adapter) fileCall(ctx context.Context, sessionID string, call func(*worker) error) error {
	s, err := a.lookup(sessionID)
	if err != nil {
		return err
	}
	// In flight, the session is not idle (watch): an upload may outlast
	// the idle timeout.
	a.mu.Lock()
	s.busy++
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		s.busy--
		a.mu.Unlock()
	}()
	err = call(s.w)
	var te *transportError
	if errors.As(err, &te) {
		if s.w.client.Exited() {
			a.lose(s.w, "")
			return fmt.Errorf("%w: %q was lost with its worker", port.ErrSessionNotFound, sessionID)
		}
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("session %q: %w", sessionID, cerr)
		}
		return fmt.Errorf("%w: %v", port.ErrRuntimeFailure, err)
	}
	if errors.Is(err, port.ErrSessionNotFound) {
		a.forget(sessionID)
	} else if err == nil {
		a.mu.Lock()
		s.lastUsed = time.Now()
		a.mu.Unlock()
	}
	return err
}

// ListFiles lists a workspace directory of the session.
func (a *adapter) ListFiles(ctx context.Context, sessionID, dir string) ([]port.FileInfo, error) {
	var files []port.FileInfo
	err := a.fileCall(ctx, sessionID, func(w *worker) (err error) {
		files, err = w.rpc.list(ctx, sessionID, dir)
		return err
	})
	return files, err
}

// GetFile streams a workspace file from the session's worker.
func (a *adapter) GetFile(ctx context.Context, sessionID, path string) (io.ReadCloser, port.FileInfo, error) {
	var rc io.ReadCloser
	var info port.FileInfo
	err := a.fileCall(ctx, sessionID, func(w *worker) (err error) {
		rc, info, err = w.rpc.getFile(ctx, fileRequest{Session: sessionID, Path: path})
		return err
	})
	return rc, info, err
}

// GetOutputFile streams an output file kept by the session's worker.
func (a *adapter) GetOutputFile(ctx context.Context, sessionID, fileID string) (io.ReadCloser, port.FileInfo, error) {
	var rc io.ReadCloser
	var info port.FileInfo
	err := a.fileCall(ctx, sessionID, func(w *worker) (err error) {
		rc, info, err = w.rpc.getFile(ctx, fileRequest{Session: sessionID, FileID: fileID})
		return err
	})
	return rc, info, err
}

// PutFile streams r into the session's workspace; the worker enforces the
// size caps while the bytes arrive.
func (a *adapter) PutFile(ctx context.Context, sessionID, path string, r io.Reader) (port.FileInfo, error) {
	var info port.FileInfo
	err := a.fileCall(ctx, sessionID, func(w *worker) (err error) {
		info, err = w.rpc.putFile(ctx, sessionID, path, r)
		return err
	})
	return info, err
}

// Describe is the runtime's description (the workers run it with these
// settings), with the adapter's name, its own session limit and what
// process isolation means for a program. It needs no worker: a
// description must not wait for a process to start, nor start one.
func (a *adapter) Describe(context.Context) (port.Capabilities, error) {
	c := wasm.Capabilities(a.cfg.settings.Settings)
	c.Backend = "subprocess"
	c.Limits.MaxSessions = a.cfg.workers() * a.cfg.settings.SessionsPerWorker
	if a.cfg.settings.SessionsPerWorker == 1 {
		c.Limitations = append(c.Limitations, "Each session runs in a worker process of its own: if that process crashes or exceeds its memory limit, the session and its files are lost and a new session must be created")
	} else {
		c.Limitations = append(c.Limitations, fmt.Sprintf("Sessions run in worker processes shared by up to %d sessions: if a worker crashes or exceeds its memory limit, its sessions and their files are lost and a new session must be created", a.cfg.settings.SessionsPerWorker))
	}
	return c, nil
}

// Ready reports whether a session can start without waiting for a worker
// process to start: an idle worker is up (always true with no minimum),
// and the shell is in the cache (cacheShell).
func (a *adapter) Ready() bool {
	select {
	case <-a.shellCached:
	default:
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cfg.settings.MinWorkers == 0 || a.idleLocked() > 0
}
