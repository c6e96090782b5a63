package porttest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/codeport/codeport/internal/editor"
	"github.com/codeport/codeport/internal/workspace"
	"github.com/codeport/codeport/port"
)

// guestRoot is the working directory the fake reports, and where absolute
// paths are accepted: the real adapters' (workspace.GuestRoot).
const guestRoot = workspace.GuestRoot

// Driver is the fake backend, a port.Driver. New wraps one in a
// *port.Port; NewDriver gives it to a test that wraps it itself (with
// port.WithObserver, say) or that uses its test hooks, Stall and Sessions.
// Reach the Driver behind a Port made by New with
// p.Driver().(*porttest.Driver).
//
// A Driver is safe for concurrent use.
type Driver struct {
	cfg config

	mu       sync.Mutex
	sessions map[string]*session
	stalls   map[string]*stall // armed by Stall, by session id
	seq      uint64            // numbers the sessions
	closed   bool
}

var _ port.Driver = (*Driver)(nil)

// NewDriver returns a fake made with opts. It panics when the options are
// inconsistent, which is a mistake in the test.
func NewDriver(opts ...Option) *Driver {
	c := newConfig(opts)
	if len(c.problems) > 0 {
		panic("porttest: " + strings.Join(c.problems, "; "))
	}
	return &Driver{cfg: c, sessions: map[string]*session{}, stalls: map[string]*stall{}}
}

// session is one live session: its workspace, its editor (whose undo
// history is session state) and its lease.
type session struct {
	id       string
	created  time.Time
	idle     time.Duration
	lifetime time.Duration
	fs       *memFS
	// editor is used only by the call in progress (running).
	editor *editor.Editor
	// outputs are the files calls produced, by file id (GetOutputFile),
	// oldest first in outputOrder. A node is never changed in place, so
	// keeping one keeps that version. Guarded by Driver.mu.
	outputs     map[string]output
	outputOrder []string

	// ctx ends when the session ends, and ends the call in progress.
	ctx    context.Context
	cancel context.CancelFunc
	// inflight counts the call in progress, for DestroySession to await.
	inflight sync.WaitGroup

	// Guarded by Driver.mu.
	lastActive time.Time
	running    bool
}

// expired reports whether the session is past its lifetime, or idle past
// its idle timeout, at now.
func (s *session) expired(now time.Time) bool {
	if s.lifetime > 0 && now.Sub(s.created) >= s.lifetime {
		return true
	}
	return s.idle > 0 && !s.running && now.Sub(s.lastActive) >= s.idle
}

func (s *session) handle() port.Session {
	return port.Session{ID: s.id, IdleTimeout: s.idle, MaxLifetime: s.lifetime, CreatedAt: s.created, LastActivityAt: s.lastActive}
}

// CreateSession implements port.Driver: a fresh session with an empty
// workspace, refused with a *port.CapacityError at Limits.MaxSessions.
func (d *Driver) CreateSession(_ context.Context, req port.CreateSessionRequest) (port.Session, error) {
	l := d.cfg.limits
	now := d.cfg.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return port.Session{}, fmt.Errorf("porttest: %w", port.ErrClosed)
	}
	d.sweep(now)
	if l.MaxSessions > 0 && len(d.sessions) >= l.MaxSessions {
		return port.Session{}, &port.CapacityError{Resource: "sessions", Limit: l.MaxSessions, RetryAfter: d.cfg.retryAfter}
	}
	d.seq++
	fs := newMemFS(l.WorkspaceBytes, d.cfg.now)
	history := int64(64 << 20) // as the wasm adapter keeps
	if l.WorkspaceBytes > 0 {
		history = min(history, l.WorkspaceBytes)
	}
	s := &session{
		id:         fmt.Sprintf("porttest-%d", d.seq),
		created:    now,
		idle:       l.IdleTimeout(req.IdleTimeout),
		lifetime:   l.Lifetime(req.MaxLifetime),
		fs:         fs,
		editor:     editor.New(fs, editor.Options{MaxFileBytes: l.FileBytes, MaxHistoryBytes: history, MaxViewBytes: l.OutputBytes}),
		lastActive: now,
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	d.sessions[s.id] = s
	return s.handle(), nil
}

// sweep ends the sessions expired at now, freeing their capacity. The
// caller holds d.mu.
func (d *Driver) sweep(now time.Time) {
	for _, s := range d.sessions {
		if s.expired(now) {
			d.end(s)
		}
	}
}

// end takes s out of the live sessions and stops its call in progress,
// without waiting for it. The caller holds d.mu.
func (d *Driver) end(s *session) {
	delete(d.sessions, s.id)
	delete(d.stalls, s.id)
	s.cancel()
}

// lookup finds the live session id, reclaiming it if it has expired, and
// marks it active. The caller holds d.mu.
func (d *Driver) lookup(id string, now time.Time) (*session, error) {
	if d.closed {
		return nil, fmt.Errorf("porttest: %w", port.ErrClosed)
	}
	s := d.sessions[id]
	if s != nil && s.expired(now) {
		d.end(s)
		s = nil
	}
	if s == nil {
		return nil, fmt.Errorf("%w: %q", port.ErrSessionNotFound, id)
	}
	s.lastActive = now
	return s, nil
}

// fileSession finds the session of a file operation. File operations run
// beside a call in progress, as on the real adapters.
func (d *Driver) fileSession(id string) (*session, error) {
	now := d.cfg.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lookup(id, now)
}

// Execute implements port.Driver. A session runs one call at a time: a
// second one is refused with port.ErrSessionBusy.
func (d *Driver) Execute(ctx context.Context, id string, req port.ExecuteRequest) (port.Result, error) {
	now := d.cfg.now()
	d.mu.Lock()
	s, err := d.lookup(id, now)
	if err == nil && s.running {
		err = fmt.Errorf("%w: session %s is running another call", port.ErrSessionBusy, id)
	}
	if err != nil {
		d.mu.Unlock()
		return port.Result{}, err
	}
	s.running = true
	s.inflight.Add(1)
	st := d.stalls[id]
	delete(d.stalls, id)
	d.mu.Unlock()
	defer func() {
		now := d.cfg.now()
		d.mu.Lock()
		s.running, s.lastActive = false, now
		d.mu.Unlock()
		s.inflight.Done()
	}()

	// The call ends early when the caller gives up, the session ends or
	// the Port closes (which ends ctx).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()

	start := time.Now()
	res := port.Result{}
	if st != nil {
		if how := st.hold(ctx, req.Timeout); how != "" {
			res = stopped(res, how, req.Timeout)
			res.Duration = time.Since(start)
			return finish(res, req), nil
		}
	}
	s.fs.takeWritten() // what was written between calls is not this call's
	switch req.Tool {
	case port.ToolTextEditorExecution:
		if req.Editor == nil {
			return port.Result{}, fmt.Errorf("%w: text_editor_code_execution needs input", port.ErrInvalidRequest)
		}
		out, err := s.editor.Run(*req.Editor)
		if err != nil {
			return port.Result{}, err
		}
		res = port.Result{Stdout: out.Stdout, Stderr: out.Stderr, ReturnCode: out.ReturnCode, Duration: time.Since(start)}
	default:
		fn := d.cfg.executors[req.Tool]
		if fn == nil {
			return port.Result{}, fmt.Errorf("%w: %q (this backend runs %s)", port.ErrUnsupportedTool, req.Tool, toolList(d.cfg.tools()))
		}
		res, err = d.runExecutor(ctx, s, fn, req)
		if err != nil {
			return port.Result{}, err
		}
		res.Files = nil // the fake lists what was written, below
		if res.Outcome == port.OutcomeSessionLost {
			d.mu.Lock()
			if d.sessions[id] == s {
				d.end(s)
			}
			d.mu.Unlock()
		}
	}
	if res.Outcome != port.OutcomeSessionLost {
		res.Files = d.keepOutputs(s)
	}
	return finish(res, req), nil
}

// output is a kept version of a file a call produced.
type output struct {
	rel  string
	node *node
}

// maxKeptOutputs bounds the versions a session keeps, as the wasm adapter
// bounds them; the oldest go first.
const maxKeptOutputs = 1000

// keepOutputs keeps the files the call wrote and lists them for its
// result.
func (d *Driver) keepOutputs(s *session) []port.OutputFile {
	paths, nodes := s.fs.takeWritten()
	var files []port.OutputFile
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, rel := range paths {
		if nodes[i] == nil {
			continue // removed again, or a directory now
		}
		id := workspace.FileIDPrefix + rand.Text()
		if s.outputs == nil {
			s.outputs = map[string]output{}
		}
		s.outputs[id] = output{rel: rel, node: nodes[i]}
		s.outputOrder = append(s.outputOrder, id)
		files = append(files, port.OutputFile{FileID: id, Filename: rel})
	}
	for len(s.outputOrder) > maxKeptOutputs {
		delete(s.outputs, s.outputOrder[0])
		s.outputOrder = s.outputOrder[1:]
	}
	return files
}

// runExecutor runs fn under the call's deadline and reports a call it
// stopped as a backend reports a program it stopped.
func (d *Driver) runExecutor(ctx context.Context, s *session, fn Executor, req port.ExecuteRequest) (port.Result, error) {
	tctx := ctx
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		tctx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	start := time.Now()
	res, err := fn(tctx, Session{s: s}, req)
	took := time.Since(start)
	stop := tctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
	if err != nil && !stop {
		return port.Result{}, err
	}
	if limit := d.cfg.limits.OutputBytes; limit > 0 {
		var t1, t2 bool
		res.Stdout, t1 = capOutput(res.Stdout, limit)
		res.Stderr, t2 = capOutput(res.Stderr, limit)
		res.OutputTruncated = res.OutputTruncated || t1 || t2
	}
	if stop {
		how := port.OutcomeTimedOut
		if ctx.Err() != nil {
			how = port.OutcomeCancelled
		}
		res = stopped(res, how, req.Timeout)
	}
	if res.Duration == 0 {
		res.Duration = took
	}
	return res, nil
}

// stopped makes res the result of a call stopped at its deadline or
// cancelled, keeping the output it had.
func stopped(res port.Result, how port.Outcome, timeout time.Duration) port.Result {
	res.Outcome = how
	if how == port.OutcomeTimedOut {
		res.ReturnCode = port.ReturnCodeTimedOut
		res.Stderr = appendNote(res.Stderr, fmt.Sprintf("[porttest: execution timed out after %s and was stopped]", timeout))
	} else {
		res.ReturnCode = port.ReturnCodeCancelled
		res.Stderr = appendNote(res.Stderr, "[porttest: execution was cancelled and stopped]")
	}
	return res
}

// finish completes a result as every backend does: the tool and the tool
// use id echoed, an outcome for the return code.
func finish(res port.Result, req port.ExecuteRequest) port.Result {
	res.Tool, res.ToolUseID = req.Tool, req.ToolUseID
	if res.Outcome == "" {
		res.Outcome = port.OutcomeCompleted
		if res.ReturnCode != 0 {
			res.Outcome = port.OutcomeProgramError
		}
	}
	return res
}

// capOutput keeps at most limit bytes of a stream, as the wasm adapter
// does: a character cut by the limit is dropped whole, and a notice says
// how much was dropped.
func capOutput(s string, limit int64) (string, bool) {
	if int64(len(s)) <= limit {
		return s, false
	}
	cut := int(limit)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	kept := s[:cut]
	if kept != "" && !strings.HasSuffix(kept, "\n") {
		kept += "\n"
	}
	return kept + fmt.Sprintf("[porttest: output truncated: %d bytes dropped beyond the limit of %d bytes per stream]\n", len(s)-cut, limit), true
}

func appendNote(stream, note string) string {
	if stream != "" && !strings.HasSuffix(stream, "\n") {
		stream += "\n"
	}
	return stream + note + "\n"
}

func toolList(tools []port.ToolKind) string {
	s := make([]string, len(tools))
	for i, t := range tools {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// DestroySession implements port.Driver: the session's call in progress is
// cancelled and awaited, and its files are gone. An unknown id is not an
// error.
func (d *Driver) DestroySession(_ context.Context, id string) error {
	d.mu.Lock()
	s := d.sessions[id]
	delete(d.stalls, id)
	if s != nil {
		d.end(s)
	}
	d.mu.Unlock()
	if s != nil {
		s.inflight.Wait()
	}
	return nil
}

// ListFiles implements port.Driver.
func (d *Driver) ListFiles(_ context.Context, id, dir string) ([]port.FileInfo, error) {
	s, err := d.fileSession(id)
	if err != nil {
		return nil, err
	}
	return s.fs.List(dir)
}

// GetFile implements port.Driver.
func (d *Driver) GetFile(_ context.Context, id, path string) (io.ReadCloser, port.FileInfo, error) {
	s, err := d.fileSession(id)
	if err != nil {
		return nil, port.FileInfo{}, err
	}
	return s.fs.Open(path)
}

// GetOutputFile implements port.Driver: the version of a file a call
// produced, whatever happened to the file since.
func (d *Driver) GetOutputFile(_ context.Context, id, fileID string) (io.ReadCloser, port.FileInfo, error) {
	now := d.cfg.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	s, err := d.lookup(id, now)
	if err != nil {
		return nil, port.FileInfo{}, err
	}
	o, ok := s.outputs[fileID]
	if !ok {
		return nil, port.FileInfo{}, fmt.Errorf("porttest: no output file %q in this session: %w", fileID, port.ErrFileNotFound)
	}
	return io.NopCloser(bytes.NewReader(o.node.data)), o.node.info(o.rel), nil
}

// PutFile implements port.Driver: an upload over Limits.FileBytes, or one
// that would put the session's files over Limits.WorkspaceBytes, is
// refused with port.ErrFileTooLarge and leaves the workspace as it was.
func (d *Driver) PutFile(_ context.Context, id, path string, r io.Reader) (port.FileInfo, error) {
	s, err := d.fileSession(id)
	if err != nil {
		return port.FileInfo{}, err
	}
	return s.fs.Write(path, r, d.cfg.limits.FileBytes)
}

// Close implements port.Driver: every session is ended, and the calls in
// progress are cancelled and awaited.
func (d *Driver) Close() error {
	d.mu.Lock()
	d.closed = true
	live := make([]*session, 0, len(d.sessions))
	for _, s := range d.sessions {
		live = append(live, s)
		d.end(s)
	}
	clear(d.stalls)
	d.mu.Unlock()
	for _, s := range live {
		s.inflight.Wait()
	}
	return nil
}

// Sessions lists the ids of the live sessions, sorted, after reclaiming
// the expired ones: what a test looks at to see that its gateway destroys
// the sessions it makes.
func (d *Driver) Sessions() []string {
	now := d.cfg.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sweep(now)
	ids := make([]string, 0, len(d.sessions))
	for id := range d.sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Stall arms the next Execute call on the session to stall: once the call
// has been admitted (the session is busy, and a second call is refused
// with port.ErrSessionBusy), started is closed and the call waits until
// release is called, then runs as usual. A stalled call that reaches its
// deadline first ends timed out, and one whose caller gives up (or whose
// session is destroyed) ends cancelled, without running, as a program
// stopped there would. It is how a test makes a call last without an
// interpreter: to see its gateway meet a busy session, a slow backend or
// a cancellation. conformance.Target.Stall takes it, for the busy check.
//
// release may be called any number of times, before or after the call
// arrives. A second Stall on the same session before its next call
// replaces the first.
func (d *Driver) Stall(sessionID string) (started <-chan struct{}, release func()) {
	st := &stall{started: make(chan struct{}), release: make(chan struct{})}
	d.mu.Lock()
	if old := d.stalls[sessionID]; old != nil {
		old.free()
	}
	d.stalls[sessionID] = st
	d.mu.Unlock()
	return st.started, st.free
}

// stall is an armed Stall.
type stall struct {
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func (st *stall) free() { st.once.Do(func() { close(st.release) }) }

// hold stalls the call until release, or reports how the call was stopped
// meanwhile.
func (st *stall) hold(ctx context.Context, timeout time.Duration) port.Outcome {
	close(st.started)
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	select {
	case <-st.release:
		return ""
	case <-ctx.Done():
		return port.OutcomeCancelled
	case <-deadline:
		return port.OutcomeTimedOut
	}
}

// Session is an Executor's view of the session its call runs in: its id
// and its files, under the same rules as the file operations of the port
// (paths relative to the workspace root or absolute under /workspace;
// port.ErrPathEscapesWorkspace, ErrFileNotFound, ErrIsDirectory and
// ErrFileTooLarge), so that an executor can play a program that reads and
// writes files. Writes are bounded by the workspace quota only, as a
// program's are. Only the fake makes a Session.
type Session struct{ s *session }

// ID is the session's id.
func (s Session) ID() string { return s.s.id }

// ReadFile returns a copy of the contents of the file path.
func (s Session) ReadFile(path string) ([]byte, error) { return s.s.fs.ReadFile(path, 0) }

// WriteFile writes data to the file path, creating parent directories and
// replacing an existing file.
func (s Session) WriteFile(path string, data []byte) error { return s.s.fs.WriteFile(path, data, 0) }

// Remove removes the file path.
func (s Session) Remove(path string) error { return s.s.fs.Remove(path) }

// MkdirAll makes the directory dir and any missing parents.
func (s Session) MkdirAll(dir string) error { return s.s.fs.MkdirAll(dir) }

// Stat describes the file or directory path.
func (s Session) Stat(path string) (port.FileInfo, error) { return s.s.fs.Stat(path) }

// List lists the directory dir ("." for the root), as ListFiles does.
func (s Session) List(dir string) ([]port.FileInfo, error) { return s.s.fs.List(dir) }
