// Command codeport serves, runs and checks the code-execution port.
//
//	codeport serve    [flags]                 serve contract v1 over HTTP
//	codeport exec     [flags] -c CODE | FILE | -   run Python once and exit with its status
//	codeport describe [flags]                 print the bound backend's capability description
//	codeport conformance --base-url URL       check a running contract v1 backend
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
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/codeport/codeport/adapters/subprocess"
	"github.com/codeport/codeport/binding"
	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/port"
)

const usage = `codeport runs model-written Python in a sandbox.

Usage:
  codeport serve    [flags]                     serve contract v1 over HTTP
  codeport exec     [flags] (-c CODE | FILE | -)  run Python once; exit with its status
  codeport describe [flags]                     print the capability description as JSON
  codeport conformance --base-url URL [--auth-token T]
                                                check a running contract v1 backend

Run "codeport COMMAND -h" for the flags of a command.
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
	case "conformance":
		return conformanceCommand(ctx, args[1:], stdout, stderr)
	case "worker":
		// Hidden: the subprocess adapter runs this binary as its workers.
		if err := subprocess.ServeWorker(); err != nil {
			fmt.Fprintf(stderr, "codeport worker: %v\n", err)
			return 1
		}
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "codeport: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}

// command parses a subcommand's flags and loads the configuration.
func command(name, synopsis string, args []string, stderr io.Writer, extra func(*flag.FlagSet)) (binding.Config, *flag.FlagSet, int) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: codeport %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	if extra != nil {
		extra(fs)
	}
	fv := binding.Flags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return binding.Config{}, nil, 0
		}
		return binding.Config{}, nil, 2
	}
	cfg, err := binding.Load(fv, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "codeport %s: %v\n", name, err)
		return binding.Config{}, nil, 2
	}
	return cfg, fs, -1
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

func serve(ctx context.Context, args []string, stderr io.Writer) int {
	cfg, fs, code := command("serve", "serve [flags]", args, stderr, nil)
	if code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "codeport serve: unexpected arguments %q\n", fs.Args())
		return 2
	}
	logger := newLogger(stderr, cfg.LogLevel)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	bound, err := binding.Open(cfg, binding.Options{Logger: logger, Registry: reg})
	if err != nil {
		fmt.Fprintf(stderr, "codeport serve: %v\n", err)
		return 1
	}
	defer bound.Close()

	opts := []contract.Option{
		contract.WithReady(bound.Ready),
		contract.WithGatherer(reg),
		contract.WithLogger(logger),
		// The port enforces the file limit exactly; the body may be a
		// little larger for the multipart framing and the path field.
		contract.WithMaxUploadBytes(cfg.FileLimit + 64<<10),
	}
	if cfg.AuthToken != "" {
		opts = append(opts, contract.WithBearerToken(cfg.AuthToken))
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		fmt.Fprintf(stderr, "codeport serve: %v\n", err)
		return 1
	}
	srv := &http.Server{
		Handler:           contract.NewHandler(bound, opts...),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	logger.Info("serving contract v1", "addr", ln.Addr().String(), "adapter", bound.Adapter, "auth", cfg.AuthToken != "")
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
	cfg, fs, rc := command("exec", "exec [flags] (-c CODE | FILE | -)", args, stderr, func(fs *flag.FlagSet) {
		fs.Func("c", "the Python code to run", func(v string) error { code, codeSet = v, true; return nil })
	})
	if rc >= 0 {
		return rc
	}
	switch {
	case codeSet && fs.NArg() > 0:
		fmt.Fprintln(stderr, "codeport exec: give either -c CODE or a file, not both")
		return 2
	case codeSet:
	case fs.NArg() == 1:
		var b []byte
		var err error
		if fs.Arg(0) == "-" {
			b, err = io.ReadAll(io.LimitReader(stdin, cfg.SourceLimit+1))
		} else {
			b, err = os.ReadFile(fs.Arg(0))
		}
		if err != nil {
			fmt.Fprintf(stderr, "codeport exec: %v\n", err)
			return 2
		}
		code = string(b)
	default:
		fs.Usage()
		return 2
	}

	cfg.WarmPool = 0 // one session, started right away: a pool would only cost
	cfg.MinWorkers = 0
	bound, err := binding.Open(cfg, binding.Options{Logger: newLogger(io.Discard, "error")})
	if err != nil {
		fmt.Fprintf(stderr, "codeport exec: %v\n", err)
		return 1
	}
	defer bound.Close()
	sess, err := bound.CreateSession(ctx, port.CreateSessionRequest{})
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

func describe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, fs, rc := command("describe", "describe [flags]", args, stderr, nil)
	if rc >= 0 {
		return rc
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "codeport describe: unexpected arguments %q\n", fs.Args())
		return 2
	}
	cfg.WarmPool = 0 // no session is started
	cfg.MinWorkers = 0
	bound, err := binding.Open(cfg, binding.Options{Logger: newLogger(io.Discard, "error")})
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
	b, err := json.Marshal(contract.CapabilitiesFromPort(caps))
	if err != nil {
		fmt.Fprintf(stderr, "codeport describe: %v\n", err)
		return 1
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
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
