package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/internal/testkit/measure"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/server"
)

// benchServer serves the in-process adapter on loopback, as `codeport
// serve` does.
func benchServer(b *testing.B) (*httptest.Server, *http.Client) {
	b.Helper()
	// No warm pool: its background refills would add noise, and a loop of
	// creates drains it anyway (adapters/wasm measures pool hits).
	a := wasmtest.New(b, func(c wasm.Config) wasm.Config { return c.WithWarmPool(0, nil) })
	srv := httptest.NewServer(server.NewHandler(a))
	b.Cleanup(srv.Close)
	return srv, srv.Client() // keep-alive
}

func call(b *testing.B, c *http.Client, method, url string, body []byte, want int) []byte {
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		b.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, out)
	}
	return out
}

func createSession(b *testing.B, srv *httptest.Server, c *http.Client) string {
	var h contract.SessionHandle
	if err := json.Unmarshal(call(b, c, "POST", srv.URL+"/sessions", nil, 201), &h); err != nil {
		b.Fatal(err)
	}
	return h.SessionID
}

var printOne = []byte(`{"tool":"code_execution","input":{"code":"print(1)"}}`)

// BenchmarkHTTPExecutePrint: print(1) in a live session over loopback HTTP
// with keep-alive (the reference backend: 0.58 ms median).
func BenchmarkHTTPExecutePrint(b *testing.B) {
	srv, c := benchServer(b)
	id := createSession(b, srv, c)
	url := srv.URL + "/sessions/" + id + "/exec"
	var samples []time.Duration
	for b.Loop() {
		t := time.Now()
		call(b, c, "POST", url, printOne, 200)
		samples = append(samples, time.Since(t))
	}
	measure.Report(b, "call", samples)
}

// BenchmarkHTTPCreateExecDestroy: create + print(1) + delete over HTTP
// (the reference backend: 23 ms median).
func BenchmarkHTTPCreateExecDestroy(b *testing.B) {
	srv, c := benchServer(b)
	var samples []time.Duration
	for b.Loop() {
		t := time.Now()
		id := createSession(b, srv, c)
		call(b, c, "POST", srv.URL+"/sessions/"+id+"/exec", printOne, 200)
		call(b, c, "DELETE", srv.URL+"/sessions/"+id, nil, 204)
		samples = append(samples, time.Since(t))
	}
	measure.Report(b, "create-exec-destroy", samples)
}

// BenchmarkHTTPStreamedOutput: a cell writing 1 MiB in 64 KiB flushed
// writes, over loopback HTTP: the plain JSON answer against the
// Server-Sent Events of the same call (every event parsed off the wire).
func BenchmarkHTTPStreamedOutput(b *testing.B) {
	body := []byte(`{"tool":"code_execution","input":{"code":"import sys\ns = 'x' * 65536\nfor _ in range(16):\n    sys.stdout.write(s)\n    sys.stdout.flush()"}}`)
	for _, sse := range []bool{false, true} {
		name := "json"
		if sse {
			name = "sse"
		}
		b.Run(name, func(b *testing.B) {
			a := wasmtest.New(b, func(c wasm.Config) wasm.Config { return c.WithWarmPool(0, nil).WithOutputLimit(2 << 20) })
			srv := httptest.NewServer(server.NewHandler(a))
			b.Cleanup(srv.Close)
			c := srv.Client()
			id := createSession(b, srv, c)
			samples := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t := time.Now()
				req, _ := http.NewRequest("POST", srv.URL+"/sessions/"+id+"/exec", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				if sse {
					req.Header.Set("Accept", "text/event-stream")
				}
				resp, err := c.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				if sse {
					sc := bufio.NewScanner(resp.Body)
					sc.Buffer(make([]byte, 4<<20), 4<<20)
					for sc.Scan() {
						if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok && !bytes.HasPrefix(d, []byte(`{"tool_use_id"`)) {
							var o contract.OutputEvent
							if err := json.Unmarshal(d, &o); err != nil {
								b.Fatal(err)
							}
							n += len(o.Text)
						}
					}
				} else {
					var r contract.ExecResponse
					if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
						b.Fatal(err)
					}
					n = len(r.ResultBlock.Content.Stdout)
				}
				resp.Body.Close()
				samples = append(samples, time.Since(t))
				if n != 1<<20 {
					b.Fatalf("%d bytes of output", n)
				}
			}
			measure.Report(b, "call", samples)
		})
	}
}
