package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/codeport/codeport/gateway/responses"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
)

// TestTurnCorrectsAnError runs the example's loop against the real
// embedded runtime: two executions, the
// first failing with a NameError, the second corrected, then the answer.
func TestTurnCorrectsAnError(t *testing.T) {
	p := wasmtest.New(t, nil)
	model := httptest.NewServer(ScriptedModel())
	defer model.Close()

	// The first execution waits for the runtime, for minutes on a loaded
	// machine: no deadline but the test binary's.
	ctx, cancel := testwait.Context(t)
	defer cancel()
	g := &Gateway{Port: p, ModelURL: model.URL, Timeout: 30 * time.Second}
	turn, err := g.Turn(ctx, question, clientTools)
	if err != nil {
		t.Fatal(err)
	}
	if len(turn.Items) != 2 {
		t.Fatalf("%d items, want 2: %+v", len(turn.Items), turn.Items)
	}
	first, second := turn.Items[0], turn.Items[1]
	for i, it := range turn.Items {
		if it.Type != "code_interpreter_call" || !strings.HasPrefix(it.ID, responses.ItemIDPrefix) ||
			!strings.HasPrefix(it.ContainerID, responses.ContainerIDPrefix) || it.Status != responses.StatusCompleted {
			t.Errorf("item %d: %+v", i, it)
		}
	}
	if first.ID == second.ID || first.ContainerID == second.ContainerID {
		t.Errorf("the two executions share an id: %+v", turn.Items)
	}
	if first.Code != firstCode || second.Code != secondCode {
		t.Errorf("codes %q, %q", first.Code, second.Code)
	}
	if len(first.Outputs) != 1 || !strings.Contains(first.Outputs[0].Logs, "NameError: name 'sqares' is not defined") {
		t.Errorf("first item's logs lack the NameError: %+v", first.Outputs)
	}
	if len(second.Outputs) != 1 || second.Outputs[0].Logs != "385\n" {
		t.Errorf("second item's logs: %+v", second.Outputs)
	}
	if want := "The sum of the squares of 1 to 10 is 385."; turn.Text != want {
		t.Errorf("final text %q, want %q", turn.Text, want)
	}
}

// TestRun runs main's path: binding.Open from the environment, the model
// on loopback, the printed items and answer.
func TestRun(t *testing.T) {
	t.Setenv("CODEPORT_SESSIONS_DIR", t.TempDir())
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"public item 1:", `"status": "completed"`, "NameError", "public item 2:", "assistant: The sum of the squares of 1 to 10 is 385."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
