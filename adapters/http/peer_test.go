package httpadapter_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/port"
)

// These tests put backends that lie in front of the adapter: each answers
// a well-formed contract v1 message that is not the answer to the call
// made.

// A backend that names another path in the output-file header of a
// download by path does not move the file: GetFile's FileInfo holds the
// path the caller asked for, as documented, whatever the backend says.
func TestGetFileKeepsTheAskedPath(t *testing.T) {
	a, _ := backend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(contract.PathHeader, "..%2F..%2Fetc%2Fpasswd")
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "content")
	}, nil)
	rc, info, err := a.GetFile(context.Background(), "s1", "notes.txt")
	if err != nil {
		t.Fatalf("GetFile: %v", err)
	}
	defer rc.Close()
	if info.Path != "notes.txt" {
		t.Errorf("GetFile(notes.txt) reports the file as %q", info.Path)
	}
}

// A backend that answers an exec call with another call's tool use id
// (a proxy that mixes up answers, a backend that reuses a buffer) is not
// contract v1: the id is the one the request carried, echoed.
func TestExecAnswerForAnotherCallIsRefused(t *testing.T) {
	a, _ := backend(t, answer(200, `{"tool_use_id":"srvtoolu_other","execution_time_ms":1,
		"result_block":{"type":"code_execution_tool_result","tool_use_id":"srvtoolu_other",
		"content":{"type":"code_execution_result","stdout":"someone else's\n","stderr":"","return_code":0,"content":[]}}}`), nil)
	res, err := a.Execute(context.Background(), "s1", port.ExecuteRequest{
		Tool: port.ToolCodeExecution, Code: "print(1)", ToolUseID: "srvtoolu_mine"})
	if !errors.Is(err, port.ErrBackendUnreachable) {
		t.Errorf("an answer with tool use id %q to a call with srvtoolu_mine: %v, want ErrBackendUnreachable", res.ToolUseID, err)
	}
}

// A destroy that a codeport server refuses because the route is unknown
// (the base URL leads to no contract v1 backend: a wrong prefix) did not
// destroy the session, which lives on: it is not the 404 of an unknown
// session, which succeeds.
func TestDestroyOnAnUnknownRouteFails(t *testing.T) {
	a, _ := backend(t, answer(404, `{"detail":"no such route","code":"route_not_found"}`), nil)
	if err := a.DestroySession(context.Background(), "s1"); !errors.Is(err, port.ErrBackendUnreachable) {
		t.Errorf("DELETE answered 404 route_not_found: %v, want ErrBackendUnreachable", err)
	}
	gone, _ := backend(t, answer(404, `{"detail":"gone","code":"session_not_found"}`), nil)
	if err := gone.DestroySession(context.Background(), "s1"); err != nil {
		t.Errorf("DELETE answered 404 session_not_found: %v", err)
	}
}
