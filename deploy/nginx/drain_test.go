package nginx

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/port"
)

// TestDrainBehindTheRouter moves a node's sessions to another node behind
// the real router, as an operator drains a node: `codeport drain`, then
// the node's name re-pointed in nodes.conf and nginx reloaded. Clients go
// on through the router with the ids they hold and find their state; new
// sessions go to the node that is left.
func TestDrainBehindTheRouter(t *testing.T) {
	// Nodes compile or load the runtime as they start, for minutes on a
	// loaded machine: no deadline but the test binary's.
	ctx, cancel := testwait.Context(t)
	defer cancel()
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("ZHJhaW4gYmVoaW5kIHRoZSByb3V0ZXI6IGEgc25hcHNob3Qga2V5IG9mIDQ4IGJ5dGVz\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tc := startTestCluster(ctx, t, []string{"node-a", "node-b"}, "--snapshot-key-file", keyFile)
	c, bin, client, tokenFile := tc.cluster, tc.codeport, tc.client, tc.tokenFile

	// Sessions through the router until node-a holds three, each with
	// state in its interpreter and its workspace.
	var onA []string
	for i := 0; len(onA) < 3; i++ {
		if i == 20 {
			t.Fatalf("20 sessions through the router, %d on node-a", len(onA))
		}
		s, err := client.CreateSession(ctx, port.CreateSessionRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if node, _ := port.NodeOf(s.ID); node == "node-a" {
			onA = append(onA, s.ID)
			code := fmt.Sprintf("g = iter(range(%d, 1000))\nnext(g)\nopen('n.txt', 'w').write('%d')", 100*len(onA), len(onA))
			if _, err := execute(ctx, client, s.ID, code, ""); err != nil {
				t.Fatal(err)
			}
		}
	}

	cmd := exec.CommandContext(ctx, bin, "drain", "--from", c.NodeURL("node-a"), "--to", c.NodeURL("node-b"), "--auth-token-file", tokenFile)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("codeport drain: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "moved 3 of 3") {
		t.Fatalf("codeport drain's report: %s", out.String())
	}
	// Before the router learns it, node-a answers the moved ids as ids it
	// does not hold.
	if _, err := client.Execute(ctx, onA[0], port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "1"}); !errors.Is(err, port.ErrSessionNotFound) {
		t.Fatalf("a moved session before the router was told: %v, want session not found", err)
	}
	if err := c.Repoint("node-a", "node-b"); err != nil {
		t.Fatal(err)
	}
	// nginx reloads asynchronously: wait for the first session to answer.
	var err error
	_ = testwait.Poll(ctx, 100*time.Millisecond, func() bool {
		_, err = client.Execute(ctx, onA[0], port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "1"})
		return !errors.Is(err, port.ErrSessionNotFound)
	})
	if err != nil {
		t.Fatalf("the moved session through the reloaded router: %v", err)
	}
	for i, id := range onA {
		n := i + 1
		if _, err := execute(ctx, client, id, "print(next(g))", fmt.Sprintf("%d\n", 100*n+1)); err != nil {
			t.Errorf("moved session %d: %v", n, err)
		}
		if err := checkFile(ctx, client, id, "n.txt", []byte(fmt.Sprint(n))); err != nil {
			t.Errorf("moved session %d: %v", n, err)
		}
	}
	for range 6 {
		s, err := client.CreateSession(ctx, port.CreateSessionRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if node, _ := port.NodeOf(s.ID); node != "node-b" {
			t.Errorf("a new session after the drain landed on %q, want node-b", node)
		}
		if err := client.DestroySession(ctx, s.ID); err != nil {
			t.Error(err)
		}
	}
}
