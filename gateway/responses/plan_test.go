package responses

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/codeport/codeport/port/porttest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/codeport/codeport/port"
)

func TestNewPlan(t *testing.T) {
	itemRe := regexp.MustCompile(`^ci_[0-9a-f]{48}$`)
	cntrRe := regexp.MustCompile(`^cntr_gw_[0-9a-f]{32}$`)
	items, cntrs := map[string]bool{}, map[string]bool{}
	for i := 0; i < 1000; i++ {
		p, err := NewPlan("call_x", `{"code":"print(1)"}`)
		if err != nil {
			t.Fatal(err)
		}
		if !itemRe.MatchString(p.ItemID) || !cntrRe.MatchString(p.ContainerID) {
			t.Fatalf("ids %q %q", p.ItemID, p.ContainerID)
		}
		if items[p.ItemID] || cntrs[p.ContainerID] {
			t.Fatalf("duplicate id at %d", i)
		}
		items[p.ItemID], cntrs[p.ContainerID] = true, true
		if p.CallID != "call_x" || p.Code != "print(1)" {
			t.Fatalf("%+v", p)
		}
	}
	for _, c := range []struct{ call, args, msg string }{
		{"", `{"code":"x"}`, "call_id is empty"},
		{"c", `{"code":`, "not a JSON object"},
		{"c", `null`, "not a JSON object"},
		{"c", `["x"]`, "not a JSON object"},
		{"c", `{}`, "missing required field code"},
		{"c", `{"code":42}`, "code must be a string, got 42"},
		{"c", `{"code":"  \n"}`, "code is empty"},
	} {
		_, err := NewPlan(c.call, c.args)
		if !errors.Is(err, ErrBadArguments) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("NewPlan(%q, %q) = %v, want %q", c.call, c.args, err, c.msg)
		}
	}
}

func TestEvents(t *testing.T) {
	for _, o := range []Outcome{{Kind: Success, Stdout: "4\n"}, {Kind: Timeout, Stdout: "tick\n", ReturnCode: 124}} {
		seq := 7
		evs := testPlan.Events(o, 2, &seq)
		if seq != 14 {
			t.Errorf("seq = %d, want 14", seq)
		}
		final := mustJSON(t, testPlan.Item(o))
		inProgress := mustJSON(t, testPlan.InProgressItem())
		want := []string{
			`{"type":"response.output_item.added","sequence_number":7,"output_index":2,"item":` + inProgress + `}`,
			`{"type":"response.code_interpreter_call.in_progress","sequence_number":8,"output_index":2,"item_id":"ci_1"}`,
			`{"type":"response.code_interpreter_call_code.delta","sequence_number":9,"output_index":2,"item_id":"ci_1","delta":"print(2+2)"}`,
			`{"type":"response.code_interpreter_call_code.done","sequence_number":10,"output_index":2,"item_id":"ci_1","code":"print(2+2)"}`,
			`{"type":"response.code_interpreter_call.interpreting","sequence_number":11,"output_index":2,"item_id":"ci_1"}`,
			`{"type":"response.code_interpreter_call.completed","sequence_number":12,"output_index":2,"item_id":"ci_1"}`,
			`{"type":"response.output_item.done","sequence_number":13,"output_index":2,"item":` + final + `}`,
		}
		if len(evs) != len(want) {
			t.Fatalf("%d events", len(evs))
		}
		for i := range want {
			if got := mustJSON(t, evs[i]); got != want[i] {
				t.Errorf("event %d\n got %s\nwant %s", i, got, want[i])
			}
		}
	}
	// Start and Finish continue one numbering.
	seq := 0
	start := testPlan.StartEvents(0, &seq)
	finish := testPlan.FinishEvents(Outcome{Kind: Success}, 0, &seq)
	if start[4].SequenceNumber != 4 || finish[0].SequenceNumber != 5 || seq != 7 {
		t.Errorf("numbering: %d %d %d", start[4].SequenceNumber, finish[0].SequenceNumber, seq)
	}
}

func TestFilterHistory(t *testing.T) {
	in := raws(
		`{"role":"user","content":"compute"}`,
		`{"type":"function_call","call_id":"c1","name":"code_interpreter","arguments":"{\"code\":\"1/0\"}"}`,
		`{"type":"function_call_output","call_id":"c1","output":"stderr: ..."}`,
		`{"type":"code_interpreter_call","id":"ci_1","container_id":"cntr_gw_1","code":"1/0","status":"completed","outputs":[]}`,
		`{"type":"function_call","call_id":"c2","name":"lookup","arguments":"{}"}`,
		`{"type":"function_call_output","call_id":"c2","output":"ok"}`,
		`{"type":"function_call_output","call_id":"c3","output":"late"}`,
		`{"type":"function_call","call_id":"c3","name":"code_interpreter","arguments":"{}"}`,
		`"not an object"`,
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}`,
	)
	want := []int{0, 3, 4, 5, 8, 9}
	got := FilterHistory(in)
	if len(got) != len(want) {
		t.Fatalf("got %d items: %s", len(got), got)
	}
	for i, j := range want {
		if string(got[i]) != string(in[j]) {
			t.Errorf("item %d = %s, want %s", i, got[i], in[j])
		}
	}
	for _, it := range got {
		if strings.Contains(string(it), `"name":"code_interpreter"`) {
			t.Errorf("internal call kept: %s", it)
		}
	}
	if len(FilterHistory(nil)) != 0 {
		t.Error("nil input")
	}
}

// fakePort is a port that records sessions and returns a scripted result.
type fakePort struct {
	port.CodeExecutionPort
	mu        sync.Mutex
	created   []string
	destroyed []string
	createErr error
	exec      func(ctx context.Context, req port.ExecuteRequest) (port.Result, error)
	destroyOK bool // destroy context was alive
}

func (f *fakePort) CreateSession(ctx context.Context, _ port.CreateSessionRequest) (port.Session, error) {
	if f.createErr != nil {
		return port.Session{}, f.createErr
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	id := fmt.Sprintf("s%d", len(f.created))
	f.created = append(f.created, id)
	return port.Session{ID: id}, nil
}

func (f *fakePort) Execute(ctx context.Context, _ string, req port.ExecuteRequest) (port.Result, error) {
	return f.exec(ctx, req)
}

func (f *fakePort) DestroySession(ctx context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.destroyed = append(f.destroyed, id)
	f.destroyOK = ctx.Err() == nil
	return nil
}

func TestRunCall(t *testing.T) {
	plan := Plan{ItemID: "ci_1", ContainerID: "cntr_gw_1", CallID: "call_9", Code: "print(4)"}
	t.Run("fresh session per call", func(t *testing.T) {
		var got port.ExecuteRequest
		f := &fakePort{exec: func(_ context.Context, req port.ExecuteRequest) (port.Result, error) {
			got = req
			return port.Result{Stdout: "4\n", Outcome: port.OutcomeCompleted}, nil
		}}
		for i := 0; i < 2; i++ {
			if o := RunCall(context.Background(), f, plan, 5*time.Second); o.Kind != Success || o.Stdout != "4\n" {
				t.Fatalf("%+v", o)
			}
		}
		if len(f.created) != 2 || len(f.destroyed) != 2 || f.created[0] == f.created[1] {
			t.Errorf("sessions created %v destroyed %v", f.created, f.destroyed)
		}
		if got.Tool != port.ToolCodeExecution || got.Code != "print(4)" || got.Timeout != 5*time.Second || got.ToolUseID != "call_9" {
			t.Errorf("request %+v", got)
		}
	})
	t.Run("outer deadline", func(t *testing.T) {
		f := &fakePort{exec: func(ctx context.Context, _ port.ExecuteRequest) (port.Result, error) {
			<-ctx.Done()
			return port.Result{Stdout: "partial", ReturnCode: 130, Outcome: port.OutcomeCancelled, StateLost: true}, nil
		}}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		o := RunCall(ctx, f, plan, 0)
		if o.Kind != OuterTimeout || o.Stdout != "partial" || !errors.Is(o.Err, context.DeadlineExceeded) {
			t.Errorf("%+v", o)
		}
		if len(f.destroyed) != 1 || !f.destroyOK {
			t.Errorf("destroy %v alive=%v", f.destroyed, f.destroyOK)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		f := &fakePort{exec: func(ctx context.Context, _ port.ExecuteRequest) (port.Result, error) {
			<-ctx.Done()
			return port.Result{}, fmt.Errorf("execute: %w", ctx.Err())
		}}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if o := RunCall(ctx, f, plan, 0); o.Kind != Cancelled || !f.destroyOK {
			t.Errorf("%+v alive=%v", o, f.destroyOK)
		}
	})
	t.Run("capacity", func(t *testing.T) {
		f := &fakePort{createErr: &port.CapacityError{Resource: "sessions", RetryAfter: 3 * time.Second}}
		o := RunCall(context.Background(), f, plan, 0)
		if o.Kind != CapacityUnavailable || o.RetryAfter != 3*time.Second || len(f.destroyed) != 0 {
			t.Errorf("%+v", o)
		}
	})
	t.Run("runtime failure", func(t *testing.T) {
		f := &fakePort{exec: func(context.Context, port.ExecuteRequest) (port.Result, error) {
			return port.Result{}, port.ErrRuntimeFailure
		}}
		if o := RunCall(context.Background(), f, plan, 0); o.Kind != RuntimeFailure || len(f.destroyed) != 1 {
			t.Errorf("%+v", o)
		}
	})
}

// RunCall hands back the files the call produced, with their bytes (the
// session they were made in is gone once it returns); the item shows the
// images, the model's text names them, and citations point at them.
func TestRunCallProducedFiles(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nnot really")
	p := porttest.New(porttest.WithExecutor(func(_ context.Context, s porttest.Session, req port.ExecuteRequest) (port.Result, error) {
		if err := s.WriteFile("out.csv", []byte("a\n1\n")); err != nil {
			return port.Result{}, err
		}
		if err := s.WriteFile("plots/chart.png", png); err != nil {
			return port.Result{}, err
		}
		return port.Result{Stdout: "done\n"}, nil
	}))
	defer p.Close()
	plan, err := NewPlan("call_1", `{"code":"make files"}`)
	if err != nil {
		t.Fatal(err)
	}
	o := RunCall(context.Background(), p, plan, 0)
	if o.Kind != Success || len(o.Files) != 2 {
		t.Fatalf("outcome %s, files %+v", o.Kind, o.Files)
	}
	if f := o.Files[0]; f.Filename != "out.csv" || string(f.Data) != "a\n1\n" || !strings.HasPrefix(f.MimeType, "text/csv") {
		t.Fatalf("out.csv: %+v", f)
	}
	if f := o.Files[1]; f.Filename != "plots/chart.png" || string(f.Data) != string(png) || f.MimeType != "image/png" {
		t.Fatalf("chart: %+v", f)
	}
	if got := o.FunctionOutput(); !strings.Contains(got, "\nfiles: out.csv, plots/chart.png") {
		t.Fatalf("the model is not told of the files:\n%s", got)
	}
	item := plan.Item(o)
	if len(item.Outputs) != 2 || item.Outputs[1].Type != "image" || item.Outputs[1].URL != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(png) {
		t.Fatalf("item outputs %+v", item.Outputs)
	}
	text := "Here is chart.png — and the table."
	cites := plan.FileCitations(o, text)
	if len(cites) != 2 {
		t.Fatalf("citations %+v", cites)
	}
	if c := cites[1]; c.Type != "container_file_citation" || c.ContainerID != plan.ContainerID || c.FileID != o.Files[1].FileID || c.StartIndex != 8 || c.EndIndex != 17 {
		t.Fatalf("chart citation %+v", c)
	}
	if n := utf8.RuneCountInString(text); cites[0].StartIndex != n || cites[0].EndIndex != n {
		t.Fatalf("an unmentioned file is cited at %d..%d, want the end %d", cites[0].StartIndex, cites[0].EndIndex, n)
	}
}

// A model's arguments cut short by its token limit are not JSON: the
// error the model is given quotes their start, not the whole program, and
// a quote cut inside a character stays valid UTF-8.
func TestNewPlanQuotesArgumentsBriefly(t *testing.T) {
	long := `{"code":"` + strings.Repeat("print('é')\n", 100000)
	for _, args := range []string{long, `{"code":["a` + strings.Repeat("é", 40) + `"]}`} {
		_, err := NewPlan("call_1", args)
		if !errors.Is(err, ErrBadArguments) {
			t.Fatalf("err = %v", err)
		}
		if msg := err.Error(); len(msg) > 200 || !utf8.ValidString(msg) {
			t.Errorf("error of %d bytes (valid UTF-8: %v): %.300q", len(msg), utf8.ValidString(msg), msg)
		}
	}
}
