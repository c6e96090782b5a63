package port_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
)

// gateDriver is a driver whose Execute blocks until its context ends or
// the test opens the gate, and which records what reached it: enough to
// see what the Port does around a driver.
type gateDriver struct {
	info port.DriverInfo
	gate chan struct{}

	mu       sync.Mutex
	got      []port.ExecuteRequest
	started  chan struct{}
	closed   bool
	inFlight int
	put      []byte
}

func newGateDriver() *gateDriver {
	return &gateDriver{
		info: port.DriverInfo{Name: "gate", Limits: port.Limits{DefaultTimeout: 30 * time.Second, MaxTimeout: time.Minute, SourceBytes: 16, FileBytes: 8}},
		gate: make(chan struct{}), started: make(chan struct{}, 16),
	}
}

func (d *gateDriver) Info() port.DriverInfo { return d.info }
func (d *gateDriver) CreateSession(context.Context, port.CreateSessionRequest) (port.Session, error) {
	return port.Session{ID: "s1"}, nil
}
func (d *gateDriver) Execute(ctx context.Context, id string, req port.ExecuteRequest) (port.Result, error) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return port.Result{}, errors.New("driver called after Close")
	}
	d.got = append(d.got, req)
	d.inFlight++
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.inFlight--
		d.mu.Unlock()
	}()
	d.started <- struct{}{}
	select {
	case <-d.gate:
		return port.Result{Stdout: "ok", Outcome: port.OutcomeCompleted}, nil
	case <-ctx.Done():
		return port.Result{Outcome: port.OutcomeCancelled, ReturnCode: port.ReturnCodeCancelled}, nil
	}
}
func (d *gateDriver) DestroySession(context.Context, string) error { return port.ErrSessionNotFound }
func (d *gateDriver) ListFiles(context.Context, string, string) ([]port.FileInfo, error) {
	return nil, nil
}
func (d *gateDriver) GetFile(context.Context, string, string) (io.ReadCloser, port.FileInfo, error) {
	return io.NopCloser(strings.NewReader("data")), port.FileInfo{Size: 4}, nil
}
func (d *gateDriver) GetOutputFile(context.Context, string, string) (io.ReadCloser, port.FileInfo, error) {
	return io.NopCloser(strings.NewReader("kept")), port.FileInfo{Size: 4}, nil
}
func (d *gateDriver) PutFile(_ context.Context, _, _ string, r io.Reader) (port.FileInfo, error) {
	b, err := io.ReadAll(r)
	d.mu.Lock()
	d.put = b
	d.mu.Unlock()
	return port.FileInfo{Size: int64(len(b))}, err
}
func (d *gateDriver) Describe(context.Context) (port.Capabilities, error) {
	return port.Capabilities{Backend: "gate"}, nil
}
func (d *gateDriver) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inFlight != 0 {
		return errors.New("driver closed with calls in flight")
	}
	d.closed = true
	return nil
}

// recorder is an Observer that keeps every call.
type recorder struct {
	mu    sync.Mutex
	calls []port.Call
}

type ctxKey struct{}

func (r *recorder) StartCall(ctx context.Context, c *port.Call) context.Context {
	return context.WithValue(ctx, ctxKey{}, c.Op)
}
func (r *recorder) EndCall(ctx context.Context, c *port.Call) {
	if ctx.Value(ctxKey{}) != c.Op {
		panic("EndCall got a context StartCall did not return")
	}
	r.mu.Lock()
	r.calls = append(r.calls, *c)
	r.mu.Unlock()
}

func TestPortValidatesBeforeTheDriver(t *testing.T) {
	d := newGateDriver()
	p := port.New(d)
	defer p.Close()
	ctx := context.Background()
	cases := []struct {
		name string
		id   string
		req  port.ExecuteRequest
		want error
	}{
		{"no tool", "s1", port.ExecuteRequest{Code: "x"}, port.ErrUnsupportedTool},
		{"unknown tool", "s1", port.ExecuteRequest{Tool: "code_execution_v9", Code: "x"}, port.ErrUnsupportedTool},
		{"no code", "s1", port.ExecuteRequest{Tool: port.ToolCodeExecution}, port.ErrInvalidRequest},
		{"code over the limit", "s1", port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: strings.Repeat("x", 17)}, port.ErrInvalidRequest},
		{"code not UTF-8", "s1", port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "\xff"}, port.ErrInvalidRequest},
		{"no command", "s1", port.ExecuteRequest{Tool: port.ToolBashCodeExecution}, port.ErrInvalidRequest},
		{"no editor input", "s1", port.ExecuteRequest{Tool: port.ToolTextEditorExecution}, port.ErrInvalidRequest},
		{"file_text over the limit", "s1", port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &port.EditorInput{Command: port.EditorCreate, Path: "a", FileText: ptr("123456789")}}, port.ErrFileTooLarge},
		{"negative timeout", "s1", port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x", Timeout: -time.Second}, port.ErrInvalidRequest},
		{"empty session id", "", port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x"}, port.ErrSessionNotFound},
		{"dot session id", "..", port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x"}, port.ErrSessionNotFound},
		{"huge session id", strings.Repeat("i", port.MaxIDBytes+1), port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x"}, port.ErrSessionNotFound},
	}
	for _, c := range cases {
		_, err := p.Execute(ctx, c.id, c.req)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
		if len(err.Error()) > 300 {
			t.Errorf("%s: the error is not bounded: %d bytes", c.name, len(err.Error()))
		}
	}
	if _, err := p.CreateSession(ctx, port.CreateSessionRequest{IdleTimeout: -1}); !errors.Is(err, port.ErrInvalidRequest) {
		t.Errorf("negative hint: %v", err)
	}
	for _, path := range []string{"", "a\x00b", strings.Repeat("p", port.MaxPathBytes+1)} {
		if _, _, err := p.GetFile(ctx, "s1", path); !errors.Is(err, port.ErrInvalidRequest) {
			t.Errorf("GetFile(%.10q): %v", path, err)
		}
		if _, err := p.PutFile(ctx, "s1", path, strings.NewReader("x")); !errors.Is(err, port.ErrInvalidRequest) {
			t.Errorf("PutFile(%.10q): %v", path, err)
		}
	}
	for id, want := range map[string]error{
		"":                                     port.ErrInvalidRequest,
		"a\x00b":                               port.ErrFileNotFound,
		strings.Repeat("f", port.MaxIDBytes+1): port.ErrFileNotFound,
	} {
		if _, _, err := p.GetOutputFile(ctx, "s1", id); !errors.Is(err, want) || len(err.Error()) > 300 {
			t.Errorf("GetOutputFile(%.10q): %v, want %v", id, err, want)
		}
	}
	if _, _, err := p.GetOutputFile(ctx, "..", "file_1"); !errors.Is(err, port.ErrSessionNotFound) {
		t.Errorf("GetOutputFile in session ..: %v", err)
	}
	if len(d.got) != 0 {
		t.Fatalf("refused requests reached the driver: %+v", d.got)
	}
}

func ptr(s string) *string { return &s }

func TestPortCompletesRequestsAndResults(t *testing.T) {
	d := newGateDriver()
	close(d.gate)
	p := port.New(d)
	defer p.Close()
	ctx := context.Background()
	for _, c := range []struct{ asked, want time.Duration }{{0, 30 * time.Second}, {time.Hour, time.Minute}, {5 * time.Second, 5 * time.Second}} {
		res, err := p.Execute(ctx, "s1", port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x", Timeout: c.asked})
		if err != nil {
			t.Fatal(err)
		}
		got := d.got[len(d.got)-1]
		if got.Timeout != c.want || got.ToolUseID != "" {
			t.Errorf("asked %v: driver got timeout %v, id %q", c.asked, got.Timeout, got.ToolUseID)
		}
		// The driver left both out; the Port fills them in.
		if res.Tool != port.ToolCodeExecution || !strings.HasPrefix(res.ToolUseID, "srvtoolu_") {
			t.Errorf("result %+v", res)
		}
	}
	res, err := p.Execute(ctx, "s1", port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x", ToolUseID: "toolu_mine"})
	if err != nil || res.ToolUseID != "toolu_mine" {
		t.Fatalf("a caller's id was not kept: %v %+v", err, res)
	}
	if err := p.DestroySession(ctx, "gone"); err != nil {
		t.Fatalf("destroying an unknown session is not an error: %v", err)
	}
}

func TestCloseCancelsAndAwaitsCallsInFlight(t *testing.T) {
	d := newGateDriver()
	p := port.New(d)
	done := make(chan port.Result, 1)
	go func() {
		res, _ := p.Execute(context.Background(), "s1", port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x"})
		done <- res
	}()
	<-d.started
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v (the driver was closed with a call in flight?)", err)
	}
	// The driver's Close saw no call in flight (it fails otherwise), and
	// the call ended cancelled.
	if res := <-done; res.Outcome != port.OutcomeCancelled {
		t.Fatalf("outcome %s", res.Outcome)
	}
	ctx := context.Background()
	if _, err := p.CreateSession(ctx, port.CreateSessionRequest{}); !errors.Is(err, port.ErrClosed) {
		t.Fatalf("CreateSession after Close: %v", err)
	}
	if _, err := p.Describe(ctx); !errors.Is(err, port.ErrClosed) {
		t.Fatalf("Describe after Close: %v", err)
	}
	if err := p.WaitReady(ctx); !errors.Is(err, port.ErrClosed) || p.Ready() {
		t.Fatalf("WaitReady after Close: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
}

func TestReadersStopWhenThePortCloses(t *testing.T) {
	d := newGateDriver()
	p := port.New(d)
	rc, _, err := p.GetFile(context.Background(), "s1", "f")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	out, _, err := p.GetOutputFile(context.Background(), "s1", "file_1")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(rc); !errors.Is(err, port.ErrClosed) {
		t.Fatalf("read after Close: %v", err)
	}
	if _, err := io.ReadAll(out); !errors.Is(err, port.ErrClosed) {
		t.Fatalf("read of an output file after Close: %v", err)
	}
}

// A reader outlives its call: the context the driver read under stays
// alive until the reader is closed.
func TestAReaderKeepsItsCallsContext(t *testing.T) {
	d := &ctxFileDriver{gateDriver: newGateDriver()}
	p := port.New(d)
	defer p.Close()
	rc, _, err := p.GetFile(context.Background(), "s1", "f")
	if err != nil {
		t.Fatal(err)
	}
	if d.ctx.Err() != nil {
		t.Fatal("the call's context ended when GetFile returned")
	}
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	if d.ctx.Err() == nil {
		t.Fatal("closing the reader did not release the call's context")
	}
}

type ctxFileDriver struct {
	*gateDriver
	ctx context.Context
}

func (d *ctxFileDriver) GetFile(ctx context.Context, id, path string) (io.ReadCloser, port.FileInfo, error) {
	d.ctx = ctx
	return d.gateDriver.GetFile(ctx, id, path)
}

func TestUploadsStopWithTheirContext(t *testing.T) {
	d := newGateDriver()
	p := port.New(d)
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.PutFile(ctx, "s1", "f", strings.NewReader("data")); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled upload: %v", err)
	}
	if len(d.put) != 0 {
		t.Fatalf("%d bytes were read after the context ended", len(d.put))
	}
}

func TestObserversAndLogSeeEveryCall(t *testing.T) {
	d := newGateDriver()
	close(d.gate)
	var logs bytes.Buffer
	rec := &recorder{}
	p := port.New(d, port.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))), port.WithObserver(rec))
	ctx := context.Background()
	secret := "print(1)#s3cr3t"
	if _, err := p.Execute(ctx, "s1", port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: secret}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Execute(ctx, "", port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: secret}); err == nil {
		t.Fatal("an empty session id was accepted")
	}
	if _, err := p.PutFile(ctx, "s1", "secret-name.txt", strings.NewReader("s3cr3t contents")); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.calls) != 3 {
		t.Fatalf("observed %d calls: %+v", len(rec.calls), rec.calls)
	}
	ok, refused, put := rec.calls[0], rec.calls[1], rec.calls[2]
	if ok.Op != port.OpExecute || ok.Outcome != port.OutcomeCompleted || ok.Tool != port.ToolCodeExecution || ok.Timeout != 30*time.Second || ok.Err != nil {
		t.Errorf("execute: %+v", ok)
	}
	if refused.Err == nil || port.ErrorCode(refused.Err) != "session_not_found" {
		t.Errorf("refusal: %+v", refused)
	}
	if put.Op != port.OpPutFile || put.Bytes != int64(len("s3cr3t contents")) {
		t.Errorf("put: %+v", put)
	}
	out := logs.String()
	if strings.Contains(out, "s3cr3t") || strings.Contains(out, "secret-name") {
		t.Fatalf("the log holds user data:\n%s", out)
	}
	if !strings.Contains(out, "op=execute") || !strings.Contains(out, "outcome=completed") || !strings.Contains(out, "error_code=session_not_found") {
		t.Fatalf("the log lacks the calls:\n%s", out)
	}
}

func TestErrorCodesCrossBoundaries(t *testing.T) {
	codes := port.ErrorCodes()
	seen := map[string]bool{}
	for _, code := range codes {
		if seen[code] {
			t.Fatalf("code %q twice", code)
		}
		seen[code] = true
		err, ok := port.ErrorFromCode(code, "remote said so", 3*time.Second)
		if !ok || port.ErrorCode(err) != code || err.Error() != "remote said so" {
			t.Errorf("%s: rebuilt as %v (%q)", code, err, port.ErrorCode(err))
		}
	}
	var ce *port.CapacityError
	if err, _ := port.ErrorFromCode("at_capacity", "full", 3*time.Second); !errors.As(err, &ce) || ce.RetryAfter != 3*time.Second {
		t.Errorf("at_capacity lost its hint: %v", err)
	}
	if _, ok := port.ErrorFromCode("from_the_future", "x", 0); ok {
		t.Error("an unknown code was accepted")
	}
	// An error wrapping two sentinels gets the first code of the table,
	// whatever order it wraps them in.
	a := errors.Join(port.ErrRuntimeFailure, port.ErrClosed)
	b := errors.Join(port.ErrClosed, port.ErrRuntimeFailure)
	if port.ErrorCode(a) != "closed" || port.ErrorCode(b) != "closed" {
		t.Errorf("precedence: %q %q", port.ErrorCode(a), port.ErrorCode(b))
	}
	if port.ErrorCode(errors.New("plain")) != "" || port.ErrorCode(nil) != "" {
		t.Error("a plain error has a code")
	}
}

// streamDriver streams "a" of its result "ab\n", and keeps the callback
// to try it after returning.
type streamDriver struct {
	*gateDriver
	late func(port.Stream, []byte)
}

func (d *streamDriver) Execute(_ context.Context, _ string, req port.ExecuteRequest) (port.Result, error) {
	if req.OnOutput == nil {
		return port.Result{}, errors.New("no OnOutput for a streaming driver")
	}
	req.OnOutput(port.Stdout, []byte("a"))
	req.OnOutput("bogus", []byte("x"))
	d.late = req.OnOutput
	return port.Result{Stdout: "ab\n", Stderr: "note\n", Outcome: port.OutcomeCompleted}, nil
}

func TestOutputReachesOnOutputOnceAndInOrder(t *testing.T) {
	var got []string
	record := func(s port.Stream, b []byte) { got = append(got, string(s)+":"+string(b)) }

	// A driver that does not stream: the Port delivers each stream at
	// the end, and never gives the driver the callback.
	gd := newGateDriver()
	close(gd.gate)
	p := port.New(gd)
	defer p.Close()
	if _, err := p.Execute(context.Background(), "s1", port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x", OnOutput: record}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "stdout:ok" {
		t.Fatalf("non-streaming driver: %q", got)
	}

	// A streaming driver: what it sent, then the rest of each stream;
	// nothing of another stream name, nothing after the return.
	got = nil
	sd := &streamDriver{gateDriver: newGateDriver()}
	sd.info.StreamsOutput = true
	sp := port.New(sd)
	defer sp.Close()
	if _, err := sp.Execute(context.Background(), "s1", port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x", OnOutput: record}); err != nil {
		t.Fatal(err)
	}
	sd.late(port.Stdout, []byte("late"))
	if strings.Join(got, "|") != "stdout:a|stdout:b\n|stderr:note\n" {
		t.Fatalf("streaming driver: %q", got)
	}
}

// source is a request body made as it is read, never held whole: prefix,
// then size bytes of filler. read counts the bytes taken from it.
type source struct {
	prefix []byte
	size   int64
	read   atomic.Int64
}

func (s *source) Read(b []byte) (int, error) {
	off := s.read.Load()
	if off >= int64(len(s.prefix))+s.size {
		return 0, io.EOF
	}
	n := 0
	if off < int64(len(s.prefix)) {
		n = copy(b, s.prefix[off:])
	} else {
		n = int(min(int64(len(b)), int64(len(s.prefix))+s.size-off))
		clear(b[:n])
	}
	s.read.Add(int64(n))
	return n, nil
}

// forgedHead is the start of a snapshot with the given clear-text header,
// as an attacker without the key can write it.
func forgedHead(header string) []byte {
	b := []byte("codeport-snapshot-v2\n")
	b = binary.BigEndian.AppendUint32(b, uint32(len(header)))
	return append(b, header...)
}

// restoresX42 restores the snapshot r holds, of a session that ran
// x = 42 (snapshotOfX42), checks that the restored session has x, and
// destroys it.
func restoresX42(p *port.Port, r io.Reader) error {
	ctx := context.Background()
	s, err := p.RestoreSession(ctx, r, port.SnapshotOptions{})
	if err != nil {
		return err
	}
	res, err := p.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(x)"})
	if err != nil || res.Stdout != "42\n" {
		return fmt.Errorf("restored: %+v %v", res, err)
	}
	return p.DestroySession(ctx, s.ID)
}

// snapshotOfX42 makes a session in p that has run x = 42, and returns it
// (still live) with its snapshot.
func snapshotOfX42(t *testing.T, p *port.Port) (port.Session, *bytes.Buffer) {
	t.Helper()
	ctx := context.Background()
	s, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x = 42"}); err != nil {
		t.Fatal(err)
	}
	var snap bytes.Buffer
	if err := p.SnapshotSession(ctx, s.ID, &snap, port.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	return s, &snap
}

// A restore is admitted before it reads: at capacity, or announced over
// the cap, it is refused before a byte of the snapshot is read; a body
// that is not a snapshot of this adapter's for this tenant is refused once
// its header has been read, never spooled whole; and a temporary file the
// disk has no room for is a capacity refusal with a retry hint, not an
// invalid snapshot.
func TestRestoreAdmittedBeforeReading(t *testing.T) {
	ctx := context.Background()
	key := bytes.Repeat([]byte("k"), port.MinSnapshotKeyBytes)
	p := wasmtest.New(t, func(c wasm.Config) wasm.Config { return c.WithMaxSessions(1) }, port.WithSnapshotKey(key))

	// The cap follows from the limits, and is far under the old fixed
	// 2 GiB at the default ones.
	limit := p.MaxSnapshotBytes()
	if want := port.MaxSnapshotBytesFor(p.Limits()); limit != want || limit <= p.Limits().MemoryBytes+p.Limits().WorkspaceBytes || limit >= port.DefaultMaxSnapshotBytes {
		t.Fatalf("snapshot cap %d; want MaxSnapshotBytesFor(limits) = %d, above memory and workspace and under %d", limit, want, port.DefaultMaxSnapshotBytes)
	}

	s, snap := snapshotOfX42(t, p)

	// At capacity: refused at once, with a retry hint, nothing read.
	body := &source{prefix: snap.Bytes(), size: 2 << 30}
	_, err := p.RestoreSession(ctx, body, port.SnapshotOptions{})
	var ce *port.CapacityError
	if !errors.As(err, &ce) || ce.RetryAfter <= 0 || errors.Is(err, port.ErrRateLimited) {
		t.Fatalf("restore at capacity: %v; want a capacity error with a retry hint", err)
	}
	if n := body.read.Load(); n != 0 {
		t.Fatalf("a restore refused at capacity read %d bytes of its body", n)
	}
	if err := p.DestroySession(ctx, s.ID); err != nil {
		t.Fatal(err)
	}

	// Announced over the cap: refused before it is read.
	body = &source{size: 2 << 30}
	_, err = p.RestoreSession(ctx, body, port.SnapshotOptions{Size: limit + 1})
	if !errors.Is(err, port.ErrInvalidSnapshot) || !strings.Contains(err.Error(), "larger than") || body.read.Load() != 0 {
		t.Fatalf("restore announced at %d bytes over a cap of %d: %v after reading %d bytes", limit+1, limit, err, body.read.Load())
	}

	// Not a snapshot, or another tenant's or adapter's: refused once the
	// header is read, not after 64 MiB were spooled.
	for name, head := range map[string][]byte{
		"not a snapshot":  []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		"another tenant":  forgedHead(`{"adapter":"wasm","tenant":"someone else"}`),
		"another adapter": forgedHead(`{"adapter":"subprocess","tenant":""}`),
		"no seal salt":    forgedHead(`{"adapter":"wasm","tenant":""}`),
		"huge header":     forgedHead(strings.Repeat(" ", 70<<10)),
	} {
		body := &source{prefix: head, size: 64 << 20}
		_, err := p.RestoreSession(ctx, body, port.SnapshotOptions{})
		if !errors.Is(err, port.ErrInvalidSnapshot) {
			t.Errorf("%s: %v; want ErrInvalidSnapshot", name, err)
		}
		if n := body.read.Load(); n > 70<<10+64 {
			t.Errorf("%s: %d bytes read before the refusal; want the header at most", name, n)
		}
	}

	// The disk is full: 503 material, not the snapshot's fault; the
	// same snapshot restores once there is room. The wasm adapter
	// restores as it reads (port.StreamRestorer) and spools nothing, so
	// the spool is reached with that turned off; with it on, a full
	// disk for the spool is no matter.
	port.SetSpoolAlways(p, true)
	port.SetSpoolFull(p, true)
	_, err = p.RestoreSession(ctx, bytes.NewReader(snap.Bytes()), port.SnapshotOptions{})
	if !errors.As(err, &ce) || ce.RetryAfter <= 0 || errors.Is(err, port.ErrInvalidSnapshot) || port.ErrorCode(err) != "at_capacity" {
		t.Fatalf("restore with a full disk: %v (code %q); want at_capacity with a retry hint", err, port.ErrorCode(err))
	}
	port.SetSpoolFull(p, false)
	r, err := p.RestoreSession(ctx, bytes.NewReader(snap.Bytes()), port.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Execute(ctx, r.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(x)"})
	if err != nil || res.Stdout != "42\n" {
		t.Fatalf("restored: %+v %v", res, err)
	}
	if err := p.DestroySession(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	port.SetSpoolAlways(p, false)
	port.SetSpoolFull(p, true)
	r, err = p.RestoreSession(ctx, bytes.NewReader(snap.Bytes()), port.SnapshotOptions{})
	if err != nil {
		t.Fatalf("streamed restore with a full spool: %v; want no spool used", err)
	}
	res, err = p.Execute(ctx, r.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(x)"})
	if err != nil || res.Stdout != "42\n" {
		t.Fatalf("restored as read: %+v %v", res, err)
	}
}

// The cap is enough: a session filled to its memory and workspace limits
// with bytes that do not compress has a snapshot under it.
func TestSnapshotCapHoldsAFullSession(t *testing.T) {
	ctx := context.Background()
	key := bytes.Repeat([]byte("k"), port.MinSnapshotKeyBytes)
	p := wasmtest.New(t, func(c wasm.Config) wasm.Config {
		return c.WithMemoryLimit(64 << 20).WithWorkspaceLimit(8 << 20).WithWorkspaceEntries(64).WithFileLimit(8 << 20)
	}, port.WithSnapshotKey(key))
	s, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	code := `import os
junk = []
try:
    while True:
        junk.append(os.urandom(1 << 20))
except MemoryError:
    junk.pop()
n = 0
try:
    for i in range(60):
        with open(f"f{i}", "wb") as f:
            f.write(os.urandom(1 << 17))
        n += 1
except OSError:
    pass
print(len(junk) > 16, n > 16)`
	res, err := p.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code})
	if err != nil || res.Stdout != "True True\n" {
		t.Fatalf("filling the session: %+v %v", res, err)
	}
	var w countingWriter
	if err := p.SnapshotSession(ctx, s.ID, &w, port.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	if w.n > p.MaxSnapshotBytes() {
		t.Fatalf("a full session's snapshot is %d bytes, over the cap of %d", w.n, p.MaxSnapshotBytes())
	}
	t.Logf("full session: snapshot %d bytes, cap %d", w.n, p.MaxSnapshotBytes())
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(b []byte) (int, error) { w.n += int64(len(b)); return len(b), nil }

// A restore as the snapshot is read (the wasm adapter's) takes a body in
// whatever pieces it arrives, a byte at a time included; one whose reading
// fails part-way is refused as the snapshot's failure, and one cut short
// as too short or altered, each leaving no session.
func TestRestoreReadsABodyInPieces(t *testing.T) {
	ctx := context.Background()
	key := bytes.Repeat([]byte("k"), port.MinSnapshotKeyBytes)
	p := wasmtest.New(t, func(c wasm.Config) wasm.Config { return c.WithMaxSessions(1) }, port.WithSnapshotKey(key))
	s, snap := snapshotOfX42(t, p)
	if err := p.DestroySession(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	b := snap.Bytes()
	for name, r := range map[string]io.Reader{
		"a byte at a time":  iotest.OneByteReader(bytes.NewReader(b)),
		"half of each read": iotest.HalfReader(bytes.NewReader(b)),
		"its end with data": iotest.DataErrReader(bytes.NewReader(b)),
	} {
		if err := restoresX42(p, r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	broken := io.MultiReader(bytes.NewReader(b[:len(b)/2]), iotest.ErrReader(errors.New("connection reset")))
	for name, c := range map[string]struct {
		r   io.Reader
		why string
	}{
		"a read that fails": {broken, "connection reset"},
		"cut in half":       {bytes.NewReader(b[:len(b)/2]), ""},
		"cut in its seal":   {bytes.NewReader(b[:len(b)-5]), "seal"},
	} {
		_, err := p.RestoreSession(ctx, c.r, port.SnapshotOptions{})
		if !errors.Is(err, port.ErrInvalidSnapshot) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: %v; want ErrInvalidSnapshot saying %q", name, err, c.why)
		}
		// The one slot is free: nothing was left.
		s, err := p.CreateSession(ctx, port.CreateSessionRequest{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := p.DestroySession(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// A snapshot sealed in format 1 (HMAC-SHA256 over the whole stream, the
// format earlier builds wrote) still restores, as it streams and when
// spooled; one altered is refused, and a format 2 snapshot relabelled as
// format 1 is refused as forged.
func TestFormat1SealStillRestores(t *testing.T) {
	ctx := context.Background()
	key := bytes.Repeat([]byte("k"), port.MinSnapshotKeyBytes)
	p := wasmtest.New(t, nil, port.WithSnapshotKey(key))
	_, snap := snapshotOfX42(t, p)
	v2 := snap.Bytes()
	const magic1, magic2 = "codeport-snapshot-v1\n", "codeport-snapshot-v2\n"
	if !bytes.HasPrefix(v2, []byte(magic2)) {
		t.Fatalf("a snapshot starts %q; want format 2's magic", v2[:len(magic2)])
	}
	// Format 1: the same header without the salt, the same payload and
	// its length, sealed with HMAC-SHA256 under the key.
	hlen := int(binary.BigEndian.Uint32(v2[len(magic2):]))
	var hdr map[string]any
	if err := json.Unmarshal(v2[len(magic2)+4:len(magic2)+4+hlen], &hdr); err != nil {
		t.Fatal(err)
	}
	if _, ok := hdr["salt"]; !ok {
		t.Fatalf("format 2's header has no salt: %v", hdr)
	}
	delete(hdr, "salt")
	h1, err := json.Marshal(hdr)
	if err != nil {
		t.Fatal(err)
	}
	payloadAndLength := v2[len(magic2)+4+hlen : len(v2)-sha256.Size]
	v1 := binary.BigEndian.AppendUint32([]byte(magic1), uint32(len(h1)))
	v1 = append(append(v1, h1...), payloadAndLength...)
	mac := hmac.New(sha256.New, key)
	mac.Write(v1)
	v1 = mac.Sum(v1)

	relabelled := bytes.Clone(v2)
	copy(relabelled, magic1)
	altered := bytes.Clone(v1)
	altered[len(altered)-sha256.Size-100] ^= 1
	for _, spool := range []bool{false, true} {
		port.SetSpoolAlways(p, spool)
		if err := restoresX42(p, bytes.NewReader(v1)); err != nil {
			t.Fatalf("spooled %v: format 1: %v", spool, err)
		}
		for name, b := range map[string][]byte{"format 1 altered": altered, "format 2 relabelled as 1": relabelled} {
			if _, err := p.RestoreSession(ctx, bytes.NewReader(b), port.SnapshotOptions{}); !errors.Is(err, port.ErrInvalidSnapshot) || !strings.Contains(err.Error(), "seal") {
				t.Errorf("spooled %v: %s: %v; want ErrInvalidSnapshot for its seal", spool, name, err)
			}
		}
	}
}
