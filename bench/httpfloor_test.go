package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/bench/internal/table"
	"github.com/codeport/codeport/internal/testkit/measure"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/server"
)

// BenchmarkHTTPFloor measures what HTTP costs a call, against what it
// could cost: W2's print(1) in one live session of one in-process
// adapter, three ways, in alternating blocks of calls so that all three
// see the same machine:
//   - inproc: the adapter's Execute, called directly;
//   - nethttp: the same Execute behind the least a JSON-over-HTTP service
//     is (a net/http handler that decodes {"code"}, calls Execute with the
//     request's context and encodes the output, and a net/http client with
//     keep-alive): the floor, which codeport's own code cannot go under;
//   - codeport: the same behind server.NewHandler, driven by adapters/http,
//     as W2's "codeport over HTTP" column.
//
// codeport − nethttp is what codeport's server and client add to the
// floor; nethttp − inproc is the floor's own cost, the transport and its
// goroutines.
func BenchmarkHTTPFloor(b *testing.B) {
	b.Run(table.FloorPeer, func(b *testing.B) {
		a, _ := startWasm(b, peerConfig{})
		id := newSession(b, a)
		ctx := context.Background()

		ours := httptest.NewServer(server.NewHandler(a))
		b.Cleanup(ours.Close)
		client, err := httpadapter.New(httpadapter.NewConfig(ours.URL))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = client.Close() })

		bare := httptest.NewServer(bareExecHandler(a, id))
		b.Cleanup(bare.Close)
		bareClient := bare.Client()
		bareCall := func() error { return bareExec(ctx, bareClient, bare.URL, liveCode, liveOut) }

		ways := []struct {
			name string
			call func() error
		}{
			{"inproc", func() error { return run(ctx, a, id, liveCode, liveOut) }},
			{"nethttp", bareCall},
			{"codeport", func() error { return run(ctx, client, id, liveCode, liveOut) }},
		}
		for _, w := range ways { // each way's first call's one-off costs
			if err := w.call(); err != nil {
				b.Fatalf("%s: %v", w.name, err)
			}
		}
		const block = 50
		rounds := reps(8)
		for b.Loop() {
			samples := make([][]time.Duration, len(ways))
			for r := range rounds {
				for k := range ways {
					w := (k + r) % len(ways) // each way leads in turn
					for range block {
						t0 := time.Now()
						if err := ways[w].call(); err != nil {
							b.Fatalf("%s: %v", ways[w].name, err)
						}
						samples[w] = append(samples[w], time.Since(t0))
					}
				}
			}
			for w := range ways {
				measure.Report(b, ways[w].name, samples[w])
			}
		}
	})
}

// bareExecHandler is the floor's server: it runs the code of a JSON body
// {"code": ...} in session id and answers the output as JSON.
func bareExecHandler(p port.CodeExecutionPort, id string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Code string `json:"code"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		res, err := p.Execute(r.Context(), id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: req.Code})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(bareAnswer{Stdout: res.Stdout, Stderr: res.Stderr, ReturnCode: res.ReturnCode, Outcome: string(res.Outcome)})
	})
}

type bareAnswer struct {
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	ReturnCode int    `json:"return_code"`
	Outcome    string `json:"outcome"`
}

// bareExec is the floor's client: one POST of code, whose output must be
// want.
func bareExec(ctx context.Context, c *http.Client, url, code, want string) error {
	body, err := json.Marshal(map[string]string{"code": code})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var out bareAnswer
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return fmt.Errorf("status %d: %w", resp.StatusCode, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body) // the connection is reused
	if resp.StatusCode != http.StatusOK || out.Outcome != string(port.OutcomeCompleted) || out.Stdout != want {
		return fmt.Errorf("status %d, %s, stdout %q, stderr %q", resp.StatusCode, out.Outcome, out.Stdout, out.Stderr)
	}
	return nil
}
