package httpadapter_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/codeport/codeport/contract"
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
