package httpadapter_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/port/porttest"
	"github.com/codeport/codeport/server"
)

// A remote contract v1 backend through the adapter. Here the backend is
// codeport's own handler serving the in-memory fake, on loopback.
func Example() {
	backend := httptest.NewServer(server.NewHandler(porttest.New(), server.WithBearerToken("s3cret")))
	defer backend.Close()

	p, err := httpadapter.New(httpadapter.NewConfig(backend.URL).WithToken("s3cret"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	ctx := context.Background()
	sess, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		fmt.Println(err)
		return
	}
	text := "hello\n"
	res, err := p.Execute(ctx, sess.ID, port.ExecuteRequest{Tool: port.ToolTextEditorExecution,
		Editor: &port.EditorInput{Command: port.EditorCreate, Path: "notes.txt", FileText: &text}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Outcome)
	files, err := p.ListFiles(ctx, sess.ID, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(files[0].Path, files[0].Size)
	// The remote's refusals keep their kind: its error body's code.
	_, err = p.Execute(ctx, "no-such-session", port.ExecuteRequest{Tool: port.ToolTextEditorExecution,
		Editor: &port.EditorInput{Command: port.EditorView, Path: "notes.txt"}})
	fmt.Println(port.ErrorCode(err))
	// Output:
	// completed
	// notes.txt 6
	// session_not_found
}
