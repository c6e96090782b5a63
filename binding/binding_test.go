package binding

import (
	"context"
	"flag"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/internal/wasmtest"
	"github.com/codeport/codeport/port"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadPrecedence(t *testing.T) {
	file := filepath.Join(t.TempDir(), "codeport.yaml")
	yaml := "timeout: 45s\nmemory_limit: 128MiB\nmax_sessions: 3\nlisten: 127.0.0.1:9000\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fv := Flags(fs)
	if err := fs.Parse([]string{"--config", file, "--max-sessions", "5"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(fv, env(map[string]string{"CODEPORT_MEMORY_LIMIT": "512MiB", "CODEPORT_MAX_SESSIONS": "4", "CODEPORT_WARM_MODULES": "json, email.message"}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.WarmModules, " ") != "json email.message" {
		t.Fatalf("warm modules %q", cfg.WarmModules)
	}
	// Defaults < file < environment < flags.
	if cfg.Timeout != 45*time.Second || cfg.MemoryLimit != 512<<20 || cfg.MaxSessions != 5 || cfg.Listen != "127.0.0.1:9000" || cfg.OutputLimit != 1<<20 {
		t.Fatalf("%+v", cfg)
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
		{"missing file", map[string]string{"CODEPORT_CONFIG": filepath.Join(dir, "absent.yaml")}, "config file"},
		{"bad size", map[string]string{"CODEPORT_MEMORY_LIMIT": "a lot"}, "CODEPORT_MEMORY_LIMIT"},
		{"negative size", map[string]string{"CODEPORT_FILE_LIMIT": "-1"}, "CODEPORT_FILE_LIMIT"},
		{"bad duration", map[string]string{"CODEPORT_TIMEOUT": "soon"}, "CODEPORT_TIMEOUT"},
		{"timeout above max", map[string]string{"CODEPORT_TIMEOUT": "10m", "CODEPORT_MAX_TIMEOUT": "1m"}, "max-timeout"},
		{"zero sessions", map[string]string{"CODEPORT_MAX_SESSIONS": "0"}, "CODEPORT_MAX_SESSIONS"},
		{"log level", map[string]string{"CODEPORT_LOG_LEVEL": "loud"}, "log-level"},
		{"isolation", map[string]string{"CODEPORT_ISOLATION": "vm"}, `isolation "vm"`},
		{"zero sessions per worker", map[string]string{"CODEPORT_SESSIONS_PER_WORKER": "0"}, "CODEPORT_SESSIONS_PER_WORKER"},
		{"more idle workers than sessions", map[string]string{"CODEPORT_ISOLATION": "process", "CODEPORT_MIN_WORKERS": "5", "CODEPORT_MAX_SESSIONS": "4"}, "min-workers"},
		{"bad worker memory", map[string]string{"CODEPORT_WORKER_MEMORY_LIMIT": "-5"}, "CODEPORT_WORKER_MEMORY_LIMIT"},
		{"bad warm module", map[string]string{"CODEPORT_WARM_MODULES": "json,os;rm"}, "CODEPORT_WARM_MODULES"},
		{"negative refill", map[string]string{"CODEPORT_WARM_POOL_REFILL": "-1"}, "CODEPORT_WARM_POOL_REFILL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(nil, env(c.env))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, c.want)
			}
		})
	}
}

func TestPurposeHintTellsTheTruth(t *testing.T) {
	stdlib := PurposeHint(port.Capabilities{Runtime: "CPython", RuntimeVersion: "3.12.0", UnavailableModules: []string{"ssl"},
		Limitations: []string{"Threads cannot be started"}, WorkingDirectory: "/workspace",
		Limits: port.Limits{DefaultTimeout: 30 * time.Second, MemoryBytes: 256 << 20}})
	for _, want := range []string{"CPython 3.12.0", "Print", "standard library", "no third-party packages", "ssl", "Threads cannot be started.", "no network", "/workspace", "30s", "256MiB"} {
		if !strings.Contains(stdlib, want) {
			t.Errorf("hint lacks %q: %s", want, stdlib)
		}
	}
	partial := PurposeHint(port.Capabilities{Runtime: "Python", Partial: true})
	if strings.Contains(partial, "Only the Python standard library") || strings.Contains(partial, "There is no network") || !strings.Contains(partial, "unknown") {
		t.Errorf("a partial description must neither promise nor deny packages or network: %s", partial)
	}
	sci := PurposeHint(port.Capabilities{Runtime: "CPython", Packages: []port.Package{{Name: "numpy", Version: "2.1.0"}}, Network: true})
	if !strings.Contains(sci, "numpy 2.1.0") || strings.Contains(sci, "no third-party") || strings.Contains(sci, "no network") {
		t.Errorf("hint for a backend with packages and network: %s", sci)
	}
}

func TestOpenBindsTheInProcessRuntime(t *testing.T) {
	cfg := Defaults()
	cfg.SessionsDir = t.TempDir()
	cfg.MemoryLimit = 128 << 20
	b, err := Open(cfg, Options{})
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
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
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
	inner := Defaults()
	inner.SessionsDir = t.TempDir()
	backend, err := Open(inner, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer backend.Close()
	srv := httptest.NewServer(contract.NewHandler(backend, contract.WithBearerToken("tok")))
	defer srv.Close()

	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fv := Flags(fs)
	if err := fs.Parse([]string{"--sandbox-url", srv.URL}); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(fv, env(map[string]string{"CODEPORT_SANDBOX_TOKEN": "tok"}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Adapter != "http" || !b.Ready() {
		t.Fatalf("adapter %q", b.Adapter)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
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
	cfg, err := Load(nil, env(map[string]string{"CODEPORT_CONFIG": file}))
	if err != nil {
		t.Fatal(err)
	}
	cfg.SessionsDir = t.TempDir()
	b, err := Open(cfg, Options{WorkerCommand: []string{bin, "worker"}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
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
