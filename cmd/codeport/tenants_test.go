package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codeport/codeport/port"
)

// Keys of the tenants of these tests.
const (
	acmeKey   = "acme-key-0123456789abcdefghijklm"
	globexKey = "globex-key-0123456789abcdefghijk"
	opToken   = "operator-token-0123456789abcdefg"
)

func sha256Hex(s string) string {
	d := sha256.Sum256([]byte(s))
	return hex.EncodeToString(d[:])
}

// tenantConfig writes a YAML file with two tenants: acme's key in a file
// beside it (a relative path), globex's by its digest; and the operator's
// token and the snapshot key in files.
func tenantConfig(t *testing.T) (yamlFile, tokenFile, snapKey string) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"acme.key": acmeKey + "\n",
		"token":    opToken + "\n",
		"snap.key": "dGVuYW50IHRlc3Qgc25hcHNob3Qga2V5LCAzMiBieXRlcyBvciBtb3Jl\n",
		"codeport.yaml": `tenants:
  - name: acme
    keys: [{file: acme.key}]
    max_sessions: 2
  - name: globex
    keys:
      - sha256: ` + sha256Hex(globexKey) + `
    executions_per_second: 0.001
    burst: 1
`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "codeport.yaml"), filepath.Join(dir, "token"), filepath.Join(dir, "snap.key")
}

// `codeport serve` with tenants over the real runtime, across a restart
// with --hibernate-dir: each tenant reaches only its own sessions, before
// and after; the limits answer 429, which adapters/http turns back into
// port.ErrRateLimited with the hint; the auth-token still works, as a
// tenant of its own; snapshots are bound to the tenant.
func TestServeTenantsAcrossARestart(t *testing.T) {
	ctx := context.Background()
	yamlFile, tokenFile, snapKey := tenantConfig(t)
	hib := t.TempDir()
	args := []string{"--config", yamlFile, "--auth-token-file", tokenFile, "--hibernate-dir", hib, "--snapshot-key-file", snapKey}
	srv := startServe(t, args...)
	acme, globex, op := client(t, srv.base, acmeKey), client(t, srv.base, globexKey), client(t, srv.base, opToken)
	run := func(p *port.Port, id, code string) (port.Result, error) {
		return p.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code})
	}

	a, err := acme.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := run(acme, a.ID, "x = 41\nprint('set')"); err != nil || res.Stdout != "set\n" {
		t.Fatalf("acme's setup: %v %+v", err, res)
	}
	g, err := globex.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := run(globex, g.ID, "y = 'globex'"); err != nil || res.Outcome != port.OutcomeCompleted {
		t.Fatalf("globex's setup: %v %+v", err, res)
	}
	// globex's bucket (1, refilled every 1000 s) is empty now, and the
	// hint is the time to its refill. (Refilled every 2 s, it could be
	// full again after a setup call slowed by a loaded machine.)
	_, err = run(globex, g.ID, "print(y)")
	var ce *port.CapacityError
	if !errors.Is(err, port.ErrRateLimited) || !errors.As(err, &ce) || ce.RetryAfter < 900*time.Second || ce.RetryAfter > 1000*time.Second {
		t.Fatalf("globex over its rate: %v (%#v)", err, ce)
	}
	// Nobody else reaches acme's session, and cannot tell it exists.
	for name, p := range map[string]*port.Port{"globex": globex, "the operator": op} {
		if _, err := run(p, a.ID, "print(x)"); !errors.Is(err, port.ErrSessionNotFound) {
			t.Errorf("%s on acme's session: %v", name, err)
		}
		if _, _, err := p.GetFile(ctx, a.ID, "x.txt"); !errors.Is(err, port.ErrSessionNotFound) {
			t.Errorf("%s reads acme's file: %v", name, err)
		}
	}
	// acme's second session is its last.
	a2, err := acme.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acme.CreateSession(ctx, port.CreateSessionRequest{}); !errors.Is(err, port.ErrRateLimited) {
		t.Fatalf("acme's third session: %v", err)
	}
	if err := acme.DestroySession(ctx, a2.ID); err != nil {
		t.Fatal(err)
	}
	// Snapshots: acme's restores for acme alone.
	var snap bytes.Buffer
	if err := acme.SnapshotSession(ctx, a.ID, &snap, port.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := op.RestoreSession(ctx, bytes.NewReader(snap.Bytes()), port.SnapshotOptions{}); !errors.Is(err, port.ErrInvalidSnapshot) {
		t.Errorf("the operator restores acme's snapshot: %v", err)
	}
	// A restore counts as an execution: globex's bucket is empty.
	if _, err := globex.RestoreSession(ctx, bytes.NewReader(snap.Bytes()), port.SnapshotOptions{}); !errors.Is(err, port.ErrRateLimited) {
		t.Errorf("globex restores with its rate spent: %v", err)
	}
	restored, err := acme.RestoreSession(ctx, bytes.NewReader(snap.Bytes()), port.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := run(acme, restored.ID, "print(x)"); err != nil || res.Stdout != "41\n" {
		t.Fatalf("acme's restored session: %v %+v", err, res)
	}
	if err := acme.DestroySession(ctx, restored.ID); err != nil {
		t.Fatal(err)
	}
	// The operator's token works as before, without limits.
	o, err := op.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := run(op, o.ID, "z = 1"); err != nil {
			t.Fatal(err)
		}
	}
	metrics := get(t, srv.base+"/metrics", opToken)
	for _, want := range []string{
		`codeport_tenant_sessions{tenant="acme"} 1`,
		`codeport_tenant_limit_refusals_total{limit="executions",tenant="globex"} 2`,
		`codeport_tenant_limit_refusals_total{limit="sessions",tenant="acme"} 1`,
		`codeport_tenant_executions_total{outcome="completed",tenant="auth-token"} 3`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if code := srv.stop(); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, srv.log.String())
	}
	if log := srv.log.String(); strings.Contains(log, acmeKey) || strings.Contains(log, globexKey) || strings.Contains(log, opToken) {
		t.Fatalf("a key in the log:\n%s", log)
	}

	// The restart: sessions and their owners come back together.
	srv = startServe(t, args...)
	acme, globex, op = client(t, srv.base, acmeKey), client(t, srv.base, globexKey), client(t, srv.base, opToken)
	if res, err := run(acme, a.ID, "print(x + 1)"); err != nil || res.Stdout != "42\n" || res.StateLost {
		t.Fatalf("acme's session after the restart: %v %+v", err, res)
	}
	if res, err := run(op, o.ID, "print(z)"); err != nil || res.Stdout != "1\n" {
		t.Fatalf("the operator's session after the restart: %v %+v", err, res)
	}
	for name, p := range map[string]*port.Port{"globex": globex, "the operator": op} {
		if _, err := run(p, a.ID, "print(x)"); !errors.Is(err, port.ErrSessionNotFound) {
			t.Errorf("%s on acme's session after the restart: %v", name, err)
		}
	}
	if _, err := run(acme, g.ID, "print(y)"); !errors.Is(err, port.ErrSessionNotFound) {
		t.Errorf("acme on globex's session after the restart: %v", err)
	}
	// A fresh process starts globex's bucket full.
	if res, err := run(globex, g.ID, "print(y)"); err != nil || res.Stdout != "globex\n" {
		t.Fatalf("globex's session after the restart: %v %+v", err, res)
	}
	// acme still holds one session of its two.
	if _, err := acme.CreateSession(ctx, port.CreateSessionRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := acme.CreateSession(ctx, port.CreateSessionRequest{}); !errors.Is(err, port.ErrRateLimited) {
		t.Fatalf("acme's limit after the restart: %v", err)
	}
	srv.stop()

	// With the tenants section removed, the server is back to one
	// credential, which reaches every session, as before tenants.
	srv = startServe(t, "--auth-token-file", tokenFile, "--hibernate-dir", hib)
	if res, err := run(client(t, srv.base, opToken), a.ID, "print(x)"); err != nil || res.Stdout != "41\n" {
		t.Fatalf("the token alone after tenants: %v %+v", err, res)
	}
}

func get(t *testing.T, url, token string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

// serve stops before binding anything when the tenants section is wrong,
// and says what is wrong without quoting a key.
func TestServeRefusesBadTenants(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	short := write("short.key", "too-short\n", 0o600)
	writable := write("writable.key", acmeKey+"\n", 0o666)
	good := write("good.key", acmeKey+"\n", 0o600)
	tokenFile := write("token", acmeKey+"\n", 0o600)
	tenant := func(name, key string, extra ...string) string {
		return fmt.Sprintf("  - name: %s\n    keys: [{%s}]\n%s", name, key, strings.Join(extra, ""))
	}
	cases := []struct {
		name, yaml string
		args       []string
		want       string
	}{
		{"short key", tenant("a", "file: "+short), nil, "the key is 9 bytes; it must be at least 16"},
		{"writable key file", tenant("a", "file: "+writable), nil, "lets every user replace the secret"},
		{"missing key file", tenant("a", "file: absent.key"), nil, "no such file"},
		{"bad name", tenant("Acme", "file: "+good), nil, "the name must be"},
		{"reserved name", tenant("auth-token", "file: "+good), nil, "reserved"},
		{"twice", tenant("a", "file: "+good) + tenant("a", "sha256: "+sha256Hex(globexKey)), nil, "configured twice"},
		{"shared key", tenant("a", "file: "+good) + tenant("b", "sha256: "+sha256Hex(acmeKey)), nil, "share a key"},
		{"the token is a key", tenant("a", "file: "+good), []string{"--auth-token-file", tokenFile}, "its key is the auth-token"},
		{"burst alone", tenant("a", "file: "+good, "    burst: 2\n"), nil, "burst needs executions_per_second"},
		{"unknown key", tenant("a", "file: "+good, "    max_session: 2\n"), nil, "unknown key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := write(strings.ReplaceAll(c.name, " ", "-")+".yaml", "tenants:\n"+c.yaml, 0o600)
			var out, errb strings.Builder
			args := append([]string{"serve", "--config", cfg, "--listen", "127.0.0.1:0"}, c.args...)
			code := run(context.Background(), args, strings.NewReader(""), &out, &errb)
			if code != 2 || !strings.Contains(errb.String(), c.want) {
				t.Fatalf("exit %d, want 2 and %q: %s", code, c.want, errb.String())
			}
			if strings.Contains(errb.String(), acmeKey) {
				t.Fatalf("the key is quoted: %s", errb.String())
			}
		})
	}
}
