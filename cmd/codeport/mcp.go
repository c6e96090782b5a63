package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codeport/codeport/binding"
	"github.com/codeport/codeport/mcpserver"
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

Over HTTP, authentication and hosts are as for serve: with a token, every
request needs "Authorization: Bearer <token>"; without one, a request on a
loopback address must name a loopback host, and one a browser sends from
another origin is refused. --allowed-hosts names more hosts ("*": any).

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
	var token string
	var hosts []string
	if listen {
		var warnings []string
		var err error
		token, warnings, err = authToken(cfg, tokenFlag)
		if err != nil {
			fmt.Fprintf(stderr, "codeport mcp: %v\n", err)
			return 2
		}
		for _, w := range warnings {
			logger.Warn(w)
		}
		hosts, _ = cfg.AllowedHostList() // checked by Load
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
	srv := mcpserver.New(bound, caps, mcpserver.WithVersion(buildVersion()), mcpserver.WithLogger(logger))
	// A request carries at most a source (code) or a file (the editor's
	// file_text), JSON-escaped; give it room for both, and the framing.
	limits := bound.Limits()
	maxMessage := 2*max(limits.SourceBytes, limits.FileBytes) + 1<<20
	if limits.SourceBytes <= 0 || limits.FileBytes <= 0 {
		maxMessage = max(maxMessage, int64(mcp.DefaultMaxLineLength))
	}

	if !listen {
		logger.Info("serving MCP over stdio", "adapter", bound.Adapter)
		t := &mcp.IOTransport{Reader: readCloser(stdin), Writer: nopWriteCloser{stdout}, MaxLineLength: int(maxMessage)}
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

	g := &mcpGuard{next: mcpHTTPHandler(srv, maxMessage), hosts: hosts, explicit: hosts != nil, anyHost: slices.Contains(hosts, "*")}
	if token != "" {
		g.tokenHash = sha256.Sum256([]byte(token))
		g.hasToken = true
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", g)
	hs := newHTTPServer(mux, cfg, 0, logger)
	// A response is an event stream that lasts as long as the call (the
	// standalone stream of a protocol session, as long as the session), so
	// no write deadline may cut it: a client that stops reading holds its
	// connection until it goes or the server stops.
	hs.WriteTimeout = 0
	logger.Info("serving MCP over streamable HTTP", "addr", ln.Addr().String(), "path", "/mcp", "adapter", bound.Adapter,
		"auth", token != "", "hosts", hostCheckSummary(hosts, token != ""))
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

// mcpGuard is what stands before the MCP handler, as serve's handler
// does before its routes: the bearer token, and the host and origin
// checks that keep a web page from reaching an unauthenticated local
// server.
type mcpGuard struct {
	next      http.Handler
	hasToken  bool
	tokenHash [sha256.Size]byte
	hosts     []string
	explicit  bool // allowed-hosts was set: every request is checked
	anyHost   bool // "*" was among them: none is
}

func (g *mcpGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.guarded(r) {
		if !g.hostAllowed(r.Host) {
			http.Error(w, "host not allowed", http.StatusForbidden)
			return
		}
		// No MCP client is a page of this server's own origin.
		for _, o := range r.Header.Values("Origin") {
			u, err := url.Parse(o)
			if err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
				http.Error(w, "cross-origin request refused", http.StatusForbidden)
				return
			}
		}
	}
	if g.hasToken && !g.authorized(r) {
		w.Header().Set("WWW-Authenticate", "Bearer")
		http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
		return
	}
	g.next.ServeHTTP(w, r)
}

// guarded reports whether the request is subject to the host and origin
// checks: every request when allowed-hosts is set (unless "*"), else
// those on a loopback address of a server without a token (a browser
// cannot attach the token).
func (g *mcpGuard) guarded(r *http.Request) bool {
	switch {
	case g.anyHost:
		return false
	case g.explicit:
		return true
	case g.hasToken:
		return false
	}
	addr, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if addr == nil {
		return false
	}
	ap, err := netip.ParseAddrPort(addr.String())
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

func (g *mcpGuard) hostAllowed(host string) bool {
	h := hostOf(host)
	if h == "" {
		return false
	}
	if h == "localhost" {
		return true
	}
	if ip, err := netip.ParseAddr(h); err == nil && ip.Unmap().IsLoopback() {
		return true
	}
	return slices.ContainsFunc(g.hosts, func(a string) bool { return hostOf(a) == h })
}

// hostOf is the name of a Host header or of an allowed host: without port,
// brackets or trailing dot, in lower case.
func hostOf(h string) string {
	h = strings.TrimSpace(h)
	if name, _, err := net.SplitHostPort(h); err == nil {
		h = name
	}
	h = strings.TrimPrefix(strings.TrimSuffix(h, "]"), "[")
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

func (g *mcpGuard) authorized(r *http.Request) bool {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(got[:], g.tokenHash[:]) == 1
}
