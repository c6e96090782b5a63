package sdkcheck

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/codeport/codeport/internal/testkit/logtest"
	"github.com/codeport/codeport/internal/testkit/testcache"
	"github.com/codeport/codeport/internal/testkit/testwait"
)

// TestOpenAIContainersAPI: the official openai SDK manages containers and
// their files through `codeport serve --containers-api=true`, built and
// run as an operator runs it, with two tenants: every call answers what
// the SDK's types and errors expect, a tenant never reaches the other's
// container, and the limits answer with the error classes chosen for
// them (testdata/containers_api.py). The server's log never holds the
// uploaded file's contents or name.
func TestOpenAIContainersAPI(t *testing.T) {
	python := sdkPython(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to build codeport")
	}
	ctx, cancel := testwait.Context(t)
	defer cancel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "codeport")
	if out, err := exec.CommandContext(ctx, goBin, "build", "-o", bin, "github.com/codeport/codeport/cmd/codeport").CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/codeport: %v\n%s", err, out)
	}

	keys := map[string]string{}
	for _, tenant := range []string{"acme", "globex"} {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		keys[tenant] = base64.RawURLEncoding.EncodeToString(b)
		if err := os.WriteFile(filepath.Join(dir, tenant+".key"), []byte(keys[tenant]+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	config := filepath.Join(dir, "codeport.yaml")
	yaml := `listen: 127.0.0.1:0
containers_api: true
max_containers: 2
file_limit: 64KiB
tenants:
  - name: acme
    keys: [{file: acme.key}]
  - name: globex
    keys: [{file: globex.key}]
`
	if err := os.WriteFile(config, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs logtest.Buffer
	serve := exec.Command(bin, "serve", "--config", config, "--sessions-dir", t.TempDir(), "--compile-cache-dir", testcache.Dir())
	serve.Stdout, serve.Stderr = &logs, &logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() {
		defer close(exited)
		waitErr = serve.Wait()
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = serve.Process.Signal(syscall.SIGTERM)
		wait, cancel := testwait.Context(t)
		defer cancel()
		select {
		case <-exited:
		case <-wait.Done():
			_ = serve.Process.Kill()
			<-exited
			t.Errorf("serve did not stop on SIGTERM; log:\n%s", logs.String())
		}
	}
	defer stop()

	addr := logs.Await(t, regexp.MustCompile(`addr=(\S+)`), exited)
	base := "http://" + addr
	testwait.For(t, "serve to be healthy", func() bool {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})

	const marker = "a-line-only-the-uploaded-file-holds-7f3a"
	out, err := exec.CommandContext(ctx, python, "testdata/containers_api.py", base, keys["acme"], keys["globex"], marker).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Errorf("the openai SDK against the Containers API: %v\n%s\nserve's log:\n%s", err, out, logs.String())
	}

	stop()
	if waitErr != nil {
		t.Errorf("serve ended with %v; log:\n%s", waitErr, logs.String())
	}
	for _, secret := range []string{marker, "data.csv", keys["acme"], keys["globex"]} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("serve's log holds %q:\n%s", secret, logs.String())
		}
	}
}
