package httpadapter_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/port"
)

// These tests put backends that lie or misbehave in front of the
// adapter: answers that are well-formed but not the answer to the call
// made, or that do not end when the answer has.

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

// A backend that keeps the event stream open after its result event (an
// event framework that holds the connection for more, a proxy) does not
// hold the call: the result is complete, and Execute returns it at once
// rather than at the end of its wall clock, which the margin here puts
// past the test's own time. The rest of the stream is read behind the
// call, and Close ends that read and awaits it: the request ends at
// Close, long before its wall clock.
func TestStreamHeldOpenAfterTheResult(t *testing.T) {
	const result = `{"tool_use_id":"t","execution_time_ms":1,"result_block":{"type":"code_execution_tool_result","tool_use_id":"t","content":{"type":"code_execution_result","stdout":"ab","stderr":"","return_code":0,"content":[]}}}`
	ended := make(chan struct{})
	a, _ := backend(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "event: stdout\ndata: {\"text\":\"ab\"}\n\nevent: result\ndata: "+result+"\n\n")
		_ = http.NewResponseController(w).Flush()
		<-r.Context().Done() // the client ended the request
		close(ended)
	}, func(cfg httpadapter.Config) httpadapter.Config {
		return cfg.WithTimeoutMargin(24 * time.Hour)
	})
	var got strings.Builder
	res, err := a.Execute(context.Background(), "s1", port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print('ab')",
		Timeout: time.Second, OnOutput: func(_ port.Stream, b []byte) { got.Write(b) }})
	if err != nil || res.Stdout != "ab" || got.String() != "ab" {
		t.Fatalf("%v %+v, streamed %q", err, res, got.String())
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	<-ended
}

// A backend that says it stored an upload before the adapter has sent
// the whole file did not store that file: PutFile fails rather than
// report the upload done.
func TestUploadAnsweredBeforeItWasSent(t *testing.T) {
	release := make(chan struct{})
	a, _ := backend(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadFull(r.Body, make([]byte, 16))
		const stored = `{"path":"f.txt","size_bytes":4}`
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(stored)))
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, stored)
		_ = http.NewResponseController(w).Flush()
		<-release // neither reads the rest nor closes
	}, nil)
	t.Cleanup(func() { close(release) }) // before the server closes
	info, err := a.PutFile(context.Background(), "s1", "f.txt", endless{})
	if err == nil {
		t.Fatalf("an upload that was never sent whole was reported stored: %+v", info)
	}
}

// endless is a file that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// A download is answered 200 with the file. Another success (206 with a
// part of the file, 204 with none) is not the file asked for: GetFile
// fails rather than return a part of it, or nothing, as the whole file.
func TestDownloadAnsweredWithAnotherSuccess(t *testing.T) {
	for _, status := range []int{http.StatusPartialContent, http.StatusNoContent, http.StatusAccepted} {
		a, _ := backend(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			if status == http.StatusPartialContent {
				w.Header().Set("Content-Range", "bytes 0-3/100")
			}
			w.WriteHeader(status)
			if status != http.StatusNoContent {
				_, _ = io.WriteString(w, "abcd")
			}
		}, nil)
		rc, info, err := a.GetFile(context.Background(), "s1", "notes.txt")
		if err == nil {
			got, _ := io.ReadAll(rc)
			rc.Close()
			t.Errorf("a download answered %d was taken for the file: %q, %+v", status, got, info)
		} else if !errors.Is(err, port.ErrBackendUnreachable) {
			t.Errorf("a download answered %d: %v, want ErrBackendUnreachable", status, err)
		}
	}
}
