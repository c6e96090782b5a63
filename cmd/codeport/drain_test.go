package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/codeport/codeport/port"
)

// Draining node a into node b moves every session of a's, hibernated ones
// included, with its state, under the id its client holds; b answers those
// ids and still refuses other ids of a's; draining b back home into a works
// the same way.
func TestDrainMovesSessionsKeepingTheirIDs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte("ZHJhaW4gdGVzdCBzbmFwc2hvdCBrZXkgb2YgMzIgYnl0ZXMgb3IgbW9yZQ==\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startServe(t, "--node-id", "a", "--snapshot-key-file", keyFile, "--hibernate-dir", t.TempDir(), "--hibernate-after", "1h")
	b := startServe(t, "--node-id", "b", "--snapshot-key-file", keyFile)
	pa, pb := client(t, a.base, ""), client(t, b.base, "")

	var ids []string
	for i := range 3 {
		s, err := pa.CreateSession(ctx, port.CreateSessionRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if node, ok := port.NodeOf(s.ID); !ok || node != "a" {
			t.Fatalf("node a made session id %q", s.ID)
		}
		ids = append(ids, s.ID)
		code := fmt.Sprintf("g = iter(range(10, 100))\nnext(g)\nclass K:\n    tag = %d\nopen('f.txt', 'w').write('file %d')\nprint('ok')", i, i)
		if res, err := pa.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code}); err != nil || res.Stdout != "ok\n" {
			t.Fatalf("setup %d: %v %+v", i, err, res)
		}
	}
	slices.Sort(ids)

	drain := func(from, to served) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run(ctx, []string{"drain", "--from", from.base, "--to", to.base}, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("drain %s -> %s: exit %d\nstdout: %s\nstderr: %s", from.base, to.base, code, out.String(), errb.String())
		}
		return out.String()
	}
	out := drain(a, b)
	if !strings.Contains(out, "moved 3 of 3") || !strings.Contains(out, "point node a at "+b.base) {
		t.Errorf("drain's report: %q", out)
	}
	if got, err := listSessions(ctx, a.base, ""); err != nil || len(got) != 0 {
		t.Errorf("node a after the drain lists %q, %v; want none", got, err)
	}
	if got, err := listSessions(ctx, b.base, ""); err != nil || !slices.Equal(got, ids) {
		t.Errorf("node b after the drain lists %q, %v; want %q", got, err, ids)
	}
	check := func(p *port.Port, where string) {
		t.Helper()
		for i, id := range ids {
			res, err := p.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(next(g), K.tag, open('f.txt').read())"})
			if err != nil || res.StateLost {
				t.Fatalf("session %s on %s: %v %+v", id, where, err, res)
			}
			var n, tag int
			var file string
			if _, err := fmt.Sscanf(res.Stdout, "%d %d file %s", &n, &tag, &file); err != nil || n < 11 || fmt.Sprint(tag) != file {
				t.Errorf("session %d (%s) on %s printed %q", i, id, where, res.Stdout)
			}
		}
	}
	check(pb, "node b")
	// Node a no longer has them, and says so as for any id it does not hold.
	if _, err := pa.Execute(ctx, ids[0], port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "1"}); !errors.Is(err, port.ErrSessionNotFound) {
		t.Errorf("a moved session on its old node: %v, want ErrSessionNotFound", err)
	}
	// Node b answers the moved ids of a's, and no others.
	stranger := "a." + uuid.NewString()
	_, err := pb.Execute(ctx, stranger, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "1"})
	if !errors.Is(err, port.ErrSessionNotFound) || !strings.Contains(err.Error(), "names node") {
		t.Errorf("an id of node a's that did not move, on node b: %v; want a 404 naming node a", err)
	}

	// And home again.
	drain(b, a)
	check(pa, "node a, home again")
	if got, err := listSessions(ctx, b.base, ""); err != nil || len(got) != 0 {
		t.Errorf("node b after draining it lists %q, %v; want none", got, err)
	}
	for _, id := range ids {
		if err := pa.DestroySession(ctx, id); err != nil {
			t.Error(err)
		}
	}
}

// With tenants, a drain by a tenant's key moves that tenant's sessions,
// and they stay that tenant's on the new node: nobody else lists or
// reaches them there, and the other tenants' sessions stay where they
// were. A DELETE of another node's id is refused as misrouted, not
// answered as if the session were gone.
func TestDrainWithTenants(t *testing.T) {
	ctx := context.Background()
	yamlFile, tokenFile, snapKey := tenantConfig(t)
	acmeFile := filepath.Join(filepath.Dir(yamlFile), "acme.key")
	args := func(node string) []string {
		return []string{"--config", yamlFile, "--auth-token-file", tokenFile, "--snapshot-key-file", snapKey, "--node-id", node}
	}
	a, b := startServe(t, args("a")...), startServe(t, args("b")...)
	acmeA, globexA := client(t, a.base, acmeKey), client(t, a.base, globexKey)
	acmeB, globexB, opB := client(t, b.base, acmeKey), client(t, b.base, globexKey), client(t, b.base, opToken)

	sa, err := acmeA.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := acmeA.Execute(ctx, sa.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x = 'acme'"}); err != nil || res.Outcome != port.OutcomeCompleted {
		t.Fatalf("acme's setup: %v %+v", err, res)
	}
	sg, err := globexA.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}

	var out, errb bytes.Buffer
	if code := run(ctx, []string{"drain", "--from", a.base, "--to", b.base, "--auth-token-file", acmeFile}, strings.NewReader(""), &out, &errb); code != 0 || !strings.Contains(out.String(), "moved 1 of 1") {
		t.Fatalf("drain with acme's key: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if res, err := acmeB.Execute(ctx, sa.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(x)"}); err != nil || res.Stdout != "acme\n" {
		t.Errorf("acme's moved session on node b: %v %+v", err, res)
	}
	for name, p := range map[string]*port.Port{"globex": globexB, "the operator": opB} {
		if _, err := p.Execute(ctx, sa.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(x)"}); !errors.Is(err, port.ErrSessionNotFound) {
			t.Errorf("%s on acme's moved session: %v", name, err)
		}
	}
	for key, want := range map[string][]string{acmeKey: {sa.ID}, globexKey: nil, opToken: nil} {
		got, err := listSessions(ctx, b.base, key)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("node b lists %q, %v for a key; want %q", got, err, want)
		}
	}
	if got, err := listSessions(ctx, a.base, globexKey); err != nil || !slices.Equal(got, []string{sg.ID}) {
		t.Errorf("globex's session on node a: listed %q, %v", got, err)
	}
	// Misrouted destroys: node b is asked for node a's ids it does not
	// hold, by their owner.
	req, _ := http.NewRequest(http.MethodDelete, b.base+"/sessions/"+sg.ID, nil)
	req.Header.Set("Authorization", "Bearer "+globexKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "names node") {
		t.Errorf("DELETE of node a's id on node b: %d %s; want a 404 naming the node", resp.StatusCode, body)
	}
	if _, err := globexA.ListFiles(ctx, sg.ID, ""); err != nil {
		t.Errorf("globex's session after the misrouted DELETE: %v", err)
	}
}
