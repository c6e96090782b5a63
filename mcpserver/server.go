package mcpserver

import (
	"context"
	"log/slog"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codeport/codeport/internal/purpose"
	"github.com/codeport/codeport/port"
)

// Option configures New.
type Option func(*options)

type options struct {
	version string
	logger  *slog.Logger
}

// WithVersion sets the version the server reports to clients.
func WithVersion(v string) Option {
	return func(o *options) {
		if v != "" {
			o.version = v
		}
	}
}

// WithLogger logs what goes wrong that no client is told (a call's own
// session that could not be destroyed; at Debug, output that could not be
// sent) and the SDK's warnings and errors; never code, program output or
// file contents.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// The names of the tools.
const (
	toolRunPython      = "run_python"
	toolBash           = "bash"
	toolTextEditor     = "text_editor"
	toolCreateSession  = "create_session"
	toolDestroySession = "destroy_session"
)

const instructions = `Runs code in a sandbox. run_python without a session_id runs in a fresh interpreter that is discarded after the call. For state that persists (variables, imports, files), call create_session once, pass its session_id to every later call, and call destroy_session when done. Files a call writes come back with its result and stay readable as codeport://sessions/{session_id}/outputs/{file_id} resources while the session lives.`

// New returns an MCP server over p. caps is p's capability description
// (the tools it offers, its limits, and the purpose hint the run_python
// tool is described by: when caps.PurposeHint is empty, one is made from
// caps). The server can be run over any transport, any number of times;
// every protocol session shares p's sessions, which are named by their
// ids alone, as in contract v1.
func New(p port.CodeExecutionPort, caps port.Capabilities, opts ...Option) *mcp.Server {
	o := options{version: "dev", logger: slog.New(slog.DiscardHandler)}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if caps.PurposeHint == "" {
		caps.PurposeHint = purpose.Hint(caps, purpose.Options{})
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "codeport", Title: "codeport", Version: o.version}, &mcp.ServerOptions{
		Instructions: instructions,
		// The SDK logs at Info what every session does; keep its warnings.
		Logger: slog.New(minLevel{Handler: o.logger.Handler(), min: slog.LevelWarn}),
	})
	h := &handler{p: p, caps: caps, log: o.logger}

	no := false
	mcp.AddTool(s, &mcp.Tool{
		Name:        toolRunPython,
		Title:       "Run Python",
		Description: caps.PurposeHint,
		InputSchema: runPythonSchema(),
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: &caps.Network},
	}, h.runPython)
	mcp.AddTool(s, &mcp.Tool{
		Name:        toolCreateSession,
		Title:       "Create session",
		Description: "Starts a sandbox session: a fresh Python interpreter and an empty working directory. Pass its session_id to run_python (and the other tools) so that variables, imports and files persist between calls; end it with destroy_session. An idle session is reclaimed after a while, and every session after its lifetime; the result says when.",
		InputSchema: createSessionSchema(),
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: &no},
	}, h.createSession)
	mcp.AddTool(s, &mcp.Tool{
		Name:        toolDestroySession,
		Title:       "Destroy session",
		Description: "Ends a session made by create_session: its Python state and its files are gone. Ending a session that is already gone is not an error.",
		InputSchema: destroySessionSchema(),
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: &no, IdempotentHint: true},
	}, h.destroySession)
	if offers(caps, port.ToolBashCodeExecution) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        toolBash,
			Title:       "Run a shell command",
			Description: bashDescription(caps),
			InputSchema: bashSchema(),
			Annotations: &mcp.ToolAnnotations{OpenWorldHint: &caps.Network},
		}, h.bash)
	}
	if offers(caps, port.ToolTextEditorExecution) {
		mcp.AddTool(s, &mcp.Tool{
			Name:        toolTextEditor,
			Title:       "Edit a text file",
			Description: editorDescription,
			InputSchema: editorSchema(),
			Annotations: &mcp.ToolAnnotations{OpenWorldHint: &no},
		}, h.textEditor)
	}
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "output_file",
		Title:       "A file a call produced",
		Description: "A file a tool call created or changed, as it was when that call ended; readable while its session lives. Its URI comes with the call's result.",
		URITemplate: outputURITemplate,
	}, h.readOutput)
	return s
}

// offers reports whether the port runs the tool kind.
func offers(caps port.Capabilities, k port.ToolKind) bool {
	return slices.Contains(caps.Tools, k)
}

// handler holds what the tools and the resource template share.
type handler struct {
	p    port.CodeExecutionPort
	caps port.Capabilities
	log  *slog.Logger
}

// minLevel drops records below min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{Handler: m.Handler.WithAttrs(attrs), min: m.min}
}

func (m minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: m.Handler.WithGroup(name), min: m.min}
}

// schemaFor infers the input schema of T and lets edit refine it.
func schemaFor[T any](edit func(props map[string]*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic("mcpserver: " + err.Error()) // the types are this package's own
	}
	if edit != nil {
		edit(s.Properties)
	}
	return s
}
