// Command codeport serves, runs and checks the code-execution port.
//
//	codeport serve    [flags]                 serve contract v1 over HTTP
//	codeport exec     [flags] -c CODE | FILE | -   run Python once and exit with its status
//	codeport describe [flags]                 print the bound backend's capability description
//	codeport compile  [flags]                 fill the compilation cache ahead of time
//	codeport mcp      [flags]                 serve the backend as an MCP server (stdio, or HTTP with --listen)
//	codeport conformance --base-url URL       check a running contract v1 backend
//	codeport drain --from URL --to URL        move a node's sessions to another node
//
// Every command takes the configuration flags (see `codeport serve -h`),
// which can also come from CODEPORT_* environment variables or a YAML file.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/adapters/subprocess"
	"github.com/codeport/codeport/adapters/wasm"

	// The CLI and its worker processes offer every profile.
	_ "github.com/codeport/codeport/adapters/wasm/scientific"
	"github.com/codeport/codeport/binding"
	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/server"
	"github.com/codeport/codeport/telemetry"
)

const usage = `codeport runs model-written Python in a sandbox.

Usage:
  codeport serve    [flags]                     serve contract v1 over HTTP
  codeport exec     [flags] (-c CODE | FILE | -)  run Python once; exit with its status
  codeport describe [flags]                     print the capability description as JSON
  codeport compile  [flags]                     compile the runtime into the compilation cache ahead of time
  codeport mcp      [flags]                     serve MCP over stdio, or streamable HTTP with --listen
  codeport conformance --base-url URL [--auth-token T]
                                                check a running contract v1 backend
  codeport drain --from URL --to URL            move every session of one node to another, ids kept

Run "codeport COMMAND -h" for the flags of a command.
`

// serveAbout is serve's help between its synopsis and its flags.
const serveAbout = `Serves contract v1 over HTTP on --listen.

Authentication: with a token, every route but /healthz requires
"Authorization: Bearer <token>". Give the token in a file
(--auth-token-file, one line, readable by this user only) or in
$CODEPORT_AUTH_TOKEN: --auth-token is visible to every user of the machine
in the process list.

Tenants: the YAML file's tenants section gives API keys (by SHA-256 or in
files), each naming a tenant with its limits (max_sessions,
executions_per_second, burst). A key reaches only its tenant's sessions;
over a limit the answer is 429 with Retry-After. The auth-token, if also
given, is the operator's own credential, without limits. See
docs/configuration.md.

Hosts: without a token, a request arriving on a loopback address must name
a loopback host (localhost, 127.0.0.1, [::1], any port), and one that a
browser sends from another origin is refused (403), so that a web page
cannot reach the server through DNS rebinding. --allowed-hosts names more
hosts (and then checks every request), "*" turns the check off. JSON bodies
must be sent as application/json (curl -H 'Content-Type: application/json').

Timeouts: a request must arrive within --read-timeout, and its body at
--min-body-rate or faster, averaged over --min-body-rate-window (else 408);
an idle keep-alive connection is closed after --keepalive-timeout. An
execution is bounded by --timeout and --max-timeout, never by these.

Containers: --containers-api=true also serves OpenAI's Containers API under
/v1/containers (an OpenAI client's base URL is http://HOST:PORT/v1), with
the same credentials, tenants and host rules; each container is a session,
held to --max-containers per tenant and ending after --container-expiry
idle unless its creator says otherwise.

Tracing: OpenTelemetry spans (a request, a session made, an execution) are
exported when OTEL_TRACES_EXPORTER (otlp, console or none) or
OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set,
and not at all otherwise; OTEL_SDK_DISABLED=true turns them off.

`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole command; ctx ends it (serve shuts down gracefully).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stderr)
	case "exec":
		return execute(ctx, args[1:], stdin, stdout, stderr)
	case "describe":
		return describe(ctx, args[1:], stdout, stderr)
	case "compile":
		return compileCommand(ctx, args[1:], stdout, stderr)
	case "conformance":
		return conformanceCommand(ctx, args[1:], stdout, stderr)
	case "drain":
		return drainCommand(ctx, args[1:], stdout, stderr)
	case "mcp":
		return mcpCommand(ctx, args[1:], stdin, stdout, stderr)
	case "worker":
		// Hidden: the subprocess adapter runs this binary as its workers.
		return worker(stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "codeport: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}

// newBinder registers every adapter: the codeport binary offers them all.
// reg, when not nil, registers the adapters' own metrics.
func newBinder(reg prometheus.Registerer) *binding.Binder {
	b, err := binding.New(httpadapter.Opener(), wasm.Opener(reg), subprocess.Opener(reg))
	if err != nil {
		panic(err) // the openers are this program's own: only a bug gets here
	}
	return b
}

// noWarmUp turns off what would start interpreters or workers before the
// first session: for a command that starts one session, or none.
func noWarmUp(cfg *binding.Config) {
	if s, ok := cfg.Settings("wasm").(*wasm.Settings); ok {
		// Nor warm modules, unless configured: importing them in the
		// image costs the one session what importing them in it would,
		// and most of it for modules it never imports.
		s.WarmPool = 0
		if s.WarmModules == nil {
			s.WarmModules = wasm.ModuleList{}
		}
	}
	if s, ok := cfg.Settings("subprocess").(*subprocess.Settings); ok {
		s.WarmPool, s.MinWorkers = 0, 0
	}
}

// command parses a subcommand's flags and loads the configuration. about,
// if not empty, is printed between the synopsis and the flags.
func command(b *binding.Binder, name, synopsis, about string, args []string, stderr io.Writer, extra func(*flag.FlagSet)) (binding.Config, *flag.FlagSet, int) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: codeport %s\n\n%sFlags:\n", synopsis, about)
		fs.PrintDefaults()
	}
	if extra != nil {
		extra(fs)
	}
	fv := b.Flags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return binding.Config{}, nil, 0
		}
		return binding.Config{}, nil, 2
	}
	cfg, err := b.Load(fv, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "codeport %s: %v\n", name, err)
		return binding.Config{}, nil, 2
	}
	return cfg, fs, -1
}

// otherEnv names the CODEPORT_* variables that something other than the
// settings reads, so that UnknownEnv does not warn about them: the
// conformance command's token (and its test's URL), the subprocess
// adapter's handshake with its workers, the benchmarks', tests' and
// build scripts' own variables. A name ending in "*" is a prefix.
func otherEnv() []string {
	return []string{
		// conformance --auth-token; adapters/http's conformance test.
		"CODEPORT_CONFORMANCE_*",
		// Set by adapters/subprocess for its workers.
		"CODEPORT_WORKER_SPEC", "CODEPORT_WORKER_COOKIE",
		// bench/, the tests, the runtime's build.sh, deploy/nginx/run-local.sh.
		"CODEPORT_BENCH_*", "CODEPORT_TEST_*", "CODEPORT_SCHEMACHECK_*", "CODEPORT_WASMPATCH_INPUT",
		"CODEPORT_BUILD_DIR", "CODEPORT_JOBS", "CODEPORT_BIN",
	}
}

// envWarnings are warnings about the CODEPORT_* variables of the
// environment that name no setting (a misspelt one would otherwise be
// ignored without a word).
func envWarnings(b *binding.Binder) []string {
	return b.UnknownEnv(os.Environ(), otherEnv()...)
}

// commandNoArgs is command for a subcommand that takes flags only: it
// refuses arguments and prints the environment's warnings on stderr.
func commandNoArgs(b *binding.Binder, name, synopsis, about string, args []string, stderr io.Writer, extra func(*flag.FlagSet)) (binding.Config, int) {
	cfg, fs, rc := command(b, name, synopsis, about, args, stderr, extra)
	if rc >= 0 {
		return cfg, rc
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "codeport %s: unexpected arguments %q\n", name, fs.Args())
		return cfg, 2
	}
	for _, w := range envWarnings(b) {
		fmt.Fprintf(stderr, "codeport %s: warning: %s\n", name, w)
	}
	return cfg, -1
}

// newLogger logs to w at level and above, in the log-format given ("json"
// or, for anything else, "text"; Load has checked it).
func newLogger(w io.Writer, level, format string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func serve(ctx context.Context, args []string, stderr io.Writer) int {
	reg := prometheus.NewRegistry()
	b := newBinder(reg)
	cfg, fs, code := command(b, "serve", "serve [flags]", serveAbout, args, stderr, nil)
	if code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "codeport serve: unexpected arguments %q\n", fs.Args())
		return 2
	}
	logger := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	for _, w := range envWarnings(b) {
		logger.Warn(w)
	}
	tokenFlag := false
	fs.Visit(func(f *flag.Flag) { tokenFlag = tokenFlag || f.Name == "auth-token" })
	acc, warnings, err := loadAccess(cfg, tokenFlag)
	if err != nil {
		fmt.Fprintf(stderr, "codeport serve: %v\n", err)
		return 2
	}
	for _, w := range warnings {
		logger.Warn(w)
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	calls, err := telemetry.NewObserver(reg)
	if err != nil {
		fmt.Fprintf(stderr, "codeport serve: %v\n", err)
		return 1
	}
	key, keyWarnings, err := snapshotKey(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "codeport serve: %v\n", err)
		return 2
	}
	for _, w := range keyWarnings {
		logger.Warn(w)
	}
	// Listen before anything starts: an address in use is then the one
	// thing said, not followed by the runtime's start being stopped.
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		fmt.Fprintf(stderr, "codeport serve: %v\n", err)
		return 1
	}
	defer ln.Close() // Serve closes it; this is for the returns before
	tracer, err := startTracing(ctx, stderr, logger)
	if err != nil {
		fmt.Fprintf(stderr, "codeport serve: %v\n", err)
		return 2
	}
	defer stopTracing(tracer, logger) // after the port has closed: its last spans flushed
	bound, err := b.Open(cfg, binding.Options{Logger: logger, Observers: []port.Observer{calls}, SnapshotKey: key,
		NodeID: cfg.NodeID, MaxSnapshotBytes: cfg.SnapshotLimit, TracerProvider: tracer.TracerProvider(), WorkerTraceEnv: tracer.WorkerEnv(os.Environ())})
	if err != nil {
		fmt.Fprintf(stderr, "codeport serve: %v\n", err)
		return 1
	}
	defer bound.Close()

	opts := []server.Option{
		server.WithReady(bound.Ready),
		server.WithGatherer(reg),
		server.WithLogger(logger),
		server.WithTracerProvider(tracer.TracerProvider()),
		server.WithMinBodyRate(cfg.MinBodyRate, cfg.MinBodyRateWindow),
		server.WithMaxSnapshotRequests(cfg.MaxSnapshotRequests),
	}
	if fb := bound.Limits().FileBytes; fb > 0 {
		// The port enforces the file limit exactly; the body may be a
		// little larger for the multipart framing and the path field.
		opts = append(opts, server.WithMaxUploadBytes(fb+64<<10))
	}
	accessOpts, ts, code, err := acc.accessOptions(cfg, bound.Adapter, reg, logger)
	if err != nil {
		fmt.Fprintf(stderr, "codeport serve: %v\n", err)
		return code
	}
	defer ts.Close() // after the server has stopped, before the port closes
	opts = append(opts, accessOpts...)
	handler := server.NewHandler(bound, opts...)
	if cfg.ContainersAPI {
		store, api := newContainersAPI(cfg, bound, bound.Limits().FileBytes, accessOpts, logger)
		// After the server has stopped; before the tenants and the port
		// close, since ending a container destroys its session through
		// them.
		defer func() {
			if err := store.Close(); err != nil {
				logger.Warn("closing the containers", "error", err)
			}
		}()
		handler = withContainersAPI(handler, api)
	}
	srv := newHTTPServer(handler, cfg, bound.Limits().MaxTimeout, logger)
	logger.Info("serving contract v1", "addr", ln.Addr().String(), "adapter", bound.Adapter, "node", cfg.NodeID, "auth", acc.authenticated(),
		"tenants", len(acc.tenants), "hosts", hostCheckSummary(acc.hosts, acc.authenticated()), "containers_api", cfg.ContainersAPI)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "codeport serve: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		logger.Warn("shutdown", "error", err)
	}
	<-errc
	return 0
}

func execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var code string
	var codeSet bool
	b := newBinder(nil)
	cfg, fs, rc := command(b, "exec", "exec [flags] (-c CODE | FILE | -)", "", args, stderr, func(fs *flag.FlagSet) {
		fs.Func("c", "the Python code to run", func(v string) error { code, codeSet = v, true; return nil })
	})
	if rc >= 0 {
		return rc
	}
	for _, w := range envWarnings(b) {
		fmt.Fprintf(stderr, "codeport exec: warning: %s\n", w)
	}
	if codeSet && fs.NArg() > 0 || !codeSet && fs.NArg() != 1 {
		if codeSet {
			fmt.Fprintln(stderr, "codeport exec: give either -c CODE or a file, not both")
		} else {
			fs.Usage()
		}
		return 2
	}

	noWarmUp(&cfg) // one session, started right away: a pool would only cost
	restoreGC := pauseGC()
	bound, err := b.Open(cfg, binding.Options{Logger: newLogger(io.Discard, "error", "text"), CodeExecutionOnly: true})
	if err != nil {
		fmt.Fprintf(stderr, "codeport exec: %v\n", err)
		return 1
	}
	defer bound.Close()
	if ws, ok := cfg.Settings("wasm").(*wasm.Settings); ok && bound.Adapter != "http" && isTerminal(stderr) {
		reportStartup(ctx, bound, ws.CompilationCacheDir, stderr)
	}
	if !codeSet {
		var b []byte
		var err error
		if fs.Arg(0) == "-" {
			// One byte over the source limit is enough to be refused.
			limit := bound.Limits().SourceBytes
			if limit <= 0 {
				limit = 64 << 20
			}
			b, err = io.ReadAll(io.LimitReader(stdin, limit+1))
		} else {
			b, err = os.ReadFile(fs.Arg(0))
		}
		if err != nil {
			fmt.Fprintf(stderr, "codeport exec: %v\n", err)
			return 2
		}
		code = string(b)
	}
	sess, err := bound.CreateSession(ctx, port.CreateSessionRequest{})
	restoreGC()
	if err != nil {
		fmt.Fprintf(stderr, "codeport exec: %v\n", err)
		return 1
	}
	defer bound.DestroySession(context.WithoutCancel(ctx), sess.ID)
	res, err := bound.Execute(ctx, sess.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code})
	if err != nil {
		fmt.Fprintf(stderr, "codeport exec: %v\n", err)
		return 1
	}
	_, _ = io.WriteString(stdout, res.Stdout)
	_, _ = io.WriteString(stderr, res.Stderr)
	// Like a POSIX process, only the low 8 bits of the status survive.
	return res.ReturnCode & 0xff
}

// pauseGC turns the garbage collector off until the returned function
// is called, unless GOGC says otherwise. Starting the runtime allocates
// some 60 MiB, most of it garbage by the first result (the module's
// decoding, the image's loading); collecting it on the way is about a
// tenth of a `codeport exec`'s CPU time, for a few MiB more at the peak.
func pauseGC() (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	prev := debug.SetGCPercent(-1)
	return func() { debug.SetGCPercent(prev) }
}

func describe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	b := newBinder(nil)
	cfg, rc := commandNoArgs(b, "describe", "describe [flags]", "", args, stderr, nil)
	if rc >= 0 {
		return rc
	}
	noWarmUp(&cfg) // no session is started
	bound, err := b.Open(cfg, binding.Options{Logger: newLogger(io.Discard, "error", "text"), CodeExecutionOnly: true})
	if err != nil {
		fmt.Fprintf(stderr, "codeport describe: %v\n", err)
		return 1
	}
	defer bound.Close()
	caps, err := bound.Describe(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "codeport describe: %v\n", err)
		return 1
	}
	// The wire shape, with the bound adapter's name added in front.
	wire, err := json.Marshal(contract.CapabilitiesFromPort(caps))
	if err != nil {
		fmt.Fprintf(stderr, "codeport describe: %v\n", err)
		return 1
	}
	var out map[string]any
	if err := json.Unmarshal(wire, &out); err != nil {
		fmt.Fprintf(stderr, "codeport describe: %v\n", err)
		return 1
	}
	out["adapter"] = bound.Adapter
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(stderr, "codeport describe: %v\n", err)
		return 1
	}
	return 0
}
