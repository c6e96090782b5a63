package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
