package nginx

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/gateway/containers"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/port"
)

// The multi-node test's shape: three nodes, fifty sessions.
var testNodes = []string{"node-a", "node-b", "node-c"}

const (
	testSessions = 50
	// The nodes' --file-limit: small, so that a node's own 413 is cheap
	// to provoke through the router.
	testFileLimit = 1 << 20
	testToken     = "multinode-test-token-6b1f0c2e9d"
)

// testCluster is a cluster the tests start: real nodes, with testToken,
// behind a real nginx, and a client of the router.
type testCluster struct {
	cluster   *Cluster
	codeport  string // the binary the nodes run
	tokenFile string // testToken, for the nodes' and codeport's flags
	client    *port.Port
}

// startTestCluster builds codeport and starts nodes behind nginx, each
// node with nodeArgs besides the token; everything is stopped, and the
// logs shown if t failed, when t ends. It skips (or, in CI, fails)
// without nginx.
func startTestCluster(ctx context.Context, t *testing.T, nodes []string, nodeArgs ...string) testCluster {
	t.Helper()
	nginxBin := needNginx(t)
	dir := t.TempDir()
	bin, err := BuildCodeport(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := StartCluster(ctx, ClusterConfig{
		Codeport: bin,
		Nginx:    nginxBin,
		Nodes:    nodes,
		Dir:      dir,
		NodeArgs: append([]string{"--auth-token-file", tokenFile}, nodeArgs...),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	t.Cleanup(func() {
		if t.Failed() {
			for name, log := range c.Logs() {
				t.Logf("%s's log ends:\n%s", name, tailOf(log))
			}
		}
	})
	client, err := httpadapter.New(httpadapter.NewConfig(c.URL()).WithToken(testToken))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return testCluster{cluster: c, codeport: bin, tokenFile: tokenFile, client: client}
}

// TestMultiNode runs three real `codeport serve` nodes behind a real nginx
// with the shipped configuration, and checks through the router what a
// client of several nodes relies on: sessions spread over the nodes, each
// session's calls reach the node that holds it, the contract's conformance
// suite passes, streams and uploads pass through, errors are contract
// JSON, and a node that dies costs only its own sessions.
func TestMultiNode(t *testing.T) {
	// Nodes compile or load the runtime as they start, and the suite runs
	// beside the rest, for minutes on a loaded machine: no deadline but
	// the test binary's, for the test and for each of its requests.
	ctx, cancel := testwait.Context(t)
	defer cancel()
	tc := startTestCluster(ctx, t, testNodes, "--file-limit", fmt.Sprint(testFileLimit), "--containers-api=true")
	c, bin, client := tc.cluster, tc.codeport, tc.client
	var requestTimeout time.Duration // none
	if d, ok := ctx.Deadline(); ok {
		requestTimeout = time.Until(d)
	}
	r := &router{t: t, url: c.URL(), http: &http.Client{Timeout: requestTimeout}}

	// Fifty sessions, created through the router eight at a time, as
	// clients would; least_conn sends each to the node with the fewest
	// requests in flight (ties in turn), so every node gets some.
	ids := make([]string, testSessions)
	parallel(t, testSessions, 8, func(i int) error {
		s, err := client.CreateSession(ctx, port.CreateSessionRequest{})
		ids[i] = s.ID
		return err
	})
	byNode := map[string][]int{}
	for i, id := range ids {
		node, ok := port.NodeOf(id)
		if !ok || !slices.Contains(testNodes, node) {
			t.Fatalf("session id %q names no node of the cluster", id)
		}
		byNode[node] = append(byNode[node], i)
	}
	t.Logf("%d sessions by node: node-a %d, node-b %d, node-c %d", testSessions, len(byNode["node-a"]), len(byNode["node-b"]), len(byNode["node-c"]))
	for _, n := range testNodes {
		if len(byNode[n]) == 0 {
			t.Fatalf("no session of %d landed on %s", testSessions, n)
		}
	}

	// The conformance suite through the router, as its own process,
	// while the rest runs (it takes the longest); awaited before a node
	// is killed.
	conformance := make(chan error, 1)
	var confOut bytes.Buffer
	go func() {
		cmd := exec.CommandContext(ctx, bin, "conformance", "--base-url", c.URL())
		cmd.Env = append(os.Environ(), "CODEPORT_CONFORMANCE_TOKEN="+testToken)
		cmd.Stdout, cmd.Stderr = &confOut, &confOut
		conformance <- cmd.Run()
	}()

	// Every session's state persists across calls, in its interpreter and
	// in its workspace, so every call reached the node that holds it.
	parallel(t, testSessions, 8, func(i int) error {
		id := ids[i]
		for _, code := range []string{fmt.Sprintf("x = %d", i), "x = x * 2 + 1", "open('x.txt', 'w').write(str(x))"} {
			if _, err := execute(ctx, client, id, code, ""); err != nil {
				return err
			}
		}
		want := fmt.Sprint(2*i + 1)
		if _, err := execute(ctx, client, id, "print(x)", want+"\n"); err != nil {
			return err
		}
		return checkFile(ctx, client, id, "x.txt", []byte(want))
	})

	t.Run("errors are contract JSON", func(t *testing.T) {
		r := r.with(t)
		r.wantError("POST", "/sessions/6f1c0e62-6bd2-4a38-9b43-2e1c5e9a1f00/exec", http.StatusNotFound, "session_not_found")
		r.wantError("DELETE", "/sessions/6f1c0e62-6bd2-4a38-9b43-2e1c5e9a1f00", http.StatusNotFound, "session_not_found")
		r.wantError("POST", "/sessions/node-z.6f1c0e62-6bd2-4a38-9b43-2e1c5e9a1f00/exec", http.StatusNotFound, "session_not_found")
		// A node's own errors pass through as it wrote them: a session it
		// does not hold, a request without the token.
		r.wantError("POST", "/sessions/node-a.6f1c0e62-6bd2-4a38-9b43-2e1c5e9a1f00/exec", http.StatusNotFound, "session_not_found")
		r.token = ""
		r.wantError("POST", "/sessions", http.StatusUnauthorized, "unauthorized")
		r.wantError("GET", "/sessions/"+ids[0]+"/files/list", http.StatusUnauthorized, "unauthorized")
		status, _, body := r.do("GET", "/healthz", nil, nil)
		if status != http.StatusOK || !json.Valid(body) {
			t.Errorf("router's /healthz: %d %q", status, body)
		}
	})

	t.Run("containers go to the node their ids name", func(t *testing.T) {
		r := r.with(t)
		// Made through the router, as sessions are: each lands on some
		// node, whose id it carries; every later call reaches that node
		// (another would answer 404), files included.
		nodes := map[string]bool{}
		for i := range 6 {
			status, _, body := r.do("POST", "/v1/containers", []byte(fmt.Sprintf(`{"name":"c%d"}`, i)), http.Header{"Content-Type": {"application/json"}})
			var c struct{ ID string }
			if status != http.StatusOK || json.Unmarshal(body, &c) != nil {
				t.Fatalf("POST /v1/containers: %d %s", status, body)
			}
			node, ok := containers.NodeOf(c.ID)
			if !ok || !slices.Contains(testNodes, node) {
				t.Fatalf("container id %q names no node of the cluster", c.ID)
			}
			nodes[node] = true
			if status, _, body := r.do("GET", "/v1/containers/"+c.ID, nil, nil); status != http.StatusOK || !bytes.Contains(body, []byte(c.ID)) {
				t.Errorf("GET %s through the router: %d %s", c.ID, status, body)
			}
			if status, _, body := r.do("GET", "/v1/containers/"+c.ID+"/files", nil, nil); status != http.StatusOK {
				t.Errorf("GET %s/files through the router: %d %s", c.ID, status, body)
			}
			if status, _, body := r.do("DELETE", "/v1/containers/"+c.ID, nil, nil); status != http.StatusOK {
				t.Errorf("DELETE %s through the router: %d %s", c.ID, status, body)
			}
		}
		t.Logf("containers landed on %d nodes", len(nodes))
		// A node the router does not know: OpenAI's 404 shape, from the
		// router itself.
		status, _, body := r.do("GET", "/v1/containers/cntr_node-z_"+strings.Repeat("0", 32), nil, nil)
		var e struct {
			Error struct{ Code, Message string }
		}
		if status != http.StatusNotFound || json.Unmarshal(body, &e) != nil || e.Error.Code != "container_not_found" || !strings.Contains(e.Error.Message, `"node-z"`) {
			t.Errorf("a container of an unknown node: %d %s", status, body)
		}
	})

	t.Run("uploads pass through", func(t *testing.T) {
		id := ids[0]
		data := bytes.Repeat([]byte("0123456789abcdef"), (testFileLimit-1)/16)
		if _, err := client.PutFile(ctx, id, "up.bin", bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		if err := checkFile(ctx, client, id, "up.bin", data); err != nil {
			t.Fatal(err)
		}
		// Over the node's --file-limit: the node's 413, not the router's.
		_, err := client.PutFile(ctx, id, "big.bin", bytes.NewReader(make([]byte, 2*testFileLimit)))
		if !errors.Is(err, port.ErrFileTooLarge) {
			t.Errorf("an upload over the node's limit: %v, want %v", err, port.ErrFileTooLarge)
		}
		// Over the router's own limit: refused from the headers alone,
		// as JSON.
		r.with(t).wantBodyTooLarge("/sessions/" + id + "/files?path=huge.bin")
	})

	t.Run("streamed exec passes through", func(t *testing.T) {
		r := r.with(t)
		// A session of its own: the hang-up below cancels a call, which
		// costs the session its interpreter state.
		s, err := client.CreateSession(ctx, port.CreateSessionRequest{})
		if err != nil {
			t.Fatal(err)
		}
		id := s.ID
		// The events, in order, add up to the result.
		events := r.stream(ctx, id, "for w in ['alpha', 'beta', 'gamma']:\n    print(w, flush=True)", nil)
		var stdout strings.Builder
		for _, e := range events[:len(events)-1] {
			if e.name != contract.EventStdout {
				t.Fatalf("event %q before the result: %v", e.name, events)
			}
			var o contract.OutputEvent
			if err := json.Unmarshal([]byte(e.data), &o); err != nil {
				t.Fatal(err)
			}
			stdout.WriteString(o.Text)
		}
		last := events[len(events)-1]
		var res contract.ExecResponse
		if last.name != contract.EventResult || json.Unmarshal([]byte(last.data), &res) != nil {
			t.Fatalf("last event: %v", last)
		}
		if got := stdout.String(); got != "alpha\nbeta\ngamma\n" || res.ResultBlock.Content.Stdout != got {
			t.Errorf("stdout events add up to %q; the result's stdout is %q", got, res.ResultBlock.Content.Stdout)
		}

		// Events arrive while the program runs: the client reads the first
		// one and hangs up, which cancels the call before the program
		// gets to its end (a router that held the events back would hand
		// over the first only once the program had ended). The program
		// would sleep 1000 s: however long a loaded machine takes to carry
		// the hang-up to the node, only a call that was not cancelled gets
		// to its end.
		r.stream(ctx, id, "import time\nprint('started', flush=True)\ntime.sleep(1000)\nopen('finished', 'w').write('yes')",
			func(e event) bool { return e.name == contract.EventStdout })
		_ = testwait.Poll(ctx, 50*time.Millisecond, func() bool {
			_, err = execute(ctx, client, id, "import os\nprint(os.path.exists('finished'))", "False\n")
			return !errors.Is(err, port.ErrSessionBusy)
		})
		if err != nil {
			t.Fatalf("after hanging up on the first event: %v (the program ran to its end: its events were held back, or the hang-up did not reach the node)", err)
		}
	})

	if err := <-conformance; err != nil {
		t.Fatalf("codeport conformance --base-url %s (the router): %v\n%s", c.URL(), err, confOut.String())
	}
	t.Logf("conformance through the router: %s", lastLine(confOut.String()))

	// A node dies.
	const dead = "node-b"
	if err := c.Kill(dead); err != nil {
		t.Fatal(err)
	}
	t.Run("a dead node's sessions answer 503 backend_unreachable", func(t *testing.T) {
		r := r.with(t)
		for _, i := range byNode[dead] {
			id := ids[i]
			_, err := client.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(x)"})
			if !errors.Is(err, port.ErrBackendUnreachable) {
				t.Errorf("exec in %s's session: %v, want %v", dead, err, port.ErrBackendUnreachable)
			}
		}
		id := ids[byNode[dead][0]]
		for _, call := range [][2]string{
			{"POST", "/sessions/" + id + "/exec"},
			{"GET", "/sessions/" + id + "/files/list"},
			{"DELETE", "/sessions/" + id},
		} {
			h := r.wantError(call[0], call[1], http.StatusServiceUnavailable, "backend_unreachable")
			if h.Get("Retry-After") == "" {
				t.Errorf("%s %s: 503 without Retry-After", call[0], call[1])
			}
		}
	})
	t.Run("the other nodes' sessions are unaffected", func(t *testing.T) {
		var alive []int
		for _, n := range testNodes {
			if n != dead {
				alive = append(alive, byNode[n]...)
			}
		}
		parallel(t, len(alive), 8, func(k int) error {
			i := alive[k]
			_, err := execute(ctx, client, ids[i], "x += 1\nprint(x)", fmt.Sprintf("%d\n", 2*i+2))
			return err
		})
	})
	t.Run("new sessions land on the survivors", func(t *testing.T) {
		const n = 12
		fresh := make([]string, n)
		parallel(t, n, 4, func(i int) error {
			s, err := client.CreateSession(ctx, port.CreateSessionRequest{})
			if err != nil {
				return err
			}
			fresh[i] = s.ID
			_, err = execute(ctx, client, s.ID, "print(6 * 7)", "42\n")
			return err
		})
		for _, id := range fresh {
			if node, _ := port.NodeOf(id); node == dead {
				t.Errorf("session %s created on the dead node", id)
			}
		}
	})
}

// execute runs code in session id and checks that it completed and, when
// want is not empty, printed want.
func execute(ctx context.Context, p port.CodeExecutionPort, id, code, want string) (port.Result, error) {
	res, err := p.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code})
	if err != nil {
		return res, fmt.Errorf("session %s: %w", id, err)
	}
	if res.Outcome != port.OutcomeCompleted || want != "" && res.Stdout != want {
		return res, fmt.Errorf("session %s: %q: %s, stdout %q, stderr %q, want stdout %q", id, code, res.Outcome, res.Stdout, res.Stderr, want)
	}
	return res, nil
}

func checkFile(ctx context.Context, p port.CodeExecutionPort, id, path string, want []byte) error {
	rc, _, err := p.GetFile(ctx, id, path)
	if err != nil {
		return fmt.Errorf("session %s: get %s: %w", id, path, err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		return fmt.Errorf("session %s: read %s: %w", id, path, err)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("session %s: %s holds %d bytes, want %d", id, path, len(got), len(want))
	}
	return nil
}

// parallel runs fn(0..n-1) on workers goroutines and fails t with the
// errors.
func parallel(t *testing.T, n, workers int, fn func(i int) error) {
	t.Helper()
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				errs[i] = fn(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// router makes raw HTTP requests to the router, to see statuses, headers
// and bodies as a client of any language would.
type router struct {
	t     *testing.T
	url   string
	http  *http.Client
	token string
}

func (r *router) with(t *testing.T) *router {
	c := *r
	c.t, c.token = t, testToken
	return &c
}

func (r *router) do(method, path string, body []byte, header http.Header) (int, http.Header, []byte) {
	r.t.Helper()
	req, err := http.NewRequest(method, r.url+path, bytes.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	resp, err := r.http.Do(req)
	if err != nil {
		r.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		r.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp.StatusCode, resp.Header, b
}

// wantError checks that the call is answered with status and a contract
// error body of code (JSON, never an HTML page), and returns the headers.
func (r *router) wantError(method, path string, status int, code string) http.Header {
	r.t.Helper()
	var body []byte
	if method == "POST" {
		body = []byte(`{"tool":"code_execution","input":{"code":"print(1)"}}`)
	}
	got, h, b := r.do(method, path, body, nil)
	var e contract.Error
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if got != status || !strings.HasPrefix(h.Get("Content-Type"), "application/json") || dec.Decode(&e) != nil || e.Code != code || e.Detail == "" {
		r.t.Errorf("%s %s: %d %s %q, want %d with a JSON error of code %q", method, path, got, h.Get("Content-Type"), b, status, code)
	}
	return h
}

// wantBodyTooLarge sends only the headers of an upload larger than the
// router lets through, and checks the router's 413 answer.
func (r *router) wantBodyTooLarge(path string) {
	r.t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(r.url, "http://"))
	if err != nil {
		r.t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(testwait.Deadline(r.t))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: %d\r\n\r\n",
		path, strings.TrimPrefix(r.url, "http://"), r.token, int64(200)<<20)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e contract.Error
	if resp.StatusCode != http.StatusRequestEntityTooLarge || json.Unmarshal(b, &e) != nil || e.Code != "file_too_large" {
		r.t.Errorf("a 200 MiB upload: %d %q, want 413 with a JSON error of code file_too_large", resp.StatusCode, b)
	}
}

type event struct{ name, data string }

// stream runs code in session id with "Accept: text/event-stream" and
// returns its events. When until is set, it hangs up after the first
// event for which until returns true.
func (r *router) stream(ctx context.Context, id, code string, until func(event) bool) []event {
	r.t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"tool": "code_execution", "input": map[string]string{"code": code}})
	req, err := http.NewRequestWithContext(ctx, "POST", r.url+"/sessions/"+id+"/exec", bytes.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", contract.EventStreamType)
	req.Header.Set("Authorization", "Bearer "+r.token)
	resp, err := r.http.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), contract.EventStreamType) {
		b, _ := io.ReadAll(resp.Body)
		r.t.Fatalf("streamed exec: %d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	var (
		events []event
		cur    event
	)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.name != "" {
				events = append(events, cur)
				if until != nil && until(cur) {
					return events
				}
			}
			cur = event{}
		case strings.HasPrefix(line, ":"): // a keep-alive comment
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		}
	}
	if err := sc.Err(); err != nil {
		r.t.Fatalf("reading the event stream: %v", err)
	}
	if until != nil || len(events) == 0 {
		r.t.Fatalf("the event stream ended after %d events: %v", len(events), events)
	}
	return events
}
