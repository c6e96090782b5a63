package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/codeport/codeport/port"
)

// fakePort is an in-memory port.CodeExecutionPort whose answers a test
// chooses. Sessions hold files; Execute echoes its input unless a test sets
// result or execute. When err is set every method returns it (DestroySession
// too), which is how the status mapping is driven.
type fakePort struct {
	mu sync.Mutex

	err     error
	result  *port.Result
	caps    port.Capabilities
	create  func(ctx context.Context, req port.CreateSessionRequest) (port.Session, error)
	execute func(ctx context.Context, id string, req port.ExecuteRequest) (port.Result, error)
	putFile func(ctx context.Context, id, name string, r io.Reader) (port.FileInfo, error)
	// getInfo, when set, replaces the FileInfo GetFile reports.
	getInfo func(port.FileInfo) port.FileInfo
	// breaksToolUseIDs makes Execute return the results of result and
	// execute as they are. Otherwise a result without a tool use id gets
	// the request's or a made-up one, as every port promises.
	breaksToolUseIDs bool

	next     int
	sessions map[string]map[string][]byte

	// What the port was asked, for assertions.
	lastCreate port.CreateSessionRequest
	// createTenants is port.TenantOf of each CreateSession's context.
	createTenants []string
	lastExec      port.ExecuteRequest
	lastExecID    string
	lastDir       string
	lastGet       string
	// outputs maps an output file's id to the workspace file it serves.
	outputs     map[string]string
	lastPutPath string
	putRead     int64
	putCalls    int
	destroyed   []string
}

var _ port.CodeExecutionPort = (*fakePort)(nil)

func newFakePort() *fakePort {
	return &fakePort{sessions: map[string]map[string][]byte{}}
}

var fakeEpoch = time.Date(2026, 3, 1, 12, 0, 0, 250_000_000, time.UTC)

func (f *fakePort) failure() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// addSession creates a session directly, for tests that start from one.
func (f *fakePort) addSession(id string, files map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ws := map[string][]byte{}
	for name, content := range files {
		ws[name] = []byte(content)
	}
	f.sessions[id] = ws
}

func (f *fakePort) CreateSession(ctx context.Context, req port.CreateSessionRequest) (port.Session, error) {
	if err := f.failure(); err != nil {
		return port.Session{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastCreate = req
	f.createTenants = append(f.createTenants, port.TenantOf(ctx))
	if f.create != nil {
		return f.create(ctx, req)
	}
	f.next++
	id := fmt.Sprintf("sess-%d", f.next)
	f.sessions[id] = map[string][]byte{}
	idle := req.IdleTimeout
	if idle == 0 || idle > 10*time.Minute {
		idle = 10 * time.Minute
	}
	return port.Session{
		ID:             id,
		IdleTimeout:    idle,
		MaxLifetime:    req.MaxLifetime, // zero: not reported
		CreatedAt:      fakeEpoch,
		LastActivityAt: fakeEpoch,
	}, nil
}

func (f *fakePort) Execute(ctx context.Context, id string, req port.ExecuteRequest) (port.Result, error) {
	if err := f.failure(); err != nil {
		return port.Result{}, err
	}
	f.mu.Lock()
	f.lastExec, f.lastExecID = req, id
	_, ok := f.sessions[id]
	hook, fixed, breaks := f.execute, f.result, f.breaksToolUseIDs
	f.mu.Unlock()
	promised := func(res port.Result) port.Result {
		if res.ToolUseID == "" && !breaks {
			res.ToolUseID = req.ToolUseID
			if res.ToolUseID == "" {
				res.ToolUseID = "generated-by-port"
			}
		}
		return res
	}
	if hook != nil {
		res, err := hook(ctx, id, req)
		return promised(res), err
	}
	if !ok {
		return port.Result{}, fmt.Errorf("fake: %w", port.ErrSessionNotFound)
	}
	if fixed != nil {
		return promised(*fixed), nil
	}
	id2 := req.ToolUseID
	if id2 == "" {
		id2 = "generated-by-port"
	}
	return port.Result{
		ToolUseID:  id2,
		Tool:       req.Tool,
		Stdout:     "ran: " + req.Code + req.Command,
		ReturnCode: 0,
		Outcome:    port.OutcomeCompleted,
		Duration:   3 * time.Millisecond,
	}, nil
}

func (f *fakePort) DestroySession(_ context.Context, id string) error {
	if err := f.failure(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.sessions, id)
	f.destroyed = append(f.destroyed, id)
	return nil
}

func (f *fakePort) ListFiles(_ context.Context, id, dir string) ([]port.FileInfo, error) {
	if err := f.failure(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastDir = dir
	ws, ok := f.sessions[id]
	if !ok {
		return nil, fmt.Errorf("fake: %w", port.ErrSessionNotFound)
	}
	var out []port.FileInfo
	for name, content := range ws {
		if dir != "." && dir != "" && !strings.HasPrefix(name, dir+"/") {
			continue
		}
		out = append(out, fakeInfo(name, content))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func (f *fakePort) GetFile(_ context.Context, id, name string) (io.ReadCloser, port.FileInfo, error) {
	if err := f.failure(); err != nil {
		return nil, port.FileInfo{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastGet = name
	ws, ok := f.sessions[id]
	if !ok {
		return nil, port.FileInfo{}, fmt.Errorf("fake: %w", port.ErrSessionNotFound)
	}
	content, ok := ws[name]
	if !ok {
		return nil, port.FileInfo{}, fmt.Errorf("fake: %s: %w", name, port.ErrFileNotFound)
	}
	info := fakeInfo(name, content)
	if f.getInfo != nil {
		info = f.getInfo(info)
	}
	return io.NopCloser(bytes.NewReader(content)), info, nil
}

func (f *fakePort) GetOutputFile(_ context.Context, id, fileID string) (io.ReadCloser, port.FileInfo, error) {
	if err := f.failure(); err != nil {
		return nil, port.FileInfo{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ws, ok := f.sessions[id]
	if !ok {
		return nil, port.FileInfo{}, fmt.Errorf("fake: %w", port.ErrSessionNotFound)
	}
	name, ok := f.outputs[fileID]
	if !ok {
		return nil, port.FileInfo{}, fmt.Errorf("fake: output %s: %w", fileID, port.ErrFileNotFound)
	}
	content := ws[name]
	return io.NopCloser(bytes.NewReader(content)), fakeInfo(name, content), nil
}

func (f *fakePort) PutFile(ctx context.Context, id, name string, r io.Reader) (port.FileInfo, error) {
	if err := f.failure(); err != nil {
		return port.FileInfo{}, err
	}
	f.mu.Lock()
	f.lastPutPath = name
	f.putCalls++
	_, ok := f.sessions[id]
	hook := f.putFile
	f.mu.Unlock()
	if hook != nil {
		return hook(ctx, id, name, r)
	}
	if !ok {
		return port.FileInfo{}, fmt.Errorf("fake: %w", port.ErrSessionNotFound)
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, r)
	f.mu.Lock()
	f.putRead += n
	f.mu.Unlock()
	if err != nil {
		// Like a real adapter: wrap the read error in its own terms.
		return port.FileInfo{}, fmt.Errorf("fake: writing %s: %w", name, port.ErrRuntimeFailure)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sessions[id][name] = buf.Bytes()
	return fakeInfo(name, buf.Bytes()), nil
}

func (f *fakePort) Describe(context.Context) (port.Capabilities, error) {
	if err := f.failure(); err != nil {
		return port.Capabilities{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.caps, nil
}

func (f *fakePort) Close() error { return nil }

func fakeInfo(name string, content []byte) port.FileInfo {
	mt := "application/octet-stream"
	switch path.Ext(name) {
	case ".csv":
		mt = "text/csv"
	case ".txt", ".py":
		mt = "text/plain; charset=utf-8"
	case ".json":
		mt = "application/json"
	}
	return port.FileInfo{Path: name, Size: int64(len(content)), ModTime: fakeEpoch, MimeType: mt}
}
