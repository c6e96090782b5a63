package responses

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/codeport/codeport/gateway/containers"
	"github.com/codeport/codeport/internal/testkit/fakeclock"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
)

// containerID is a well-formed container id that no store holds.
const containerID = "cntr_0123456789abcdef0123456789abcdef"

// phaseTwo are Options with containers enabled. The store is never used
// by validation, so one over no port does.
func phaseTwo(t *testing.T) Options {
	t.Helper()
	s := containers.New(nil)
	t.Cleanup(func() { _ = s.Close() })
	return Options{Enabled: true, Containers: s}
}

func TestContainerDeclarationsAccepted(t *testing.T) {
	opts := phaseTwo(t)
	fn := `{"type":"function","name":"lookup","parameters":{}}`
	cases := []struct {
		name string
		decl string
		want ContainerChoice
	}{
		{"OpenAI auto", `{"type":"code_interpreter","container":{"type":"auto"}}`, ContainerChoice{Mode: ContainerAuto, Field: "tools[1].container"}},
		{"auto with files", `{"type":"code_interpreter","container":{"type":"auto","file_ids":["file-a","file-b"]}}`, ContainerChoice{Mode: ContainerAuto, FileIDs: []string{"file-a", "file-b"}, Field: "tools[1].container"}},
		{"auto with null files", `{"type":"code_interpreter","container":{"type":"auto","file_ids":null}}`, ContainerChoice{Mode: ContainerAuto, Field: "tools[1].container"}},
		{"auto no network", `{"type":"code_interpreter","container":{"type":"auto","network_policy":{"type":"disabled"}}}`, ContainerChoice{Mode: ContainerAuto, Field: "tools[1].container"}},
		{"auto with execution", `{"type":"code_interpreter","execution":"gateway","container":{"type":"auto"}}`, ContainerChoice{Mode: ContainerAuto, Field: "tools[1].container"}},
		{"id", `{"type":"code_interpreter","container":"` + containerID + `"}`, ContainerChoice{Mode: ContainerExisting, ID: containerID, Field: "tools[1].container"}},
		{"id of a node", `{"type":"code_interpreter","container":"cntr_node-1_0123456789abcdef0123456789abcdef"}`, ContainerChoice{Mode: ContainerExisting, ID: "cntr_node-1_0123456789abcdef0123456789abcdef", Field: "tools[1].container"}},
		{"direct callers", `{"type":"code_interpreter","container":{"type":"auto"},"allowed_callers":["direct"]}`, ContainerChoice{Mode: ContainerAuto, Field: "tools[1].container"}},
		{"phase-one shape", decl, ContainerChoice{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tools := raws(fn, c.decl)
			out, err := ValidateTools(tools, opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ContainerOf(tools, opts)
			if err != nil {
				t.Fatal(err)
			}
			if mustJSON(t, got) != mustJSON(t, c.want) {
				t.Errorf("choice %+v, want %+v", got, c.want)
			}
			if string(out[0]) != fn {
				t.Errorf("other tool changed: %s", out[0])
			}
			var tool functionTool
			if err := json.Unmarshal(out[1], &tool); err != nil || tool.Type != "function" || tool.Name != ToolName {
				t.Fatalf("declaration not replaced: %s (%v)", out[1], err)
			}
			persists := strings.Contains(tool.Description, "persist between calls in the same container")
			fresh := strings.Contains(tool.Description, "fresh Python state")
			if c.want.Mode == ContainerFresh {
				if persists || !fresh || !strings.Contains(string(tool.Parameters), "fresh state") {
					t.Errorf("fresh calls described as persistent: %s", out[1])
				}
			} else if !persists || fresh || strings.Contains(string(tool.Parameters), "fresh") {
				t.Errorf("container calls described as fresh: %s", out[1])
			}
		})
	}
	// No declaration: the fresh choice, the tools unchanged.
	if c, err := ContainerOf(raws(fn), opts); err != nil || c.Mode != ContainerFresh {
		t.Errorf("no declaration: %+v, %v", c, err)
	}
}

func TestContainerDeclarationsRefused(t *testing.T) {
	opts := phaseTwo(t)
	networked := opts
	networked.Capabilities = port.Capabilities{Network: true, Limits: port.Limits{MemoryBytes: 256 << 20}}
	manyIDs := make([]string, MaxFileIDs+1)
	for i := range manyIDs {
		manyIDs[i] = fmt.Sprintf("file-%d", i)
	}
	many, _ := json.Marshal(manyIDs)
	cases := []struct {
		name, decl, field, msg string
		opts                   *Options
	}{
		{"no container no execution", `{"type":"code_interpreter"}`, "tools[0].container", "is required", nil},
		{"other execution", `{"type":"code_interpreter","execution":"hosted","container":{"type":"auto"}}`, "tools[0].execution", `"hosted" is not accepted`, nil},
		{"null execution", `{"type":"code_interpreter","execution":null,"container":{"type":"auto"}}`, "tools[0].execution", `null is not accepted`, nil},
		{"bad id", `{"type":"code_interpreter","container":"cntr_abc"}`, "tools[0].container", `"cntr_abc" is not a container id`, nil},
		{"empty id", `{"type":"code_interpreter","container":""}`, "tools[0].container", `"" is not a container id`, nil},
		{"file id as container", `{"type":"code_interpreter","container":"file-abc"}`, "tools[0].container", "is not a container id", nil},
		{"null container", `{"type":"code_interpreter","container":null}`, "tools[0].container", "null is not a container id", nil},
		{"number container", `{"type":"code_interpreter","container":7}`, "tools[0].container", "neither a container id nor", nil},
		{"missing type", `{"type":"code_interpreter","container":{"file_ids":[]}}`, "tools[0].container.type", `is required: only "auto"`, nil},
		{"other type", `{"type":"code_interpreter","container":{"type":"persistent"}}`, "tools[0].container.type", `"persistent" is not accepted`, nil},
		{"memory limit", `{"type":"code_interpreter","container":{"type":"auto","memory_limit":"4g"}}`, "tools[0].container.memory_limit", "cannot be chosen", nil},
		{"memory limit says the limit", `{"type":"code_interpreter","container":{"type":"auto","memory_limit":"1g"}}`, "tools[0].container.memory_limit", "256 MiB", &networked},
		{"network allowlist", `{"type":"code_interpreter","container":{"type":"auto","network_policy":{"type":"allowlist","allowed_domains":["x.test"]}}}`, "tools[0].container.network_policy", `only {"type":"disabled"}`, nil},
		{"network disabled on a networked sandbox", `{"type":"code_interpreter","container":{"type":"auto","network_policy":{"type":"disabled"}}}`, "tools[0].container.network_policy", "cannot be honoured", &networked},
		{"unknown container field", `{"type":"code_interpreter","container":{"type":"auto","name":"x"}}`, "tools[0].container.name", "unknown field of a container configuration", nil},
		{"file_ids not an array", `{"type":"code_interpreter","container":{"type":"auto","file_ids":"file-a"}}`, "tools[0].container.file_ids", "must be an array", nil},
		{"file id not a string", `{"type":"code_interpreter","container":{"type":"auto","file_ids":["file-a",3]}}`, "tools[0].container.file_ids[1]", "must be a string, got 3", nil},
		{"empty file id", `{"type":"code_interpreter","container":{"type":"auto","file_ids":[""]}}`, "tools[0].container.file_ids[0]", "is empty", nil},
		{"control character", `{"type":"code_interpreter","container":{"type":"auto","file_ids":["file\u0000a"]}}`, "tools[0].container.file_ids[0]", "printable", nil},
		{"long file id", `{"type":"code_interpreter","container":{"type":"auto","file_ids":["` + strings.Repeat("f", MaxFileIDBytes+1) + `"]}}`, "tools[0].container.file_ids[0]", "longer than 256 bytes", nil},
		{"repeated file id", `{"type":"code_interpreter","container":{"type":"auto","file_ids":["a","b","a"]}}`, "tools[0].container.file_ids[2]", "repeats tools[0].container.file_ids[0]", nil},
		{"too many file ids", `{"type":"code_interpreter","container":{"type":"auto","file_ids":` + string(many) + `}}`, "tools[0].container.file_ids", "at most 100", nil},
		{"programmatic callers", `{"type":"code_interpreter","container":{"type":"auto"},"allowed_callers":["direct","programmatic"]}`, "tools[0].allowed_callers[1]", `"programmatic" is not accepted`, nil},
		{"callers not an array", `{"type":"code_interpreter","container":{"type":"auto"},"allowed_callers":"direct"}`, "tools[0].allowed_callers", "must be an array", nil},
		{"unknown field", `{"type":"code_interpreter","container":{"type":"auto"},"file_ids":[]}`, "tools[0].file_ids", "unknown field of a code_interpreter declaration", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := opts
			if c.opts != nil {
				o = *c.opts
			}
			for _, validate := range []func() error{
				func() error { out, err := ValidateTools(raws(c.decl), o); checkNil(t, out); return err },
				func() error { _, err := ContainerOf(raws(c.decl), o); return err },
			} {
				err := validate()
				var ve *ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("err = %v, want *ValidationError", err)
				}
				if ve.Field != c.field || !strings.Contains(ve.Message, c.msg) {
					t.Errorf("got %q, want field %q and %q", err, c.field, c.msg)
				}
			}
		})
	}
	// Refusals that do not depend on the phase.
	disabled := opts
	disabled.Enabled = false
	if _, err := ValidateTools(raws(`{"type":"code_interpreter","container":{"type":"auto"}}`), disabled); err == nil || !strings.Contains(err.Error(), "tools[0]: code execution is disabled") {
		t.Errorf("disabled: %v", err)
	}
	if _, err := ValidateTools(raws(`{"type":"code_interpreter","container":{"type":"auto"}}`, `{"type":"function","name":"code_interpreter"}`), opts); err == nil || !strings.HasPrefix(err.Error(), "tools[1].name:") {
		t.Errorf("collision: %v", err)
	}
}

func checkNil(t *testing.T, out []json.RawMessage) {
	t.Helper()
	if out != nil {
		t.Errorf("tools returned with an error: %s", out)
	}
}

// Phase one (no store) still refuses every container field, OpenAI's
// standard declaration included, with the message it always gave.
func TestPhaseOneRefusesContainerFields(t *testing.T) {
	for _, d := range []string{
		`{"type":"code_interpreter","container":{"type":"auto"}}`,
		`{"type":"code_interpreter","container":"` + containerID + `"}`,
		`{"type":"code_interpreter","execution":"gateway","container":{"type":"auto","file_ids":["file-a"]}}`,
	} {
		_, err := ValidateTools(raws(d), Options{Enabled: true})
		want := "tools[0].container: a container id or configuration cannot be supplied: the gateway creates a fresh execution context for every call; remove the field"
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v", d, err)
		}
		if _, err := ContainerOf(raws(d), Options{Enabled: true}); err == nil || err.Error() != want {
			t.Errorf("ContainerOf %s: %v", d, err)
		}
	}
	if c, err := ContainerOf(raws(decl), Options{Enabled: true}); err != nil || c.Mode != ContainerFresh {
		t.Errorf("phase one: %+v %v", c, err)
	}
	_, err := ValidateTools(raws(`{"type":"code_interpreter","execution":"gateway","allowed_callers":["direct"]}`), Options{Enabled: true})
	if err == nil || !strings.HasPrefix(err.Error(), "tools[0].allowed_callers: unknown field") {
		t.Errorf("phase one allowed_callers: %v", err)
	}
}

func TestContainerDescription(t *testing.T) {
	caps := port.Capabilities{Runtime: "CPython", RuntimeVersion: "3.12.0", WorkingDirectory: "/workspace"}
	d := ContainerDescription(caps)
	if !strings.Contains(d, "persist between calls in the same container") || strings.Contains(d, "fresh") || strings.Contains(d, "session") {
		t.Errorf("container description: %s", d)
	}
	if !strings.Contains(d, "CPython 3.12.0") {
		t.Errorf("capabilities lost: %s", d)
	}
}

func TestContainerFileCitations(t *testing.T) {
	files := []containers.File{
		{ID: "cfile_1", ContainerID: containerID, Name: "out.csv", Path: "/workspace/out.csv"},
		{ID: "cfile_2", ContainerID: containerID, Name: "plots/chärt.png", Path: "/workspace/plots/chärt.png"},
		{ID: "cfile_3", ContainerID: containerID, Name: "unmentioned.txt", Path: "/workspace/unmentioned.txt"},
		{ID: "cfile_1", ContainerID: containerID, Name: "out.csv", Path: "/workspace/out.csv"}, // listed twice
		{ID: "", Name: "unlisted.bin"},
	}
	check := func(t *testing.T, text string, want []Annotation) {
		t.Helper()
		got := ContainerFileCitations(containerID, files, text)
		if mustJSON(t, got) != mustJSON(t, want) {
			t.Fatalf("citations\n got %s\nwant %s", mustJSON(t, got), mustJSON(t, want))
		}
		runes := []rune(text)
		for _, a := range got {
			if a.StartIndex < 0 || a.EndIndex < a.StartIndex || a.EndIndex > len(runes) {
				t.Fatalf("%+v out of the text's %d characters", a, len(runes))
			}
		}
	}
	ann := func(id, name string, start, end int) Annotation {
		return Annotation{Type: "container_file_citation", ContainerID: containerID, FileID: id, Filename: name, StartIndex: start, EndIndex: end}
	}
	t.Run("ascii", func(t *testing.T) {
		text := "See [the table](sandbox:/workspace/out.csv)."
		check(t, text, []Annotation{
			ann("cfile_1", "out.csv", 24, 42),
			ann("cfile_2", "chärt.png", 44, 44),
			ann("cfile_3", "unmentioned.txt", 44, 44),
		})
		if got := string([]rune(text)[24:42]); got != "/workspace/out.csv" {
			t.Errorf("span %q", got)
		}
	})
	t.Run("non-ascii", func(t *testing.T) {
		// "é", "—" and "📈" are one character each (1, 1 and 1 code
		// points; 2, 3 and 4 bytes).
		text := "Résumé — 📈 chärt.png, then out.csv"
		runes := []rune(text)
		start := strings.Index(text, "chärt.png")
		if utf8.RuneCountInString(text[:start]) != 11 {
			t.Fatalf("test text: %d", utf8.RuneCountInString(text[:start]))
		}
		check(t, text, []Annotation{
			ann("cfile_1", "out.csv", 27, 34),
			ann("cfile_2", "chärt.png", 11, 20),
			ann("cfile_3", "unmentioned.txt", len(runes), len(runes)),
		})
		if got := string(runes[11:20]); got != "chärt.png" {
			t.Errorf("span %q", got)
		}
		if got := string(runes[27:34]); got != "out.csv" {
			t.Errorf("span %q", got)
		}
	})
	t.Run("inside longer names", func(t *testing.T) {
		// "out.csv" in "layout.csv" or "out.csv.bak", and "data" in
		// "metadata", are no mentions of the files; the sentence's
		// full stop does not lengthen a name.
		files := []containers.File{
			{ID: "cfile_d", Name: "data", Path: "/workspace/data"},
			{ID: "cfile_o", Name: "out.csv", Path: "/workspace/out.csv"},
		}
		text := "The metadata of layout.csv and out.csv.bak is in data; see out.csv."
		d, o := strings.Index(text, " data;")+1, strings.LastIndex(text, "out.csv")
		got := ContainerFileCitations(containerID, files, text)
		want := []Annotation{ann("cfile_d", "data", d, d+4), ann("cfile_o", "out.csv", o, o+7)}
		if mustJSON(t, got) != mustJSON(t, want) {
			t.Fatalf("citations\n got %s\nwant %s", mustJSON(t, got), mustJSON(t, want))
		}
	})
	t.Run("empty text", func(t *testing.T) {
		check(t, "", []Annotation{ann("cfile_1", "out.csv", 0, 0), ann("cfile_2", "chärt.png", 0, 0), ann("cfile_3", "unmentioned.txt", 0, 0)})
	})
}

func TestNewContainerPlan(t *testing.T) {
	p, err := NewContainerPlan(containerID, "call_1", `{"code":"x = 1"}`)
	if err != nil || p.ContainerID != containerID || p.CallID != "call_1" || p.Code != "x = 1" || !strings.HasPrefix(p.ItemID, ItemIDPrefix) {
		t.Fatalf("%+v %v", p, err)
	}
	if item := p.Item(Outcome{Kind: Success}); item.ContainerID != containerID {
		t.Errorf("item container %q", item.ContainerID)
	}
	if _, err := NewContainerPlan("cntr_gw_x", "call_1", `{"code":"x"}`); err == nil || !strings.Contains(err.Error(), "not a container id") {
		t.Errorf("bad container id: %v", err)
	}
	if _, err := NewContainerPlan(containerID, "call_1", `{}`); !errors.Is(err, ErrBadArguments) {
		t.Errorf("bad arguments: %v", err)
	}
}

// memFiles is a gateway's file store in memory: tenant → file id → file.
type memFiles map[string]map[string]struct{ name, data string }

func (m memFiles) OpenFile(_ context.Context, tenant, fileID string) (string, io.ReadCloser, error) {
	f, ok := m[tenant][fileID]
	if !ok {
		return "", nil, fmt.Errorf("%w: no file %q", containers.ErrFileNotFound, fileID)
	}
	return f.name, io.NopCloser(strings.NewReader(f.data)), nil
}

type tenantKey struct{}

func asTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

func tenantOf(ctx context.Context) string {
	s, _ := ctx.Value(tenantKey{}).(string)
	return s
}

// open validates a client's declaration with containers enabled and opens
// its container for the caller of ctx.
func open(ctx context.Context, store *containers.Store, declaration string) (*Container, error) {
	choice, err := ContainerOf(raws(declaration), Options{Enabled: true, Containers: store})
	if err != nil {
		return nil, err
	}
	return OpenContainer(ctx, store, choice)
}

func run(t *testing.T, ctx context.Context, c *Container, code string) (Plan, Outcome) {
	t.Helper()
	plan := containerPlan(t, c, code)
	return plan, c.Run(ctx, plan, 0)
}

func containerPlan(t *testing.T, c *Container, code string) Plan {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"code": code})
	plan, err := c.NewPlan("call_"+randomHex(8), string(args))
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// The real in-process runtime behind a real store: calls in one container
// share their state; a container is its tenant's alone and is gone once it
// has expired.
func TestContainersLive(t *testing.T) {
	p := wasmtest.New(t, nil)
	files := memFiles{
		"acme":   {"file-data": {"data.csv", "n\n3\n4\n"}},
		"globex": {"file-secret": {"secret.txt", "globex only"}},
	}
	clk := fakeclock.New(time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC))
	store := containers.New(p,
		containers.WithFileSource(files),
		containers.WithTenantOf(tenantOf),
		containers.WithClock(clk.Now),
		containers.WithDefaultExpiry(20*time.Minute),
	)
	t.Cleanup(func() { _ = store.Close() })
	base, cancel := testwait.Context(t)
	defer cancel()
	acme, globex := asTenant(base, "acme"), asTenant(base, "globex")

	var first *Container
	t.Run("auto container with files, state across calls", func(t *testing.T) {
		c, err := open(acme, store, `{"type":"code_interpreter","container":{"type":"auto","file_ids":["file-data"]}}`)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Created {
			t.Error("auto container not reported as created")
		}
		if _, ok := containers.NodeOf(c.ID); !ok || strings.HasPrefix(c.ID, ContainerIDPrefix) {
			t.Fatalf("container id %q", c.ID)
		}
		first = c
		plan1, o1 := run(t, acme, c, "total = sum(int(l) for l in open('data.csv').read().split()[1:])\nopen('report.txt', 'w').write(f'total={total}')\nprint('total is', total)")
		if o1.Kind != Success || o1.Stdout != "total is 7\n" {
			t.Fatalf("first call: %s\n%s", o1.Kind, o1.FunctionOutput())
		}
		if item := plan1.Item(o1); item.ContainerID != c.ID || item.Status != StatusCompleted {
			t.Errorf("item %+v", item)
		}
		if len(o1.Files) != 1 || o1.Files[0].Filename != "report.txt" || string(o1.Files[0].Data) != "total=7" || !strings.HasPrefix(o1.Files[0].FileID, containers.FileIDPrefix) {
			t.Fatalf("produced files %+v", o1.Files)
		}
		if len(o1.ContainerFiles) != 1 || o1.ContainerFiles[0].ID != o1.Files[0].FileID || o1.ContainerFiles[0].ContainerID != c.ID || o1.ContainerFiles[0].Source != "assistant" {
			t.Fatalf("container files %+v", o1.ContainerFiles)
		}
		if cites := plan1.FileCitations(o1, "Wrote report.txt."); len(cites) != 1 || cites[0].ContainerID != c.ID || cites[0].FileID != o1.Files[0].FileID || cites[0].StartIndex != 6 || cites[0].EndIndex != 16 {
			t.Errorf("plan citations %+v", cites)
		}
		if cites := ContainerFileCitations(c.ID, o1.ContainerFiles, "Wrote report.txt."); len(cites) != 1 || cites[0].FileID != o1.ContainerFiles[0].ID || cites[0].StartIndex != 6 {
			t.Errorf("container citations %+v", cites)
		}

		plan2, o2 := run(t, acme, c, "print(total * 6)\nprint(open('report.txt').read())")
		if o2.Kind != Success || o2.Stdout != "42\ntotal=7\n" {
			t.Fatalf("second call does not see the first's state: %s\n%s", o2.Kind, o2.FunctionOutput())
		}
		if plan2.ContainerID != plan1.ContainerID || plan2.ItemID == plan1.ItemID {
			t.Errorf("ids: %+v %+v", plan1, plan2)
		}
		if err := c.Release(acme); err != nil {
			t.Fatal(err)
		}
		if _, err := store.Get(acme, c.ID); err != nil {
			t.Errorf("a used container was released: %v", err)
		}
	})
	if first == nil {
		t.FailNow()
	}

	t.Run("a later response names the container", func(t *testing.T) {
		c, err := open(acme, store, `{"type":"code_interpreter","container":"`+first.ID+`"}`)
		if err != nil {
			t.Fatal(err)
		}
		if c.ID != first.ID || c.Created {
			t.Errorf("%+v", c)
		}
		if _, o := run(t, acme, c, "print(total)"); o.Kind != Success || o.Stdout != "7\n" {
			t.Fatalf("%s\n%s", o.Kind, o.FunctionOutput())
		}
		if err := c.Release(acme); err != nil {
			t.Fatal(err)
		}
		if _, err := store.Get(acme, c.ID); err != nil {
			t.Errorf("a named container was released: %v", err)
		}
	})

	t.Run("calls of a response run one at a time", func(t *testing.T) {
		var wg sync.WaitGroup
		outs := make([]Outcome, 4)
		for i := range outs {
			plan := containerPlan(t, first, fmt.Sprintf("total += 0\nprint(%d)", i))
			wg.Add(1)
			go func() {
				defer wg.Done()
				outs[i] = first.Run(acme, plan, 0)
			}()
		}
		wg.Wait()
		for i, o := range outs {
			if o.Kind != Success || o.Stdout != fmt.Sprintf("%d\n", i) {
				t.Errorf("call %d: %s\n%s", i, o.Kind, o.FunctionOutput())
			}
		}
	})

	t.Run("another tenant's container is unknown", func(t *testing.T) {
		_, err := open(globex, store, `{"type":"code_interpreter","container":"`+first.ID+`"}`)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "tools[0].container" || !errors.Is(err, containers.ErrContainerNotFound) {
			t.Fatalf("err = %v", err)
		}
		// Running in it directly is refused the same way, and the code
		// does not run.
		plan, err := NewContainerPlan(first.ID, "call_x", `{"code":"total = -1"}`)
		if err != nil {
			t.Fatal(err)
		}
		o := RunInContainer(globex, store, plan, 0)
		if o.Kind != ContainerNotFound || plan.Item(o).Status != StatusFailed || strings.Contains(o.FunctionOutput(), "return_code") {
			t.Fatalf("%s\n%s", o.Kind, o.FunctionOutput())
		}
		// Its files are its tenant's: another's file id is unknown.
		_, err = open(globex, store, `{"type":"code_interpreter","container":{"type":"auto","file_ids":["file-data"]}}`)
		if !errors.As(err, &ve) || ve.Field != "tools[0].container.file_ids" || !errors.Is(err, containers.ErrFileNotFound) {
			t.Fatalf("another tenant's file: %v", err)
		}
		if _, o := run(t, acme, first, "print(total)"); o.Stdout != "7\n" {
			t.Errorf("the other tenant changed the state: %s", o.FunctionOutput())
		}
	})

	t.Run("an unused auto container is released", func(t *testing.T) {
		c, err := open(acme, store, `{"type":"code_interpreter","container":{"type":"auto"}}`)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Release(acme); err != nil {
			t.Fatal(err)
		}
		if _, err := store.Get(acme, c.ID); !errors.Is(err, containers.ErrContainerNotFound) {
			t.Errorf("still there: %v", err)
		}
		if err := c.Release(acme); err != nil {
			t.Errorf("second Release: %v", err)
		}
	})

	t.Run("an unknown id", func(t *testing.T) {
		_, err := open(acme, store, `{"type":"code_interpreter","container":"`+containerID+`"}`)
		if !errors.Is(err, containers.ErrContainerNotFound) || !strings.HasPrefix(err.Error(), "tools[0].container: no container") {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("expired containers are gone", func(t *testing.T) {
		c, err := open(acme, store, `{"type":"code_interpreter","execution":"gateway","container":{"type":"auto"}}`)
		if err != nil {
			t.Fatal(err)
		}
		plan, o := run(t, acme, c, "y = 5")
		if o.Kind != Success {
			t.Fatalf("%s\n%s", o.Kind, o.FunctionOutput())
		}
		clk.Advance(20*time.Minute + time.Second)
		o = c.Run(acme, plan, 0)
		if o.Kind != ContainerNotFound || !strings.Contains(o.FunctionOutput(), "note: The container is gone") {
			t.Fatalf("%s\n%s", o.Kind, o.FunctionOutput())
		}
		for _, id := range []string{c.ID, first.ID} {
			if _, err := open(acme, store, `{"type":"code_interpreter","container":"`+id+`"}`); !errors.Is(err, containers.ErrContainerNotFound) {
				t.Errorf("%s after its expiry: %v", id, err)
			}
		}
	})
}

// A call's produced image is in its item, its bytes read from the
// container.
func TestRunInContainerImage(t *testing.T) {
	p := wasmtest.New(t, nil)
	store := containers.New(p)
	t.Cleanup(func() { _ = store.Close() })
	ctx, cancel := testwait.Context(t)
	defer cancel()
	c, err := OpenContainer(ctx, store, ContainerChoice{Mode: ContainerAuto, Field: "tools[0].container"})
	if err != nil {
		t.Fatal(err)
	}
	png := "\x89PNG\r\n\x1a\n"
	_, o := run(t, ctx, c, fmt.Sprintf("open('chart.png', 'wb').write(%q.encode('latin-1'))", png))
	if o.Kind != Success || len(o.Files) != 1 || !bytes.Equal(o.Files[0].Data, []byte(png)) || o.Files[0].MimeType != "image/png" {
		t.Fatalf("%s %+v\n%s", o.Kind, o.Files, o.FunctionOutput())
	}
}

func TestOpenContainerMisuse(t *testing.T) {
	if _, err := OpenContainer(context.Background(), nil, ContainerChoice{Mode: ContainerAuto}); err == nil {
		t.Error("nil store accepted")
	}
	s := containers.New(nil)
	defer s.Close()
	if _, err := OpenContainer(context.Background(), s, ContainerChoice{}); err == nil || !strings.Contains(err.Error(), "RunCall") {
		t.Errorf("fresh choice: %v", err)
	}
	plan, _ := NewPlan("call_1", `{"code":"x"}`)
	if o := RunInContainer(context.Background(), nil, plan, 0); o.Kind != RuntimeFailure {
		t.Errorf("nil store: %+v", o)
	}
	if o := RunInContainer(context.Background(), s, plan, 0); o.Kind != ContainerNotFound {
		t.Errorf("a cntr_gw_ id: %+v", o)
	}
	var zero Container
	if o := zero.Run(context.Background(), Plan{Code: "x"}, 0); o.Kind != RuntimeFailure {
		t.Errorf("a Container not made by OpenContainer: %+v", o)
	}
}

// longCall is a container with a call that runs until stop cancels it
// (as long as the test needs, not for a time a loaded machine may
// exceed), started through start (RunInContainer, or Container.Run);
// done gives its outcome.
type longCall struct {
	ctx   context.Context
	store *containers.Store
	c     *Container
	plan  Plan
	stop  context.CancelFunc
	done  chan Outcome
}

func startLongCall(t *testing.T, start func(ctx context.Context, lc *longCall, timeout time.Duration) Outcome) *longCall {
	t.Helper()
	p := wasmtest.New(t, nil)
	store := containers.New(p)
	t.Cleanup(func() { _ = store.Close() })
	ctx, cancel := testwait.Context(t)
	t.Cleanup(cancel)
	caps, err := p.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := OpenContainer(ctx, store, ContainerChoice{Mode: ContainerAuto, Field: "tools[0].container"})
	if err != nil {
		t.Fatal(err)
	}
	lc := &longCall{ctx: ctx, store: store, c: c, plan: containerPlan(t, c, "import time\ntime.sleep(100000)"), done: make(chan Outcome, 1)}
	longCtx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	lc.stop = stop
	go func() {
		// The test's prober may hold the container for a moment: retry
		// until the long call itself is admitted.
		for {
			o := start(longCtx, lc, caps.Limits.MaxTimeout)
			if o.Kind != ContainerBusy || longCtx.Err() != nil {
				lc.done <- o
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return lc
}

// Calls in one container that overlap (two responses naming it at once)
// are not queued: the second is ContainerBusy and does not run. A call
// whose context is cancelled is Cancelled.
func TestRunInContainerBusy(t *testing.T) {
	lc := startLongCall(t, func(ctx context.Context, lc *longCall, timeout time.Duration) Outcome {
		return RunInContainer(ctx, lc.store, lc.plan, timeout)
	})
	var busy Outcome
	testwait.For(t, "a second call refused as busy", func() bool {
		busy = RunInContainer(lc.ctx, lc.store, containerPlan(t, lc.c, "marker = 1"), 0)
		return busy.Kind == ContainerBusy
	})
	if item := lc.plan.Item(busy); item.Status != StatusFailed || !strings.Contains(busy.FunctionOutput(), "note: Another call is running in this container") || strings.Contains(busy.FunctionOutput(), "return_code") {
		t.Fatalf("busy: %+v\n%s", item, busy.FunctionOutput())
	}
	lc.stop()
	if o := <-lc.done; o.Kind != Cancelled {
		t.Fatalf("cancelled call: %s\n%s", o.Kind, o.FunctionOutput())
	}
}

// A call of a response waits for the call running in its container only
// while its own context lasts: cancelled meanwhile, it ends at once,
// Cancelled, and does not run.
func TestContainerRunWaitsOnlyWhileItsContextLasts(t *testing.T) {
	lc := startLongCall(t, func(ctx context.Context, lc *longCall, timeout time.Duration) Outcome {
		return lc.c.Run(ctx, lc.plan, timeout)
	})
	ctx, c := lc.ctx, lc.c
	testwait.For(t, "the long call to hold the container", func() bool {
		return RunInContainer(ctx, lc.store, containerPlan(t, c, "pass"), 0).Kind == ContainerBusy
	})

	waitCtx, give := context.WithCancel(ctx)
	waiting := make(chan Outcome, 1)
	marker := containerPlan(t, c, "marker = 1")
	go func() { waiting <- c.Run(waitCtx, marker, 0) }()
	give()
	// It did not touch the container's state, and does not say it did.
	if o := testwait.Receive(t, waiting, "the outcome of the call cancelled while it waited"); o.Kind != Cancelled || o.StateLost || strings.Contains(o.FunctionOutput(), "state was lost") {
		t.Errorf("cancelled while waiting: %s, state lost %v\n%s", o.Kind, o.StateLost, o.FunctionOutput())
	}
	lc.stop()
	if o := testwait.Receive(t, lc.done, "the long call's outcome"); o.Kind != Cancelled {
		t.Fatalf("long call: %s\n%s", o.Kind, o.FunctionOutput())
	}
	if _, o := run(t, ctx, c, "print('marker' in globals())"); o.Stdout != "False\n" {
		t.Errorf("the cancelled call ran: %s", o.FunctionOutput())
	}
}
