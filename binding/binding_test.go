package binding_test

import (
	"context"
	"flag"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/adapters/subprocess"
	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/binding"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/server"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// binder registers every adapter, as the codeport binary does.
func binder(t *testing.T, workerCommand ...string) *binding.Binder {
	t.Helper()
	b, err := binding.New(httpadapter.Opener(), wasm.Opener(nil), subprocess.Opener(nil, workerCommand...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wasmSettings(t *testing.T, cfg binding.Config) *wasm.Settings {
	t.Helper()
	s, ok := cfg.Settings("wasm").(*wasm.Settings)
	if !ok {
		t.Fatalf("wasm settings: %T", cfg.Settings("wasm"))
	}
	return s
}

func TestLoadPrecedence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "codeport.yaml")
	yaml := "timeout: 45s\nmemory_limit: 128MiB\nmax_sessions: 3\nlisten: 127.0.0.1:9000\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	b := binder(t)
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fv := b.Flags(fs)
	if err := fs.Parse([]string{"--config", file, "--max-sessions", "5"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := b.Load(fv, env(map[string]string{"CODEPORT_MEMORY_LIMIT": "512MiB", "CODEPORT_MAX_SESSIONS": "4", "CODEPORT_WARM_MODULES": "json, email.message"}))
	if err != nil {
		t.Fatal(err)
	}
	ws := wasmSettings(t, cfg)
	if strings.Join(ws.WarmModules, " ") != "json email.message" {
		t.Fatalf("warm modules %q", ws.WarmModules)
	}
	// Defaults < file < environment < flags.
	if ws.Timeout != 45*time.Second || ws.MemoryLimit != 512<<20 || ws.MaxSessions != 5 || cfg.Listen != "127.0.0.1:9000" || ws.OutputLimit != 1<<20 {
		t.Fatalf("%+v %+v", cfg, ws)
	}
	// A setting adapters share is one setting: the timeout reaches the
	// subprocess adapter's runtime and the remote adapter's wall clock.
	ss := cfg.Settings("subprocess").(*subprocess.Settings)
	hs := cfg.Settings("http").(*httpadapter.Settings)
	if ss.Timeout != 45*time.Second || ss.MaxSessions != 5 || hs.Timeout != 45*time.Second {
		t.Fatalf("shared settings: subprocess %+v, http %+v", ss, hs)
	}
	if cfg.ConfigFile != file {
		t.Fatalf("config file %q", cfg.ConfigFile)
	}
}

func TestLoadRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"unknown yaml key", map[string]string{"CODEPORT_CONFIG": write("a.yaml", "memroy_limit: 1MiB\n")}, `unknown key "memroy_limit"`},
		{"yaml not a map", map[string]string{"CODEPORT_CONFIG": write("b.yaml", "- 1\n- 2\n")}, "config file"},
		{"yaml number past int64", map[string]string{"CODEPORT_CONFIG": write("c.yaml", "max_sessions: 18446744073709551615\n")}, `key "max_sessions": want a whole number, got "18446744073709551615"`},
		{"missing file", map[string]string{"CODEPORT_CONFIG": filepath.Join(dir, "absent.yaml")}, "config file"},
		{"bad size", map[string]string{"CODEPORT_MEMORY_LIMIT": "a lot"}, "CODEPORT_MEMORY_LIMIT"},
		{"negative size", map[string]string{"CODEPORT_FILE_LIMIT": "-1"}, "file-limit"},
		{"bad duration", map[string]string{"CODEPORT_TIMEOUT": "soon"}, "CODEPORT_TIMEOUT"},
		{"seconds not a number", map[string]string{"CODEPORT_HIBERNATE_AFTER": "NaN"}, "CODEPORT_HIBERNATE_AFTER"},
		{"seconds below a nanosecond", map[string]string{"CODEPORT_HIBERNATE_AFTER": "1e-10"}, "CODEPORT_HIBERNATE_AFTER"},
		{"timeout above max", map[string]string{"CODEPORT_TIMEOUT": "10m", "CODEPORT_MAX_TIMEOUT": "1m"}, "max-timeout"},
		{"negative sessions", map[string]string{"CODEPORT_MAX_SESSIONS": "-1"}, "max-sessions"},
		{"not a number", map[string]string{"CODEPORT_MAX_SESSIONS": "many"}, "CODEPORT_MAX_SESSIONS"},
		{"log level", map[string]string{"CODEPORT_LOG_LEVEL": "loud"}, "log-level"},
		{"log format", map[string]string{"CODEPORT_LOG_FORMAT": "xml"}, `log-format "xml": want text or json`},
		{"isolation", map[string]string{"CODEPORT_ISOLATION": "vm"}, `isolation "vm"`},
		{"zero sessions per worker", map[string]string{"CODEPORT_ISOLATION": "process", "CODEPORT_SESSIONS_PER_WORKER": "0"}, "sessions-per-worker"},
		{"more idle workers than sessions", map[string]string{"CODEPORT_ISOLATION": "process", "CODEPORT_MIN_WORKERS": "5", "CODEPORT_MAX_SESSIONS": "4"}, "min-workers"},
		{"more sessions per worker than sessions", map[string]string{"CODEPORT_ISOLATION": "process", "CODEPORT_MIN_WORKERS": "0", "CODEPORT_SESSIONS_PER_WORKER": "2", "CODEPORT_MAX_SESSIONS": "1"}, "sessions-per-worker (2) must be at most max-sessions (1)"},
		{"idle workers overflowing", map[string]string{"CODEPORT_ISOLATION": "process", "CODEPORT_MIN_WORKERS": "4611686018427387904", "CODEPORT_SESSIONS_PER_WORKER": "4", "CODEPORT_MAX_SESSIONS": "5"}, "min-workers"},
		{"sessions per worker overflowing its memory", map[string]string{"CODEPORT_ISOLATION": "process", "CODEPORT_SESSIONS_PER_WORKER": "1099511627776"}, "sessions-per-worker (1099511627776) is too large"},
		{"idle workers overflowing the sessions", map[string]string{"CODEPORT_ISOLATION": "process", "CODEPORT_MIN_WORKERS": "4294967296", "CODEPORT_SESSIONS_PER_WORKER": "4294967296"}, "min-workers times sessions-per-worker overflows"},
		{"workers retired before they are full", map[string]string{"CODEPORT_ISOLATION": "process", "CODEPORT_SESSIONS_PER_WORKER": "4", "CODEPORT_RECYCLE_AFTER": "2"}, "recycle-after (2) must be 0 or at least sessions-per-worker (4)"},
		{"bad worker memory", map[string]string{"CODEPORT_WORKER_MEMORY_LIMIT": "lots"}, "CODEPORT_WORKER_MEMORY_LIMIT"},
		{"bad sandbox url", map[string]string{"CODEPORT_SANDBOX_URL": "ftp://x"}, "http or https"},
		{"bad warm module", map[string]string{"CODEPORT_WARM_MODULES": "json,os;rm"}, "CODEPORT_WARM_MODULES"},
		{"negative refill", map[string]string{"CODEPORT_WARM_POOL_REFILL": "-1"}, "warm-pool-refill"},
		{"node id not a DNS label", map[string]string{"CODEPORT_NODE_ID": "Node_1"}, "node-id"},
		{"node id with a dot", map[string]string{"CODEPORT_NODE_ID": "a.b"}, "node-id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := binder(t).Load(nil, env(c.env))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, c.want)
			}
		})
	}
}

// TestLogFormat: log-format is text unless a source says json, and comes
// from the environment and the YAML file like every setting.
func TestLogFormat(t *testing.T) {
	b := binder(t)
	cfg, err := b.Load(nil, env(nil))
	if err != nil || cfg.LogFormat != "text" {
		t.Fatalf("default: %q %v", cfg.LogFormat, err)
	}
	cfg, err = b.Load(nil, env(map[string]string{"CODEPORT_LOG_FORMAT": "json"}))
	if err != nil || cfg.LogFormat != "json" {
		t.Fatalf("from the environment: %q %v", cfg.LogFormat, err)
	}
	file := filepath.Join(t.TempDir(), "codeport.yaml")
	if err := os.WriteFile(file, []byte("log_format: json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err = b.Load(nil, env(map[string]string{"CODEPORT_CONFIG": file}))
	if err != nil || cfg.LogFormat != "json" {
		t.Fatalf("from the YAML file: %q %v", cfg.LogFormat, err)
	}
}

// TestFlagsShowTheBoundAdapterDefaults: a setting adapters share shows
// the default of the adapter the defaults bind (the in-process runtime's
// 50MiB file limit, not the remote adapter's 100MiB), and names the
// other; a program with the remote adapter alone shows its own.
func TestFlagsShowTheBoundAdapterDefaults(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	binder(t).Flags(fs)
	f := fs.Lookup("file-limit")
	if f.DefValue != "50MiB" || !strings.Contains(f.Usage, "largest uploaded file") || !strings.Contains(f.Usage, "the http adapter's default: 100MiB") {
		t.Errorf("file-limit: default %q, usage %q", f.DefValue, f.Usage)
	}
	if f := fs.Lookup("timeout"); strings.Contains(f.Usage, "adapter's default") {
		t.Errorf("timeout, the same default everywhere, names another: %q", f.Usage)
	}
	remote, err := binding.New(httpadapter.Opener())
	if err != nil {
		t.Fatal(err)
	}
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	remote.Flags(fs)
	if f := fs.Lookup("file-limit"); f.DefValue != "100MiB" || strings.Contains(f.Usage, "adapter's default") {
		t.Errorf("remote only: file-limit: default %q, usage %q", f.DefValue, f.Usage)
	}
}

// TestRemoteOnlyProgramSaysItHasNoIsolation: a program built with the
// remote adapter alone and configured with no sandbox URL says that it
// offers no isolation and what binds its adapter, not "want one of "
// followed by nothing.
func TestRemoteOnlyProgramSaysItHasNoIsolation(t *testing.T) {
	b, err := binding.New(httpadapter.Opener())
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Load(nil, env(nil))
	if err == nil || !strings.Contains(err.Error(), `isolation "in-process": this program offers no isolation; its adapters (http) are bound only when a setting of theirs asks for them, such as a sandbox URL`) {
		t.Fatalf("got %v", err)
	}
	if strings.Contains(err.Error(), "want one of") {
		t.Errorf("the error offers a choice of nothing: %v", err)
	}
	if _, err := b.Load(nil, env(map[string]string{"CODEPORT_ISOLATION": "process"})); err == nil || !strings.Contains(err.Error(), "offers no isolation") {
		t.Errorf("isolation process: %v", err)
	}
}

func TestPurposeHintTellsTheTruth(t *testing.T) {
	stdlib := binding.PurposeHint(port.Capabilities{Runtime: "CPython", RuntimeVersion: "3.12.0", UnavailableModules: []string{"ssl"},
		Limitations: []string{"Threads cannot be started"}, WorkingDirectory: "/workspace",
		Limits: port.Limits{DefaultTimeout: 30 * time.Second, MemoryBytes: 256 << 20}})
	for _, want := range []string{"CPython 3.12.0", "Print", "standard library", "no third-party packages", "ssl", "Threads cannot be started.", "no network", "/workspace", "30s", "256MiB"} {
		if !strings.Contains(stdlib, want) {
			t.Errorf("hint lacks %q: %s", want, stdlib)
		}
	}
	partial := binding.PurposeHint(port.Capabilities{Runtime: "Python", Partial: true})
	if strings.Contains(partial, "Only the Python standard library") || strings.Contains(partial, "There is no network") || !strings.Contains(partial, "unknown") {
		t.Errorf("a partial description must neither promise nor deny packages or network: %s", partial)
	}
	sci := binding.PurposeHint(port.Capabilities{Runtime: "CPython", Packages: []port.Package{{Name: "numpy", Version: "2.1.0"}}, Network: true})
	if !strings.Contains(sci, "numpy 2.1.0") || strings.Contains(sci, "no third-party") || strings.Contains(sci, "no network") {
		t.Errorf("hint for a backend with packages and network: %s", sci)
	}
}

func TestOpenBindsTheInProcessRuntime(t *testing.T) {
	bd := binder(t)
	cfg := bd.Defaults()
	ws := wasmSettings(t, cfg)
	ws.SessionsDir = t.TempDir()
	ws.MemoryLimit = 128 << 20
	b, err := bd.Open(cfg, binding.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Adapter != "wasm" {
		t.Fatalf("adapter %q", b.Adapter)
	}
	caps, err := b.Describe(context.Background())
	if err != nil || caps.Limits.MemoryBytes != 128<<20 || caps.PurposeHint == "" {
		t.Fatalf("%v %+v", err, caps)
	}
	// The first session waits for the runtime, for minutes on a loaded
	// machine: no deadline but the test binary's.
	ctx, cancel := testwait.Context(t)
	defer cancel()
	s, err := b.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print('bound')"})
	if err != nil || res.Stdout != "bound\n" || !b.Ready() {
		t.Fatalf("%v %+v", err, res)
	}
}

func TestASandboxURLBindsTheHTTPAdapter(t *testing.T) {
	bd := binder(t)
	inner := bd.Defaults()
	wasmSettings(t, inner).SessionsDir = t.TempDir()
	backend, err := bd.Open(inner, binding.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer backend.Close()
	srv := httptest.NewServer(server.NewHandler(backend, server.WithBearerToken("tok")))
	defer srv.Close()

	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fv := bd.Flags(fs)
	if err := fs.Parse([]string{"--sandbox-url", srv.URL}); err != nil {
		t.Fatal(err)
	}
	cfg, err := bd.Load(fv, env(map[string]string{"CODEPORT_SANDBOX_TOKEN": "tok"}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := bd.Open(cfg, binding.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Adapter != "http" || !b.Ready() {
		t.Fatalf("adapter %q", b.Adapter)
	}
	// The first session waits for the runtime, for minutes on a loaded
	// machine: no deadline but the test binary's.
	ctx, cancel := testwait.Context(t)
	defer cancel()
	s, err := b.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print('through http')"})
	if err != nil || res.Stdout != "through http\n" {
		t.Fatalf("%v %+v", err, res)
	}
	caps, err := b.Describe(ctx)
	if err != nil || caps.Backend != "http" || caps.PurposeHint == "" {
		t.Fatalf("%v %+v", err, caps)
	}
}

func TestIsolationProcessBindsTheSubprocessAdapter(t *testing.T) {
	bin, err := wasmtest.BuildWorker(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "codeport.yaml")
	if err := os.WriteFile(file, []byte("isolation: process\nmin_workers: 1\nmax_sessions: 3\nworker_memory_limit: 900MiB\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bd := binder(t, bin, "worker")
	cfg, err := bd.Load(nil, env(map[string]string{"CODEPORT_CONFIG": file}))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Settings("subprocess").(*subprocess.Settings).SessionsDir = t.TempDir()
	b, err := bd.Open(cfg, binding.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// The first session waits for the runtime, for minutes on a loaded
	// machine: no deadline but the test binary's.
	ctx, cancel := testwait.Context(t)
	defer cancel()
	caps, err := b.Describe(ctx)
	if err != nil || b.Adapter != "subprocess" || caps.Backend != "subprocess" || caps.Limits.MaxSessions != 3 ||
		!strings.Contains(caps.PurposeHint, "worker process of its own") {
		t.Fatalf("%v %s %+v", err, b.Adapter, caps)
	}
	s, err := b.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "import os; print(os.environ.get('CODEPORT_CONFIG'))"})
	if err != nil || res.Stdout != "None\n" {
		t.Fatalf("%v %+v", err, res)
	}
}
