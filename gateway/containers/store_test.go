package containers_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/gateway/containers"
	"github.com/codeport/codeport/internal/testkit/fakeclock"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
)

// tenantKey carries a test's tenant in a context.
type tenantKey struct{}

func as(tenant string) context.Context {
	return context.WithValue(context.Background(), tenantKey{}, tenant)
}

func tenantOf(ctx context.Context) string {
	t, _ := ctx.Value(tenantKey{}).(string)
	return t
}

// files is an in-memory file store: the gateway's side of FileSource.
type files map[string]struct{ owner, name, data string }

func (fs files) OpenFile(_ context.Context, tenant, id string) (string, io.ReadCloser, error) {
	f, ok := fs[id]
	if !ok || f.owner != tenant {
		return "", nil, fmt.Errorf("%w: no file %q", containers.ErrFileNotFound, id)
	}
	return f.name, io.NopCloser(strings.NewReader(f.data)), nil
}

// newStore opens a store over a fresh in-process adapter, with tenants
// read from the context and a hand-moved clock.
func newStore(t *testing.T, opts ...containers.Option) (*containers.Store, *port.Port, *fakeclock.Clock) {
	t.Helper()
	p := wasmtest.New(t, func(c wasm.Config) wasm.Config { return c.WithShellAtStart(false) })
	clk := fakeclock.New(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
	s := containers.New(p, append([]containers.Option{containers.WithTenantOf(tenantOf), containers.WithClock(clk.Now)}, opts...)...)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, p, clk
}

func run(t *testing.T, s *containers.Store, ctx context.Context, id, code string) (port.Result, []containers.File) {
	t.Helper()
	res, produced, err := s.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code})
	if err != nil {
		t.Fatalf("Execute(%q): %v", code, err)
	}
	if res.Outcome != port.OutcomeCompleted {
		t.Fatalf("Execute(%q): %s, stderr %q", code, res.Outcome, res.Stderr)
	}
	return res, produced
}

func content(t *testing.T, s *containers.Store, ctx context.Context, id, fileID string) string {
	t.Helper()
	rc, _, err := s.Content(ctx, id, fileID)
	if err != nil {
		t.Fatalf("Content(%s): %v", fileID, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCallsInAContainerContinueItsState(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := as("acme")
	c, err := s.Create(ctx, containers.CreateParams{Name: "analysis"})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(containers.RoutePattern).MatchString(c.ID) || c.Name != "analysis" || c.Tenant != "acme" {
		t.Fatalf("container %+v", c)
	}
	if c.Expiry != containers.DefaultExpiry || c.MemoryLimit <= 0 {
		t.Errorf("expiry %v, memory limit %d: want the default and the port's limit", c.Expiry, c.MemoryLimit)
	}
	run(t, s, ctx, c.ID, "x = 6 * 7\n_ = open('out.txt', 'w').write('first')")
	res, produced := run(t, s, ctx, c.ID, "print(x)\n_ = open('out.txt', 'w').write('second')")
	if res.Stdout != "42\n" {
		t.Fatalf("the second call printed %q, want the first call's x", res.Stdout)
	}
	if len(produced) != 1 || produced[0].Name != "out.txt" || produced[0].Source != "assistant" || produced[0].ContainerID != c.ID || !strings.HasPrefix(produced[0].ID, containers.FileIDPrefix) {
		t.Fatalf("produced %+v", produced)
	}
	if !strings.HasSuffix(produced[0].Path, "/out.txt") || produced[0].Bytes != int64(len("second")) {
		t.Errorf("path %q, bytes %d", produced[0].Path, produced[0].Bytes)
	}
	// One id per path: the first call's record is the same file.
	page, err := s.Files(ctx, c.ID, containers.ListParams{})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != produced[0].ID {
		t.Fatalf("Files: %+v, %v", page, err)
	}
	if got := content(t, s, ctx, c.ID, produced[0].ID); got != "second" {
		t.Errorf("content %q, want what the file holds now", got)
	}
}

func TestAnotherTenantsContainerIsUnknown(t *testing.T) {
	s, _, _ := newStore(t)
	c, err := s.Create(as("acme"), containers.CreateParams{Name: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.Upload(as("acme"), c.ID, "data.csv", strings.NewReader("a,b\n"))
	if err != nil {
		t.Fatal(err)
	}
	other := as("globex")
	checks := map[string]error{}
	_, checks["Get"] = s.Get(other, c.ID)
	_, _, checks["Execute"] = s.Execute(other, c.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(1)"})
	_, checks["Upload"] = s.Upload(other, c.ID, "x.txt", strings.NewReader("x"))
	_, checks["Files"] = s.Files(other, c.ID, containers.ListParams{})
	_, checks["File"] = s.File(other, c.ID, f.ID)
	_, _, checks["Content"] = s.Content(other, c.ID, f.ID)
	checks["DeleteFile"] = s.DeleteFile(other, c.ID, f.ID)
	checks["Delete"] = s.Delete(other, c.ID)
	for op, err := range checks {
		if !errors.Is(err, containers.ErrContainerNotFound) {
			t.Errorf("%s of another tenant's container: %v, want ErrContainerNotFound", op, err)
		}
	}
	if page, err := s.List(other, containers.ListParams{}); err != nil || len(page.Data) != 0 {
		t.Errorf("List of another tenant: %+v, %v", page, err)
	}
	// Still the owner's, untouched.
	if got := content(t, s, as("acme"), c.ID, f.ID); got != "a,b\n" {
		t.Errorf("owner's file %q", got)
	}
}

func TestAnExpiredContainerIsGoneWithItsSession(t *testing.T) {
	s, p, clk := newStore(t, containers.WithDefaultExpiry(5*time.Minute))
	ctx := as("")
	idle, err := s.Create(ctx, containers.CreateParams{Name: "idle"})
	if err != nil {
		t.Fatal(err)
	}
	busy, err := s.Create(ctx, containers.CreateParams{Name: "busy"})
	if err != nil {
		t.Fatal(err)
	}
	if idle.Expiry != 5*time.Minute || !idle.ExpiresAt().Equal(clk.Now().Add(5*time.Minute)) {
		t.Fatalf("expiry %v, expires at %v", idle.Expiry, idle.ExpiresAt())
	}
	idleSession := s.SessionOf(idle.ID)
	clk.Advance(4 * time.Minute)
	run(t, s, ctx, busy.ID, "print(1)") // activity moves its expiry
	clk.Advance(2 * time.Minute)
	s.Sweep()
	if _, err := s.Get(ctx, idle.ID); !errors.Is(err, containers.ErrContainerNotFound) {
		t.Errorf("Get of an expired container: %v", err)
	}
	if _, err := p.ListFiles(context.Background(), idleSession, ""); !errors.Is(err, port.ErrSessionNotFound) {
		t.Errorf("the expired container's session: %v, want it destroyed", err)
	}
	if _, err := s.Get(ctx, busy.ID); err != nil {
		t.Errorf("a container active 2 minutes ago ended with it: %v", err)
	}
	// Found expired on access, before any sweep.
	clk.Advance(5 * time.Minute)
	if _, _, err := s.Execute(ctx, busy.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(1)"}); !errors.Is(err, containers.ErrContainerNotFound) {
		t.Errorf("Execute in an expired container: %v", err)
	}
	if page, _ := s.List(ctx, containers.ListParams{}); len(page.Data) != 0 {
		t.Errorf("List shows expired containers: %+v", page.Data)
	}
}

func TestAContainerWhoseSessionEndedIsGone(t *testing.T) {
	s, p, _ := newStore(t, containers.WithMaxContainers(1))
	ctx := as("")
	c, err := s.Create(ctx, containers.CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.DestroySession(context.Background(), s.SessionOf(c.ID)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Execute(ctx, c.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(1)"}); !errors.Is(err, containers.ErrContainerNotFound) {
		t.Fatalf("Execute after the backend ended the session: %v", err)
	}
	// Its slot is free again.
	if _, err := s.Create(ctx, containers.CreateParams{}); err != nil {
		t.Errorf("Create after the only container ended: %v", err)
	}
}

func TestLimits(t *testing.T) {
	s, _, _ := newStore(t, containers.WithMaxContainers(2), containers.WithMaxFiles(2))
	ctx := as("acme")
	var ids []string
	for range 2 {
		c, err := s.Create(ctx, containers.CreateParams{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	var le *containers.LimitError
	if _, err := s.Create(ctx, containers.CreateParams{}); !errors.As(err, &le) || le.What != "containers" || le.Max != 2 {
		t.Fatalf("third container: %v, want a LimitError of 2 containers", err)
	}
	if _, err := s.Create(as("globex"), containers.CreateParams{}); err != nil {
		t.Errorf("another tenant is held to its own count: %v", err)
	}
	if err := s.Delete(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, containers.CreateParams{}); err != nil {
		t.Errorf("a deleted container still counts: %v", err)
	}

	for _, name := range []string{"a.txt", "b.txt"} {
		if _, err := s.Upload(ctx, ids[1], name, strings.NewReader(name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Upload(ctx, ids[1], "c.txt", strings.NewReader("c")); !errors.As(err, &le) || le.What != "files" {
		t.Errorf("third file: %v, want a LimitError of files", err)
	}
	// Replacing a listed file is not a new one; it gets a new id.
	before, _ := s.Files(ctx, ids[1], containers.ListParams{Ascending: true})
	f, err := s.Upload(ctx, ids[1], "a.txt", strings.NewReader("again"))
	if err != nil {
		t.Fatalf("replacing a.txt: %v", err)
	}
	if f.ID == before.Data[0].ID {
		t.Error("a replaced file kept its id")
	}
	if _, err := s.File(ctx, ids[1], before.Data[0].ID); !errors.Is(err, containers.ErrFileNotFound) {
		t.Errorf("the replaced file's old id: %v", err)
	}
	if got := content(t, s, ctx, ids[1], f.ID); got != "again" {
		t.Errorf("content %q", got)
	}
}

// concurrently runs op(0..n-1) at once and returns how many succeeded;
// every failure must be a *containers.LimitError.
func concurrently(t *testing.T, what string, n int, op func(i int) error) int {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range errs {
		wg.Go(func() { errs[i] = op(i) })
	}
	wg.Wait()
	made := 0
	for _, err := range errs {
		var le *containers.LimitError
		switch {
		case err == nil:
			made++
		case !errors.As(err, &le):
			t.Errorf("%s: %v", what, err)
		}
	}
	return made
}

func TestConcurrentCreationsKeepTheLimit(t *testing.T) {
	s, _, _ := newStore(t, containers.WithMaxContainers(3))
	made := concurrently(t, "Create", 8, func(int) error {
		_, err := s.Create(as("acme"), containers.CreateParams{})
		return err
	})
	page, _ := s.List(as("acme"), containers.ListParams{})
	if made != 3 || len(page.Data) != 3 {
		t.Errorf("%d created, %d listed; want 3 of 8", made, len(page.Data))
	}
}

func TestConcurrentUploadsKeepTheLimit(t *testing.T) {
	s, _, _ := newStore(t, containers.WithMaxFiles(3))
	ctx := as("")
	c, err := s.Create(ctx, containers.CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	made := concurrently(t, "Upload", 8, func(i int) error {
		_, err := s.Upload(ctx, c.ID, fmt.Sprintf("f%d.txt", i), strings.NewReader("x"))
		return err
	})
	page, _ := s.Files(ctx, c.ID, containers.ListParams{})
	if made != 3 || len(page.Data) != 3 {
		t.Errorf("%d uploaded, %d listed; want 3 of 8", made, len(page.Data))
	}
}

func TestFileNamesAreChecked(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := as("")
	c, err := s.Create(ctx, containers.CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", ".", "..", "../x", "a/b", `a\b`, "/etc/passwd", "nul\x00", "bad\xff", "new\nline", strings.Repeat("n", 256)} {
		if _, err := s.Upload(ctx, c.ID, name, strings.NewReader("x")); !errors.Is(err, port.ErrInvalidRequest) {
			t.Errorf("Upload(%q): %v, want ErrInvalidRequest", name, err)
		}
	}
	if page, _ := s.Files(ctx, c.ID, containers.ListParams{}); len(page.Data) != 0 {
		t.Errorf("refused names listed: %+v", page.Data)
	}
	if _, err := s.Upload(ctx, c.ID, "résumé 2.txt", strings.NewReader("ok")); err != nil {
		t.Errorf("a plain name with spaces and accents: %v", err)
	}
	for _, name := range []string{"bad\x01", strings.Repeat("n", containers.MaxNameBytes+1)} {
		if _, err := s.Create(ctx, containers.CreateParams{Name: name}); !errors.Is(err, port.ErrInvalidRequest) {
			t.Errorf("Create(name %q): %v", name, err)
		}
	}
}

func TestFilesFromTheGatewaysStore(t *testing.T) {
	src := files{
		"file-1": {owner: "acme", name: "data.csv", data: "x,y\n1,2\n"},
		"file-2": {owner: "acme", name: `C:\Users\me\notes.txt`, data: "notes"},
		"file-g": {owner: "globex", name: "secret.txt", data: "globex's"},
	}
	s, _, _ := newStore(t, containers.WithFileSource(src), containers.WithMaxContainers(1))
	ctx := as("acme")
	// A file of another tenant, or none, fails the creation whole.
	for _, ids := range [][]string{{"file-1", "file-g"}, {"file-404"}} {
		if _, err := s.Create(ctx, containers.CreateParams{FileIDs: ids}); !errors.Is(err, containers.ErrFileNotFound) {
			t.Errorf("Create(%v): %v, want ErrFileNotFound", ids, err)
		}
	}
	for _, ids := range [][]string{{"file-1", "file-1"}, {""}} {
		if _, err := s.Create(ctx, containers.CreateParams{FileIDs: ids}); !errors.Is(err, port.ErrInvalidRequest) {
			t.Errorf("Create(%q): %v, want ErrInvalidRequest", ids, err)
		}
	}
	c, err := s.Create(ctx, containers.CreateParams{FileIDs: []string{"file-1", "file-2"}})
	if err != nil {
		t.Fatalf("Create after refusals (the one slot must be free): %v", err)
	}
	res, _ := run(t, s, ctx, c.ID, "print(open('data.csv').read(), open('notes.txt').read())")
	if res.Stdout != "x,y\n1,2\n notes\n" {
		t.Errorf("the program read %q", res.Stdout)
	}
	page, _ := s.Files(ctx, c.ID, containers.ListParams{Ascending: true})
	if len(page.Data) != 2 || page.Data[0].Name != "data.csv" || page.Data[1].Name != "notes.txt" || page.Data[0].Source != "user" {
		t.Errorf("files %+v", page.Data)
	}
	f, err := s.AddFile(ctx, c.ID, "file-1")
	if err != nil || f.Name != "data.csv" {
		t.Errorf("AddFile: %+v, %v", f, err)
	}
	if _, err := s.AddFile(ctx, c.ID, "file-g"); !errors.Is(err, containers.ErrFileNotFound) {
		t.Errorf("AddFile of another tenant's file: %v", err)
	}

	plain, _, _ := newStore(t)
	if _, err := plain.Create(ctx, containers.CreateParams{FileIDs: []string{"file-1"}}); !errors.Is(err, port.ErrInvalidRequest) {
		t.Errorf("file ids without a file store: %v", err)
	}
}

func TestDeletingAFileRemovesItFromTheWorkspace(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := as("")
	c, err := s.Create(ctx, containers.CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	name := `it's "quoted" ünïcode.txt`
	f, err := s.Upload(ctx, c.ID, name, strings.NewReader("bytes"))
	if err != nil {
		t.Fatal(err)
	}
	// The program has moved to a directory holding a file of that name:
	// the container's file is the one removed.
	run(t, s, ctx, c.ID, "import os, json\nos.mkdir('sub')\nos.chdir('sub')\n_ = open("+strconv.Quote(name)+", 'w').write('mine')")
	if err := s.DeleteFile(ctx, c.ID, f.ID); err != nil {
		t.Fatalf("DeleteFile: %v", err)
	}
	res, _ := run(t, s, ctx, c.ID, "os.chdir('..')\nprint(json.dumps([sorted(os.listdir('.')), os.listdir('sub')]))")
	if want := `[["sub"], ["it's \"quoted\" \u00fcn\u00efcode.txt"]]` + "\n"; res.Stdout != want {
		t.Errorf("workspace after the delete: %s, want %s", res.Stdout, want)
	}
	run(t, s, ctx, c.ID, "import shutil; shutil.rmtree('sub')")
	if err := s.DeleteFile(ctx, c.ID, f.ID); !errors.Is(err, containers.ErrFileNotFound) {
		t.Errorf("deleting it again: %v", err)
	}
	// A file the program removed is listed but cannot be read.
	_, produced := run(t, s, ctx, c.ID, "_ = open('tmp.txt', 'w').write('t')")
	run(t, s, ctx, c.ID, "os.remove('tmp.txt')")
	if _, _, err := s.Content(ctx, c.ID, produced[0].ID); !errors.Is(err, containers.ErrFileNotFound) {
		t.Errorf("Content of a removed file: %v", err)
	}
	if err := s.DeleteFile(ctx, c.ID, produced[0].ID); err != nil {
		t.Errorf("DeleteFile of a file already gone from the workspace: %v", err)
	}
}

func TestListPages(t *testing.T) {
	s, _, clk := newStore(t)
	ctx := as("")
	var ids []string
	for i := range 3 {
		c, err := s.Create(ctx, containers.CreateParams{Name: fmt.Sprintf("c%d", i%2)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
		clk.Advance(time.Second)
	}
	idsOf := func(p containers.Page[containers.Container]) (out []string) {
		for _, c := range p.Data {
			out = append(out, c.ID)
		}
		return out
	}
	p, err := s.List(ctx, containers.ListParams{Limit: 2})
	if err != nil || fmt.Sprint(idsOf(p)) != fmt.Sprint([]string{ids[2], ids[1]}) || !p.HasMore {
		t.Errorf("newest first, 2: %v %v %v", idsOf(p), p.HasMore, err)
	}
	p, err = s.List(ctx, containers.ListParams{Limit: 2, After: ids[1]})
	if err != nil || fmt.Sprint(idsOf(p)) != fmt.Sprint([]string{ids[0]}) || p.HasMore {
		t.Errorf("after the second: %v %v %v", idsOf(p), p.HasMore, err)
	}
	p, _ = s.List(ctx, containers.ListParams{Ascending: true, Name: "c0"})
	if fmt.Sprint(idsOf(p)) != fmt.Sprint([]string{ids[0], ids[2]}) {
		t.Errorf("by name, oldest first: %v", idsOf(p))
	}
	for _, bad := range []containers.ListParams{{Limit: -1}, {Limit: 101}, {After: "cntr_nope"}} {
		if _, err := s.List(ctx, bad); !errors.Is(err, port.ErrInvalidRequest) {
			t.Errorf("List(%+v): %v", bad, err)
		}
	}
}

func TestCloseEndsEveryContainer(t *testing.T) {
	p := wasmtest.New(t, nil)
	s := containers.New(p)
	c, err := s.Create(context.Background(), containers.CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	session := s.SessionOf(c.ID)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ListFiles(context.Background(), session, ""); !errors.Is(err, port.ErrSessionNotFound) {
		t.Errorf("a container's session after Close: %v", err)
	}
	if _, err := s.Create(context.Background(), containers.CreateParams{}); !errors.Is(err, containers.ErrClosed) {
		t.Errorf("Create after Close: %v", err)
	}
	if _, err := s.Get(context.Background(), c.ID); !errors.Is(err, containers.ErrClosed) {
		t.Errorf("Get after Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

func TestNodeIDs(t *testing.T) {
	p := wasmtest.New(t, nil)
	s := containers.New(p, containers.WithNodeID("node-7"))
	defer s.Close()
	c, err := s.Create(context.Background(), containers.CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	if node, ok := containers.NodeOf(c.ID); !ok || node != "node-7" {
		t.Errorf("NodeOf(%q) = %q, %v", c.ID, node, ok)
	}
	for _, id := range []string{"cntr_", "cntr_" + strings.Repeat("0", 31), "cntr_Node_" + strings.Repeat("0", 32), "file_" + strings.Repeat("0", 32)} {
		if _, ok := containers.NodeOf(id); ok {
			t.Errorf("NodeOf(%q) accepted it", id)
		}
	}
	if node, ok := containers.NodeOf("cntr_" + strings.Repeat("a", 32)); !ok || node != "" {
		t.Errorf("an id without a node: %q %v", node, ok)
	}
	defer func() {
		if recover() == nil {
			t.Error("WithNodeID(\"Bad_Node\") did not panic")
		}
	}()
	containers.New(p, containers.WithNodeID("Bad_Node"))
}

func TestUploadsAreHeldToThePortsFileLimit(t *testing.T) {
	p := wasmtest.New(t, func(c wasm.Config) wasm.Config { return c.WithFileLimit(1 << 10) })
	s := containers.New(p)
	defer s.Close()
	c, err := s.Create(context.Background(), containers.CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Upload(context.Background(), c.ID, "big.bin", bytes.NewReader(make([]byte, 2<<10)))
	if !errors.Is(err, port.ErrFileTooLarge) {
		t.Errorf("a 2 KiB upload over a 1 KiB limit: %v", err)
	}
	if page, _ := s.Files(context.Background(), c.ID, containers.ListParams{}); len(page.Data) != 0 {
		t.Errorf("a refused upload is listed: %+v", page.Data)
	}
}

// A container running a call is not idle: the sweeper, and any call that
// looks it up, leave it alone however long the call runs, as the port
// leaves a busy session alone.
func TestAContainerRunningACallDoesNotExpire(t *testing.T) {
	s, p, clk := newStore(t, containers.WithDefaultExpiry(time.Minute))
	ctx := as("acme")
	c, err := s.Create(ctx, containers.CreateParams{Name: "long"})
	if err != nil {
		t.Fatal(err)
	}
	session := s.SessionOf(c.ID)
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	started := make(chan struct{})
	var once sync.Once
	type outcome struct {
		res port.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, _, err := s.Execute(callCtx, c.ID, port.ExecuteRequest{
			Tool:     port.ToolCodeExecution,
			Code:     "import time\nprint('started', flush=True)\ntime.sleep(3600)",
			Timeout:  5 * time.Minute,
			OnOutput: func(port.Stream, []byte) { once.Do(func() { close(started) }) },
		})
		done <- outcome{res, err}
	}()
	select {
	case <-started:
	case o := <-done:
		t.Fatalf("the call ended before it started: %+v, %v", o.res, o.err)
	}
	clk.Advance(3 * time.Minute) // past the expiry, while the call runs
	s.Sweep()
	if _, err := s.Get(ctx, c.ID); err != nil {
		t.Errorf("Get of a container running a call, its expiry past: %v", err)
	}
	if page, err := s.List(ctx, containers.ListParams{}); err != nil || len(page.Data) != 1 {
		t.Errorf("List while a call runs: %+v, %v", page.Data, err)
	}
	cancel()
	o := <-done
	if o.err != nil {
		t.Fatalf("Execute: %v", o.err)
	}
	if o.res.Outcome != port.OutcomeCancelled {
		t.Errorf("the call ended %s, want cancelled (stderr %q)", o.res.Outcome, o.res.Stderr)
	}
	if _, err := p.ListFiles(context.Background(), session, ""); err != nil {
		t.Errorf("the container's session after its call: %v", err)
	}
	// Its idle time starts as the call ends.
	if got, err := s.Get(ctx, c.ID); err != nil || !got.LastActiveAt.Equal(clk.Now()) {
		t.Errorf("after the call: %+v, %v; want it active now", got, err)
	}
}

// uploadUnderWay starts an upload of data as name into container id and
// returns once it is under way, its bytes held back: release lets them
// come, and done gives the upload's error.
func uploadUnderWay(ctx context.Context, s *containers.Store, id, name string, data io.Reader) (release func(), done <-chan error) {
	body := testwait.NewBody(data)
	result := make(chan error, 1)
	go func() {
		_, err := s.Upload(ctx, id, name, body)
		result <- err
	}()
	<-body.Started()
	return body.Release, result
}

// Files a call produces while an upload of a new name is under way do
// not take the place the upload holds: the container never lists more
// than WithMaxFiles.
func TestFilesProducedDuringAnUploadKeepTheLimit(t *testing.T) {
	s, _, _ := newStore(t, containers.WithMaxFiles(2))
	ctx := as("acme")
	c, err := s.Create(ctx, containers.CreateParams{Name: "full"})
	if err != nil {
		t.Fatal(err)
	}
	release, uploaded := uploadUnderWay(ctx, s, c.ID, "u.txt", strings.NewReader("up"))
	run(t, s, ctx, c.ID, "open('a.txt', 'w').write('a')\nopen('b.txt', 'w').write('b')")
	release()
	if err := <-uploaded; err != nil {
		t.Fatalf("Upload: %v", err)
	}
	page, err := s.Files(ctx, c.ID, containers.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) > 2 {
		var names []string
		for _, f := range page.Data {
			names = append(names, f.Name)
		}
		t.Errorf("a container of at most 2 files lists %d: %v", len(page.Data), names)
	}
}

// A removal waits for the uploads of its file's name under way, so that
// it never takes a newer file's bytes: a replacement that succeeded has
// replaced the file, which is then not found; one that failed leaves it
// to be removed. While the replacement is under way the file keeps its
// place, and the container never lists more than WithMaxFiles.
func TestRemovingAFileBeingReplaced(t *testing.T) {
	s, _, _ := newStore(t, containers.WithMaxFiles(1))
	ctx := as("acme")
	c, err := s.Create(ctx, containers.CreateParams{Name: "one"})
	if err != nil {
		t.Fatal(err)
	}
	old, err := s.Upload(ctx, c.ID, "a.txt", strings.NewReader("old"))
	if err != nil {
		t.Fatal(err)
	}
	release, replaced := uploadUnderWay(ctx, s, c.ID, "a.txt", strings.NewReader("new"))
	removed := make(chan error, 1)
	go func() { removed <- s.DeleteFile(ctx, c.ID, old.ID) }()
	var le *containers.LimitError
	if _, err := s.Upload(ctx, c.ID, "b.txt", strings.NewReader("b")); !errors.As(err, &le) {
		t.Errorf("Upload of another name while a.txt holds the only place: %v, want a LimitError", err)
	}
	release()
	if err := <-replaced; err != nil {
		t.Fatalf("the replacement: %v", err)
	}
	if err := <-removed; !errors.Is(err, containers.ErrFileNotFound) {
		t.Errorf("removing the file its replacement replaced: %v, want ErrFileNotFound", err)
	}
	page, err := s.Files(ctx, c.ID, containers.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].Name != "a.txt" {
		t.Fatalf("a container of at most 1 file lists %+v", page.Data)
	}
	if got := content(t, s, ctx, c.ID, page.Data[0].ID); got != "new" {
		t.Errorf("the replacement's content: %q, want %q", got, "new")
	}

	// A replacement that fails leaves the file, which the removal then
	// removes, freeing its place.
	current := page.Data[0]
	release, replaced = uploadUnderWay(ctx, s, c.ID, "a.txt", iotest.ErrReader(errors.New("the client went away")))
	go func() { removed <- s.DeleteFile(ctx, c.ID, current.ID) }()
	release()
	if err := <-replaced; err == nil {
		t.Fatal("a replacement whose body failed succeeded")
	}
	if err := <-removed; err != nil {
		t.Fatalf("removing the file whose replacement failed: %v", err)
	}
	if _, _, err := s.Content(ctx, c.ID, current.ID); !errors.Is(err, containers.ErrFileNotFound) {
		t.Errorf("Content of the removed file: %v", err)
	}
	if _, err := s.Upload(ctx, c.ID, "c.txt", strings.NewReader("c")); err != nil {
		t.Errorf("Upload after the only file was removed: %v", err)
	}
}

// gatedRemoval is the port with the removals DeleteFile runs held until
// the test lets them run: entered says one is held.
type gatedRemoval struct {
	port.CodeExecutionPort
	entered chan struct{}
	release chan struct{}
}

func (g *gatedRemoval) Execute(ctx context.Context, id string, req port.ExecuteRequest) (port.Result, error) {
	if strings.HasPrefix(req.Code, "__import__('os').remove(") {
		g.entered <- struct{}{}
		<-g.release
	}
	return g.CodeExecutionPort.Execute(ctx, id, req)
}

// An upload of a name whose removal is under way waits for it: the
// removal cannot take the new bytes.
func TestAnUploadWaitsForTheRemovalOfItsName(t *testing.T) {
	p := wasmtest.New(t, func(c wasm.Config) wasm.Config { return c.WithShellAtStart(false) })
	g := &gatedRemoval{CodeExecutionPort: p, entered: make(chan struct{}, 1), release: make(chan struct{})}
	s := containers.New(g, containers.WithTenantOf(tenantOf))
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	ctx := as("acme")
	c, err := s.Create(ctx, containers.CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	old, err := s.Upload(ctx, c.ID, "a.txt", strings.NewReader("old"))
	if err != nil {
		t.Fatal(err)
	}
	removed := make(chan error, 1)
	go func() { removed <- s.DeleteFile(ctx, c.ID, old.ID) }()
	<-g.entered
	uploaded := make(chan error, 1)
	go func() {
		_, err := s.Upload(ctx, c.ID, "a.txt", strings.NewReader("new"))
		uploaded <- err
	}()
	testwait.For(t, "the upload to wait for the removal (or to end)", func() bool {
		return testwait.InStack("(*Store).awaitLocked", "(*Store).put") || len(uploaded) > 0
	})
	close(g.release)
	if err := <-removed; err != nil {
		t.Fatalf("DeleteFile: %v", err)
	}
	if err := <-uploaded; err != nil {
		t.Fatalf("Upload: %v", err)
	}
	page, err := s.Files(ctx, c.ID, containers.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].Name != "a.txt" {
		t.Fatalf("files: %+v", page.Data)
	}
	if got := content(t, s, ctx, c.ID, page.Data[0].ID); got != "new" {
		t.Errorf("the upload's content: %q, want %q", got, "new")
	}
}

// A removal or upload waiting for the other ends with its caller's
// context.
func TestWaitingForAFileEndsWithTheContext(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := as("acme")
	c, err := s.Create(ctx, containers.CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.Upload(ctx, c.ID, "a.txt", strings.NewReader("old"))
	if err != nil {
		t.Fatal(err)
	}
	release, replaced := uploadUnderWay(ctx, s, c.ID, "a.txt", strings.NewReader("new"))
	waiting, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.DeleteFile(waiting, c.ID, f.ID); !errors.Is(err, context.Canceled) {
		t.Errorf("DeleteFile with its context ended, waiting for a replacement: %v", err)
	}
	release()
	if err := <-replaced; err != nil {
		t.Fatal(err)
	}
}
