package port

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// Port is the portable CodeExecutionPort every adapter is served through:
// it wraps a Driver and does what every adapter needs once (see Driver
// for the list). Adapters' constructors return one; a *Port is safe for
// concurrent use.
type Port struct {
	d         Driver
	info      DriverInfo
	observers []Observer

	// closing ends every call's context when Close begins.
	closing context.Context
	cancel  context.CancelFunc

	mu       sync.Mutex
	closed   bool
	inflight sync.WaitGroup

	closeOnce sync.Once
	closeErr  error

	snapshotKey []byte
	maxSnapshot int64
	nodeID      string
	// spoolSink, when set, is what a restore writes its temporary file
	// through (tests give one that fails as a full disk does).
	spoolSink func(io.Writer) io.Writer
	// spoolAlways, when set, makes restores spool and check the seal
	// first even through a StreamRestorer (tests reach the spool so).
	spoolAlways bool
}

var _ CodeExecutionPort = (*Port)(nil)

// Option configures New.
type Option func(*options)

type options struct {
	logger      *slog.Logger
	observers   []Observer
	snapshotKey []byte
	maxSnapshot int64
	nodeID      string
}

// WithLogger logs one record per call: the operation, the adapter, the
// session, the tool kind, the duration and the outcome or error code;
// never code, output, paths or file contents. Sessions made and destroyed
// and calls executed are logged at Info, other calls at Debug, failures
// of the backend at Warn. Without it, calls are logged to the driver's
// logger (DriverInfo.Logger), if any.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// WithObserver adds an observer of every call (metrics, tracing, tenant
// accounting). Observers are called in the order they were added.
func WithObserver(obs Observer) Option {
	return func(o *options) {
		if obs != nil {
			o.observers = append(o.observers, obs)
		}
	}
}

// New wraps a driver. New panics if d is nil.
func New(d Driver, opts ...Option) *Port {
	if d == nil {
		panic("port: New called with a nil driver")
	}
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.nodeID != "" {
		if err := CheckNodeID(o.nodeID); err != nil {
			panic("port: WithNodeID: " + err.Error())
		}
	}
	p := &Port{d: d, info: d.Info(), snapshotKey: o.snapshotKey, maxSnapshot: o.maxSnapshot, nodeID: o.nodeID}
	if p.maxSnapshot == 0 {
		p.maxSnapshot = MaxSnapshotBytesFor(p.info.Limits)
	}
	if p.maxSnapshot == 0 {
		p.maxSnapshot = DefaultMaxSnapshotBytes
	}
	if o.logger == nil {
		o.logger = p.info.Logger
	}
	if o.logger != nil && o.logger.Handler() != slog.DiscardHandler {
		p.observers = append(p.observers, logObserver{log: o.logger, adapter: p.info.Name})
	}
	p.observers = append(p.observers, o.observers...)
	p.closing, p.cancel = context.WithCancel(context.Background())
	return p
}

// Driver returns the wrapped driver, for its optional interfaces. Calling
// its operations directly bypasses everything the Port guarantees.
func (p *Port) Driver() Driver { return p.d }

// Name is the adapter's name (DriverInfo.Name).
func (p *Port) Name() string { return p.info.Name }

// Limits are the limits the Port enforces (DriverInfo.Limits).
func (p *Port) Limits() Limits { return p.info.Limits }

// call is one call in flight.
type call struct {
	p    *Port
	ctx  context.Context
	c    Call
	stop func() bool
	end  context.CancelFunc
}

// begin admits a call: refused once the Port is closed, counted in flight
// until done, and given a context that also ends when Close begins.
func (p *Port) begin(ctx context.Context, op Op, sessionID string) (*call, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, fmt.Errorf("%s adapter: %w", p.info.Name, ErrClosed)
	}
	p.inflight.Add(1)
	p.mu.Unlock()
	cctx, cancel := context.WithCancel(ctx)
	k := &call{p: p, ctx: cctx, end: cancel, c: Call{Op: op, Adapter: p.info.Name, SessionID: sessionID, Started: time.Now()}}
	k.stop = context.AfterFunc(p.closing, cancel)
	return k, nil
}

// observe hands the call to the observers; after it, k.ctx is the context
// the driver sees.
func (k *call) observe() {
	for _, o := range k.p.observers {
		k.ctx = o.StartCall(k.ctx, &k.c)
	}
}

// done ends the call: observed, its context released, then no longer in
// flight.
func (k *call) done(err error) {
	k.finish(err)
	k.release()
}

// finish observes the end of the call and takes it out of flight, but
// leaves its context alive: for a GetFile whose reader goes on using it.
func (k *call) finish(err error) {
	k.c.Duration = time.Since(k.c.Started)
	k.c.Err = err
	for _, o := range k.p.observers {
		o.EndCall(k.ctx, &k.c)
	}
	k.p.inflight.Done()
}

// release ends the call's context.
func (k *call) release() {
	k.stop()
	k.end()
}

// refuse ends a call refused before it reached the driver.
func (p *Port) refuse(ctx context.Context, op Op, sessionID string, err error) error {
	k, berr := p.begin(ctx, op, sessionID)
	if berr != nil {
		return berr
	}
	k.observe()
	k.done(err)
	return err
}

// CreateSession implements CodeExecutionPort.
func (p *Port) CreateSession(ctx context.Context, req CreateSessionRequest) (Session, error) {
	if err := checkCreate(req); err != nil {
		return Session{}, p.refuse(ctx, OpCreateSession, "", err)
	}
	k, err := p.begin(ctx, OpCreateSession, "")
	if err != nil {
		return Session{}, err
	}
	k.observe()
	s, err := p.d.CreateSession(k.ctx, req)
	if err == nil && s.ID == "" {
		err = fmt.Errorf("%w: %s adapter made a session without an id", ErrRuntimeFailure, p.info.Name)
	}
	s.ID = p.publicID(s.ID)
	k.c.SessionID = s.ID
	k.done(err)
	if err != nil {
		return Session{}, err
	}
	return s, nil
}

// Execute implements CodeExecutionPort.
func (p *Port) Execute(ctx context.Context, sessionID string, req ExecuteRequest) (Result, error) {
	if err := prepareExecute(&p.info, &req); err != nil {
		return Result{}, p.refuse(ctx, OpExecute, sessionID, err)
	}
	id, err := p.driverID(sessionID)
	if err != nil {
		return Result{}, p.refuse(ctx, OpExecute, loggedID(sessionID), err)
	}
	k, err := p.begin(ctx, OpExecute, sessionID)
	if err != nil {
		return Result{}, err
	}
	k.c.Tool, k.c.Timeout = req.Tool, req.Timeout
	k.observe()
	var sink *outputSink
	if req.OnOutput != nil {
		sink = &outputSink{fn: req.OnOutput}
		req.OnOutput = nil
		if p.info.StreamsOutput {
			req.OnOutput = sink.write
		}
	}
	res, err := p.d.Execute(k.ctx, id, req)
	if sink != nil {
		sink.finish(res, err == nil)
	}
	if err == nil {
		// The contract promises the tool's block type and a tool use id on
		// every result; do not rely on the driver for either. This is the
		// one place tool use ids are filled in: drivers need not set them
		// (a remote backend's comes back as it sent it), and package server
		// serves what the Port returns.
		if res.Tool == "" {
			res.Tool = req.Tool
		}
		if res.ToolUseID == "" {
			res.ToolUseID = req.ToolUseID
		}
		if res.ToolUseID == "" {
			// Minted here, not sent: a remote backend mints its own.
			res.ToolUseID = NewToolUseID()
		}
		k.c.Outcome, k.c.ReturnCode = res.Outcome, res.ReturnCode
		k.c.StateLost, k.c.OutputTruncated = res.StateLost, res.OutputTruncated
		k.c.OutputBytes = int64(len(res.Stdout) + len(res.Stderr))
	}
	k.done(err)
	if err != nil {
		return Result{}, err
	}
	return res, nil
}

// DestroySession implements CodeExecutionPort. An id that names no
// session is not an error.
func (p *Port) DestroySession(ctx context.Context, sessionID string) error {
	id, err := p.driverID(sessionID)
	if err != nil {
		var other *OtherNodeError
		if !errors.As(err, &other) {
			// Unknown here, and named for no other node: gone.
			err = nil
		}
		return p.refuse(ctx, OpDestroySession, loggedID(sessionID), err)
	}
	k, err := p.begin(ctx, OpDestroySession, sessionID)
	if err != nil {
		return err
	}
	k.observe()
	err = p.d.DestroySession(k.ctx, id)
	if errors.Is(err, ErrSessionNotFound) {
		err = nil
	}
	k.done(err)
	return err
}

// ListFiles implements CodeExecutionPort. An empty dir is the root.
func (p *Port) ListFiles(ctx context.Context, sessionID, dir string) ([]FileInfo, error) {
	if dir == "" {
		dir = "."
	}
	id, err := p.checkFileCall(sessionID, dir, false)
	if err != nil {
		return nil, p.refuse(ctx, OpListFiles, loggedID(sessionID), err)
	}
	k, err := p.begin(ctx, OpListFiles, sessionID)
	if err != nil {
		return nil, err
	}
	k.observe()
	files, err := p.d.ListFiles(k.ctx, id, dir)
	k.done(err)
	if err != nil {
		return nil, err
	}
	return files, nil
}

// checkFileCall checks a file call's session id and path, and returns
// the driver's id of the session.
func (p *Port) checkFileCall(sessionID, path string, required bool) (string, error) {
	id, err := p.driverID(sessionID)
	if err != nil {
		return "", err
	}
	return id, checkPath(path, required)
}

// loggedID is the session id observers see for a refused call: none for
// an id that cannot name a session (it may be anything a client sent).
func loggedID(sessionID string) string {
	if !usableID(sessionID) {
		return ""
	}
	return sessionID
}

// GetFile implements CodeExecutionPort. The reader fails with ErrClosed
// once the Port is closed.
func (p *Port) GetFile(ctx context.Context, sessionID, path string) (io.ReadCloser, FileInfo, error) {
	id, err := p.checkFileCall(sessionID, path, true)
	if err != nil {
		return nil, FileInfo{}, p.refuse(ctx, OpGetFile, loggedID(sessionID), err)
	}
	return p.open(ctx, OpGetFile, sessionID, func(ctx context.Context) (io.ReadCloser, FileInfo, error) {
		return p.d.GetFile(ctx, id, path)
	})
}

// GetOutputFile implements CodeExecutionPort. The reader fails with
// ErrClosed once the Port is closed.
func (p *Port) GetOutputFile(ctx context.Context, sessionID, fileID string) (io.ReadCloser, FileInfo, error) {
	id, err := p.driverID(sessionID)
	switch {
	case err != nil:
	case fileID == "":
		err = fmt.Errorf("%w: a file id is required", ErrInvalidRequest)
	case len(fileID) > MaxIDBytes || strings.IndexByte(fileID, 0) >= 0:
		err = fmt.Errorf("%w: no output file %q", ErrFileNotFound, shortID(fileID))
	}
	if err != nil {
		return nil, FileInfo{}, p.refuse(ctx, OpGetOutputFile, loggedID(sessionID), err)
	}
	return p.open(ctx, OpGetOutputFile, sessionID, func(ctx context.Context) (io.ReadCloser, FileInfo, error) {
		return p.d.GetOutputFile(ctx, id, fileID)
	})
}

// open runs a driver call that opens a file for reading, as op.
func (p *Port) open(ctx context.Context, op Op, sessionID string, get func(context.Context) (io.ReadCloser, FileInfo, error)) (io.ReadCloser, FileInfo, error) {
	k, err := p.begin(ctx, op, sessionID)
	if err != nil {
		return nil, FileInfo{}, err
	}
	k.observe()
	rc, info, err := get(k.ctx)
	if err == nil && rc == nil {
		err = fmt.Errorf("%w: %s adapter returned no reader", ErrRuntimeFailure, p.info.Name)
	}
	k.c.Bytes = info.Size
	if err != nil {
		k.done(err)
		if rc != nil {
			_ = rc.Close()
		}
		return nil, FileInfo{}, err
	}
	// The reader may still need the call's context (a remote download
	// streams under it): it is released when the reader is closed, or
	// when the Port is.
	k.finish(nil)
	return &closingReader{ReadCloser: rc, closing: p.closing, name: p.info.Name, release: k.release}, info, nil
}

// PutFile implements CodeExecutionPort. The upload is read through the
// call's context: a cancelled call, or Close, stops it between reads.
func (p *Port) PutFile(ctx context.Context, sessionID, path string, r io.Reader) (FileInfo, error) {
	id, err := p.checkFileCall(sessionID, path, true)
	if err != nil {
		return FileInfo{}, p.refuse(ctx, OpPutFile, loggedID(sessionID), err)
	}
	if r == nil {
		return FileInfo{}, p.refuse(ctx, OpPutFile, sessionID, fmt.Errorf("%w: no file contents", ErrInvalidRequest))
	}
	k, err := p.begin(ctx, OpPutFile, sessionID)
	if err != nil {
		return FileInfo{}, err
	}
	k.observe()
	info, err := p.d.PutFile(k.ctx, id, path, &contextReader{r: r, ctx: k.ctx})
	k.c.Bytes = info.Size
	k.done(err)
	if err != nil {
		return FileInfo{}, err
	}
	return info, nil
}

// Describe implements CodeExecutionPort.
func (p *Port) Describe(ctx context.Context) (Capabilities, error) {
	k, err := p.begin(ctx, OpDescribe, "")
	if err != nil {
		return Capabilities{}, err
	}
	k.observe()
	c, err := p.d.Describe(k.ctx)
	k.done(err)
	if err != nil {
		return Capabilities{}, err
	}
	c.Snapshots = p.SnapshotsOffered(k.ctx)
	return c, nil
}

// Ready reports whether a session would start now without waiting (for a
// driver that does not say, always; never once closed).
func (p *Port) Ready() bool {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return false
	}
	if r, ok := p.d.(Readier); ok {
		return r.Ready()
	}
	return true
}

// WaitReady waits until a session would start without waiting, or
// reports why it never will (ErrClosed once closed).
func (p *Port) WaitReady(ctx context.Context) error {
	k, err := p.begin(ctx, "", "")
	if err != nil {
		return err
	}
	defer k.release()
	defer p.inflight.Done()
	if r, ok := p.d.(Readier); ok {
		return r.WaitReady(k.ctx)
	}
	return nil
}

// Close stops the Port: later calls fail with ErrClosed, the calls in
// flight are cancelled and awaited, then the driver is closed (which
// destroys its sessions). Close is idempotent; every call returns the
// first one's error.
func (p *Port) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		p.mu.Unlock()
		p.cancel()
		p.inflight.Wait()
		p.closeErr = p.d.Close()
	})
	return p.closeErr
}

// contextReader stops reading once its context ends.
type contextReader struct {
	r   io.Reader
	ctx context.Context
}

func (c *contextReader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(b)
}

// closingReader fails once the Port is closed, and releases its call's
// context when closed.
type closingReader struct {
	io.ReadCloser
	closing context.Context
	name    string
	release func()
	once    sync.Once
}

func (c *closingReader) Close() error {
	err := c.ReadCloser.Close()
	c.once.Do(c.release)
	return err
}

func (c *closingReader) Read(b []byte) (int, error) {
	if c.closing.Err() != nil {
		return 0, fmt.Errorf("%s adapter: %w", c.name, ErrClosed)
	}
	return c.ReadCloser.Read(b)
}

// outputSink stands between a driver and an ExecuteRequest.OnOutput: it
// serializes the calls, counts what was delivered of each stream, delivers
// the rest of the Result when the call returns, and drops whatever a
// driver sends after that.
type outputSink struct {
	fn     func(Stream, []byte)
	mu     sync.Mutex
	closed bool
	sent   [2]int // bytes of stdout, stderr delivered
}

func (s *outputSink) write(stream Stream, b []byte) {
	i := 0
	switch stream {
	case Stdout:
	case Stderr:
		i = 1
	default:
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || len(b) == 0 {
		return
	}
	s.sent[i] += len(b)
	s.fn(stream, b)
}

// finish delivers what the driver did not stream of the result (all of it
// when the driver does not stream), and closes the sink.
func (s *outputSink) finish(res Result, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	if !ok {
		return
	}
	for i, st := range []struct {
		stream Stream
		text   string
	}{{Stdout, res.Stdout}, {Stderr, res.Stderr}} {
		if rest := st.text[min(s.sent[i], len(st.text)):]; rest != "" {
			s.fn(st.stream, []byte(rest))
		}
	}
}
