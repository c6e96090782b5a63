package mcpserver_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/mcpserver"
)

// Serving the in-process adapter to an MCP client; here the SDK's own
// client over an in-memory transport, where a program would run the server
// over &mcp.StdioTransport{} or mcp.NewStreamableHTTPHandler.
func ExampleNew() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "mcpserver-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	p, err := wasm.New(wasm.NewConfig().WithSessionsDir(dir))
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	caps, err := p.Describe(ctx)
	if err != nil {
		log.Fatal(err)
	}
	srv := mcpserver.New(p, caps, mcpserver.WithVersion("1.0.0"))

	serverEnd, clientEnd := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverEnd, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Wait()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example"}, nil).Connect(ctx, clientEnd, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_python", Arguments: map[string]any{"code": "print(6 * 7)"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// stdout:
	// 42
	// return_code: 0
}
