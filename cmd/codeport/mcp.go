package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codeport/codeport/binding"
	"github.com/codeport/codeport/mcpserver"
	"github.com/codeport/codeport/server"
)

// mcpAbout is mcp's help between its synopsis and its flags.
const mcpAbout = `Serves the bound backend as a Model Context Protocol server: over stdio
(JSON-RPC on stdin and stdout; logs go to stderr) by default, or over
streamable HTTP at http://ADDR/mcp when --listen ADDR is given on the
command line (a listen setting from the environment or a config file is
serve's, and does not switch mcp to HTTP).

Tools: run_python (its description is the purpose hint), create_session,
destroy_session, and bash and text_editor when the backend offers them.
Produced files are resources codeport://sessions/{session_id}/outputs/{file_id};
output streams as progress notifications and log messages.

Over HTTP, authentication, tenants, hosts and the request size are as for
serve, from the same settings: with a token, every request needs
"Authorization: Bearer <token>"; with tenants, a tenant's key, and each
tenant reaches only the sessions it made, within its limits; without
either, a request on a loopback address must name a loopback host, and one
a browser sends from another origin is refused. --allowed-hosts names more
hosts ("*": any). A request body over serve's limit is refused (413).

A message that is not JSON-RPC 2.0 (not JSON, a batch, a repeated key, ...)
is answered with a JSON-RPC error: over stdio the server then reads on.

Stdio ends when stdin does, and either ends on SIGINT or SIGTERM: calls in
flight are cancelled, and every session is destroyed.

`

// mcpSessionTimeout closes an HTTP protocol session no request has come
// on for this long (the sandbox sessions it made live on by their own
// idle timeout): a client that goes away without ending its session
// leaves nothing behind for ever.
const mcpSessionTimeout = time.Hour

// mcpShutdownTimeout bounds the HTTP server's graceful shutdown.
const mcpShutdownTimeout = 10 * time.Second

func mcpCommand(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	b := newBinder(nil)
	cfg, fs, code := command(b, "mcp", "mcp [flags]", mcpAbout, args, stderr, nil)
	if code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "codeport mcp: unexpected arguments %q\n", fs.Args())
		return 2
	}
	var listen, tokenFlag bool
	fs.Visit(func(f *flag.Flag) {
		listen = listen || f.Name == "listen"
		tokenFlag = tokenFlag || f.Name == "auth-token"
	})
	logger := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	for _, w := range envWarnings(b) {
		logger.Warn(w)
	}
	var acc access
	if listen {
		var warnings []string
		var err error
		acc, warnings, err = loadAccess(cfg, tokenFlag)
		if err != nil {
			fmt.Fprintf(stderr, "codeport mcp: %v\n", err)
			return 2
		}
		for _, w := range warnings {
			logger.Warn(w)
		}
	}

	// Over HTTP, listen before the backend starts: an address in use is
	// then the one thing said.
	var ln net.Listener
	if listen {
		var err error
		if ln, err = net.Listen("tcp", cfg.Listen); err != nil {
			fmt.Fprintf(stderr, "codeport mcp: %v\n", err)
			return 1
		}
		defer ln.Close() // Serve closes it; this is for the returns before
	}
	bound, err := b.Open(cfg, binding.Options{Logger: logger})
	if err != nil {
		fmt.Fprintf(stderr, "codeport mcp: %v\n", err)
		return 1
	}
	defer bound.Close()
	caps, err := bound.Describe(ctx) // with the purpose hint
	if err != nil {
		fmt.Fprintf(stderr, "codeport mcp: %v\n", err)
		return 1
	}
	mcpOpts := []mcpserver.Option{mcpserver.WithVersion(buildVersion()), mcpserver.WithLogger(logger)}

	if !listen {
		srv := mcpserver.New(bound, caps, mcpOpts...)
		// A message carries at most a source (code) or a file (the
		// editor's file_text), JSON-escaped; give it room for both, and
		// the framing.
		limits := bound.Limits()
		maxMessage := 2*max(limits.SourceBytes, limits.FileBytes) + 1<<20
		if limits.SourceBytes <= 0 || limits.FileBytes <= 0 {
			maxMessage = max(maxMessage, int64(mcpserver.DefaultMaxMessageBytes))
		}
		logger.Info("serving MCP over stdio", "adapter", bound.Adapter)
		t := &mcpserver.IOTransport{Reader: readCloser(stdin), Writer: nopWriteCloser{stdout}, MaxMessageBytes: int(min(maxMessage, math.MaxInt32))}
		ss, err := srv.Connect(context.WithoutCancel(ctx), t, nil)
		if err != nil {
			fmt.Fprintf(stderr, "codeport mcp: %v\n", err)
			return 1
		}
		// A signal ends the session as the end of stdin does. The calls in
		// flight are cancelled first (closing the port), for the session
		// waits for its requests.
		closed := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			defer close(closed)
			bound.Close()
			ss.Close()
		})
		err = ss.Wait()
		if !stop() {
			<-closed
		}
		if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
			logger.Warn("MCP session ended", "error", err)
		} else {
			logger.Info("MCP session ended")
		}
		return 0
	}

	// Over HTTP, as serve: the same token, tenants, hosts and body cap,
	// applied by the same code (server.Guard); each tenant reaches its own
	// sessions alone, within its limits.
	opts, ts, code, err := acc.accessOptions(cfg, bound.Adapter, nil, logger)
	if err != nil {
		fmt.Fprintf(stderr, "codeport mcp: %v\n", err)
		return code
	}
	defer ts.Close() // after the server has stopped, before the port closes
	guard := server.NewGuard(append(opts, server.WithLogger(logger))...)
	srv := mcpserver.New(guard.Port(bound), caps, mcpOpts...)
	maxBody := guard.MaxRequestBytes()
	h := mcpserver.CheckRequests(mcpHTTPHandler(srv, maxBody), maxBody)
	if acc.tenants != nil {
		h = tenantSessions(srv, h)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", guard.Handler(h))
	hs := newHTTPServer(mux, cfg, 0, logger)
	// A response is an event stream that lasts as long as the call (the
	// standalone stream of a protocol session, as long as the session), so
	// no write deadline may cut it: a client that stops reading holds its
	// connection until it goes or the server stops.
	hs.WriteTimeout = 0
	logger.Info("serving MCP over streamable HTTP", "addr", ln.Addr().String(), "path", "/mcp", "adapter", bound.Adapter,
		"auth", acc.authenticated(), "tenants", len(acc.tenants), "hosts", hostCheckSummary(acc.hosts, acc.authenticated()))
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "codeport mcp: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	// Calls in flight end (cancelled), then the protocol sessions, whose
	// event streams would otherwise hold the server open.
	bound.Close()
	for ss := range srv.Sessions() {
		ss.Close()
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), mcpShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil {
		logger.Warn("shutdown", "error", err)
		hs.Close()
	}
	<-errc
	return 0
}

// modernProtocol is the first protocol version without protocol sessions
// (the client names its version in each request, and each request stands
// alone).
const modernProtocol = "2026-07-28"

// mcpHTTPHandler serves both eras of the protocol over streamable HTTP.
// The SDK serves the versions before modernProtocol only with protocol
// sessions (stateful: initialize, Mcp-Session-Id, logging/setLevel, a
// standalone event stream), and the later ones only without (stateless),
// so a request is given to one handler or the other by the version its
// Mcp-Protocol-Version header names: modern clients send it with every
// request, earlier ones name an earlier version, or none on initialize.
func mcpHTTPHandler(srv *mcp.Server, maxBody int64) http.Handler {
	getServer := func(*http.Request) *mcp.Server { return srv }
	opts := func(stateless bool) *mcp.StreamableHTTPOptions {
		return &mcp.StreamableHTTPOptions{
			Stateless:                    stateless,
			SessionTimeout:               mcpSessionTimeout,
			PropagateRequestCancellation: true,
			MaxRequestBodyBytes:          maxBody,
			// Hosts are checked by mcpGuard, as serve checks them.
			DisableLocalhostProtection: true,
		}
	}
	stateful := mcp.NewStreamableHTTPHandler(getServer, opts(false))
	stateless := mcp.NewStreamableHTTPHandler(getServer, opts(true))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Protocol-Version") >= modernProtocol {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
}

// buildVersion is the module version this binary was built from, if known.
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func readCloser(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok {
		return rc
	}
	return io.NopCloser(r)
}

// nopWriteCloser keeps stdout open when the transport closes.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// callerKey is where tenantSessions keeps the caller in a TokenInfo.
const callerKey = "codeport.caller"

// tenantSessions hands each request's caller (the tenant the guard
// authenticated) on to the tool calls it makes, which run in their
// protocol session's context rather than the request's: as the SDK's
// TokenInfo, which it gives every request of the session along, and whose
// UserID binds a protocol session to the tenant that began it (a request
// of another tenant's on it is refused). The SDK is not given the key.
func tenantSessions(srv *mcp.Server, next http.Handler) http.Handler {
	verify := func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		c, ok := server.CallerOf(ctx)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: "tenant:" + c.Tenant(), Extra: map[string]any{callerKey: c}}, nil
	}
	bearer := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	srv.AddReceivingMiddleware(func(h mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if ex := req.GetExtra(); ex != nil && ex.TokenInfo != nil {
				if c, ok := ex.TokenInfo.Extra[callerKey].(server.Caller); ok {
					ctx = c.Context(ctx)
				}
			}
			return h(ctx, method, req)
		}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer checked")
		bearer.ServeHTTP(w, r)
	})
}
