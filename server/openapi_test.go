package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// failureRecorder stands in for testing.TB to see what a check reports.
type failureRecorder struct {
	testing.TB
	failures []string
}

func (r *failureRecorder) Helper() {}

func (r *failureRecorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, format)
}

// TestSpecCheckerCatches makes sure the response check used by every other
// test has teeth: responses that break openapi.yaml must be reported.
func TestSpecCheckerCatches(t *testing.T) {
	s := mustSpec(t)
	jsonHeader := func(kv ...string) http.Header {
		h := http.Header{"Content-Type": {"application/json"}}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	const goodExec = `{"tool_use_id":"a","execution_time_ms":1,"outcome":"completed","output_truncated":false,"state_lost":false,` +
		`"result_block":{"type":"code_execution_tool_result","tool_use_id":"a","content":{"type":"code_execution_result","stdout":"","stderr":"","return_code":0,"content":[]}}}`
	tests := []struct {
		name           string
		method, target string
		status         int
		header         http.Header
		body           string
		bad            bool
	}{
		{"good exec", "POST", "/sessions/s/exec", 200, jsonHeader(), goodExec, false},
		{"exec without result_block", "POST", "/sessions/s/exec", 200, jsonHeader(),
			`{"tool_use_id":"a","execution_time_ms":1,"outcome":"completed","output_truncated":false,"state_lost":false}`, true},
		{"exec with null file list", "POST", "/sessions/s/exec", 200, jsonHeader(),
			strings.Replace(goodExec, `"content":[]`, `"content":null`, 1), true},
		{"exec with an unknown outcome", "POST", "/sessions/s/exec", 200, jsonHeader(),
			strings.Replace(goodExec, `"completed"`, `"exploded"`, 1), true},
		{"exec with an unknown outcome", "POST", "/sessions/s/exec", 200, jsonHeader(),
			strings.Replace(goodExec, `"outcome":"completed",`, `"outcome":"exploded",`, 1), true},
		{"exec without codeport's additions (another backend)", "POST", "/sessions/s/exec", 200, jsonHeader(),
			strings.Replace(goodExec, `"outcome":"completed",`, ``, 1), false},
		{"503 without Retry-After", "POST", "/sessions", 503, jsonHeader(), `{"detail":"full"}`, true},
		{"503 with Retry-After 0", "POST", "/sessions", 503, jsonHeader("Retry-After", "0"), `{"detail":"full"}`, true},
		{"503 with Retry-After", "POST", "/sessions", 503, jsonHeader("Retry-After", "2"), `{"detail":"full"}`, false},
		{"401 without WWW-Authenticate", "POST", "/sessions", 401, jsonHeader(), `{"detail":"no"}`, true},
		{"undocumented status", "GET", "/healthz", 418, jsonHeader(), `{"detail":"teapot"}`, true},
		{"201 where 200 is due", "POST", "/sessions/s/exec", 201, jsonHeader(), goodExec, true},
		{"handle with null bound", "POST", "/sessions", 201, jsonHeader(), `{"session_id":"x","idle_timeout_seconds":null}`, true},
		{"handle with empty id", "POST", "/sessions", 201, jsonHeader(), `{"session_id":""}`, true},
		{"error without detail", "POST", "/sessions/s/exec", 404, jsonHeader(), `{"message":"x"}`, true},
		{"error with a code", "POST", "/sessions/s/exec", 404, jsonHeader(), `{"detail":"x","code":"session_not_found"}`, false},
		{"error with an undocumented code", "POST", "/sessions/s/exec", 404, jsonHeader(), `{"detail":"x","code":"exploded"}`, true},
		{"unrouted error with an undocumented code", "GET", "/nope", 404, jsonHeader(), `{"detail":"x","code":"exploded"}`, true},
		{"plain-text error", "POST", "/sessions/s/exec", 404, http.Header{"Content-Type": {"text/plain"}}, `not found`, true},
		{"plain-text 405", "PUT", "/sessions", 405, http.Header{"Content-Type": {"text/plain"}}, `Method Not Allowed`, true},
		{"file list with a negative size", "GET", "/sessions/s/files/list", 200, jsonHeader(), `{"files":[{"path":"a","size_bytes":-1}]}`, true},
		{"file list without is_dir (another backend)", "GET", "/sessions/s/files/list", 200, jsonHeader(), `{"files":[{"path":"a","size_bytes":1}]}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := &failureRecorder{TB: t}
			s.checkResponse(rec, httptest.NewRequest(tc.method, tc.target, nil), tc.status, tc.header, []byte(tc.body))
			if got := len(rec.failures) > 0; got != tc.bad {
				t.Errorf("reported %v, want %v", rec.failures, tc.bad)
			}
		})
	}
}
