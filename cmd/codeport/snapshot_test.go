package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/internal/testkit/logtest"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/port"
)

// served is a `codeport serve` started in process by startServe.
type served struct {
	base, addr string
	log        *logtest.Buffer
	// stop ends it (once; later calls return the same code) and returns
	// its exit code.
	stop func() int
}

// startServe runs `codeport serve` in process with args, on a free
// loopback port and a private sessions directory, and waits until it is
// healthy. It is stopped when the test ends, if not before.
func startServe(t *testing.T, args ...string) served {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	exited := make(chan struct{})
	code := -1
	errb := &logtest.Buffer{}
	go func() {
		defer close(exited)
		code = run(ctx, append([]string{"serve", "--listen", addr, "--sessions-dir", t.TempDir()}, args...),
			strings.NewReader(""), &bytes.Buffer{}, errb)
	}()
	// The waits below are for events (serve healthy, serve ended), for
	// as long as the test binary allows: serve compiles or loads the
	// runtime as it starts, for minutes under the race detector on a
	// loaded machine, and stopping it closes every session.
	var once sync.Once
	stop := func() int {
		once.Do(func() {
			cancel()
			wait, cancelWait := testwait.Context(t)
			defer cancelWait()
			select {
			case <-exited:
			case <-wait.Done():
				t.Errorf("serve did not stop; log:\n%s", errb.String())
			}
		})
		return code
	}
	t.Cleanup(func() { stop() })
	base := "http://" + addr
	awaitHealthy(t, base, exited, errb)
	return served{base: base, addr: addr, log: errb, stop: stop}
}

// awaitHealthy polls base's /healthz until it answers 200, the server's
// word that it is ready; it fails t, showing log, if the server exits
// first or the test's wait ends.
func awaitHealthy(t *testing.T, base string, exited <-chan struct{}, log fmt.Stringer) {
	t.Helper()
	wait, cancel := testwait.Context(t)
	defer cancel()
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-exited:
			t.Fatalf("serve exited before it was healthy; log:\n%s", log)
		case <-wait.Done():
			t.Fatalf("never healthy: %v; log:\n%s", err, log)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func client(t *testing.T, base, token string) *port.Port {
	t.Helper()
	p, err := httpadapter.New(httpadapter.NewConfig(base).WithToken(token))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// A session saved through one `codeport serve` comes back in another
// started later with the same snapshot key, after the first has exited:
// a restart loses nothing a client saved. The snapshot is bound to the
// name the client gave, and a server with another key refuses it.
func TestServeSnapshotSurvivesARestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	keyFile, otherKey, tokenFile := filepath.Join(dir, "key"), filepath.Join(dir, "other"), filepath.Join(dir, "token")
	for f, content := range map[string]string{
		keyFile:   "c2VydmUgc25hcHNob3Qga2V5IGZvciB0aGUgcmVzdGFydCB0ZXN0Cg==\n",
		otherKey:  "YW5vdGhlciBzZXJ2ZXIncyBzbmFwc2hvdCBrZXksIDMyIGJ5dGVzIG9yIG1vcmU=\n",
		tokenFile: "restart-token\n",
	} {
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	opt := port.SnapshotOptions{Tenant: "user 42/ü"}

	srv := startServe(t, "--auth-token-file", tokenFile, "--snapshot-key-file", keyFile)
	first := client(t, srv.base, "restart-token")
	caps, err := first.Describe(ctx)
	if err != nil || !caps.Snapshots {
		t.Fatalf("capabilities: snapshots %v, %v", caps.Snapshots, err)
	}
	s, err := first.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := first.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution,
		Code: "g = (i * 3 for i in range(100))\nnext(g)\nnotes = {'kept': [1, 2, 3]}\nopen('saved.txt', 'w').write('on disk')\nprint('set')"})
	if err != nil || res.Stdout != "set\n" {
		t.Fatalf("setup: %v %+v", err, res)
	}
	var snap bytes.Buffer
	if err := first.SnapshotSession(ctx, s.ID, &snap, opt); err != nil {
		t.Fatal(err)
	}
	srv.stop()

	second := client(t, startServe(t, "--auth-token-file", tokenFile, "--snapshot-key-file", keyFile).base, "restart-token")
	if _, err := second.RestoreSession(ctx, bytes.NewReader(snap.Bytes()), port.SnapshotOptions{Tenant: "user 43"}); !errors.Is(err, port.ErrInvalidSnapshot) {
		t.Errorf("restore under another tenant name: %v, want ErrInvalidSnapshot", err)
	}
	r, err := second.RestoreSession(ctx, bytes.NewReader(snap.Bytes()), opt)
	if err != nil {
		t.Fatal(err)
	}
	res, err = second.Execute(ctx, r.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution,
		Code: "print(next(g), notes['kept'], open('saved.txt').read())"})
	if err != nil || res.Stdout != "3 [1, 2, 3] on disk\n" || res.StateLost {
		t.Fatalf("restored after a restart: %v %+v", err, res)
	}

	third := client(t, startServe(t, "--auth-token-file", tokenFile, "--snapshot-key-file", otherKey).base, "restart-token")
	if _, err := third.RestoreSession(ctx, bytes.NewReader(snap.Bytes()), opt); !errors.Is(err, port.ErrInvalidSnapshot) {
		t.Errorf("restore on a server with another key: %v, want ErrInvalidSnapshot", err)
	}
	// Without a key, the routes are not there and Describe says so.
	fourth := client(t, startServe(t, "--auth-token-file", tokenFile).base, "restart-token")
	if caps, err := fourth.Describe(ctx); err != nil || caps.Snapshots {
		t.Errorf("capabilities without a key: snapshots %v, %v", caps.Snapshots, err)
	}
	if _, err := fourth.RestoreSession(ctx, bytes.NewReader(snap.Bytes()), opt); !errors.Is(err, port.ErrUnsupported) {
		t.Errorf("restore without snapshots: %v, want ErrUnsupported", err)
	}
}

// With --hibernate-dir, stopping `codeport serve` (as SIGTERM does) saves
// every live session and the next serve on that directory answers the same
// session ids with the same state: a client does not notice a restart.
func TestServeRestartKeepsSessions(t *testing.T) {
	ctx := context.Background()
	hib := t.TempDir()
	srv := startServe(t, "--hibernate-dir", hib)
	first := client(t, srv.base, "")
	var ids []string
	for i := range 3 {
		s, err := first.CreateSession(ctx, port.CreateSessionRequest{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
		code := fmt.Sprintf("it = iter(range(100))\nnext(it)\nclass K:\n    tag = %q\nprint('ok')", string(rune('a'+i)))
		if res, err := first.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code}); err != nil || res.Stdout != "ok\n" {
			t.Fatalf("setup %d: %v %+v", i, err, res)
		}
	}
	srv.stop()
	second := client(t, startServe(t, "--hibernate-dir", hib).base, "")
	for i, id := range ids {
		res, err := second.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(next(it), K.tag)"})
		want := "1 " + string(rune('a'+i)) + "\n"
		if err != nil || res.Stdout != want || res.StateLost {
			t.Errorf("session %d after the restart: %v %+v, want %q", i, err, res, want)
		}
	}
}
