package responses

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/codeport/codeport/port"
)

func raws(ss ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(ss))
	for i, s := range ss {
		out[i] = json.RawMessage(s)
	}
	return out
}

const decl = `{"type":"code_interpreter","execution":"gateway"}`

func TestValidateToolsErrors(t *testing.T) {
	fn := `{"type":"function","name":"lookup","parameters":{}}`
	cases := []struct {
		name     string
		tools    []json.RawMessage
		disabled bool
		field    string
		msg      string
	}{
		{"disabled", raws(fn, decl), true, "tools[1]", "disabled by configuration"},
		{"container id", raws(fn, `{"type":"code_interpreter","execution":"gateway","container":"cntr_abc"}`), false, "tools[1].container", "cannot be supplied"},
		{"container config", raws(`{"type":"code_interpreter","execution":"gateway","container":{"type":"auto"}}`), false, "tools[0].container", "cannot be supplied"},
		{"unknown field", raws(`{"type":"code_interpreter","execution":"gateway","file_ids":[]}`), false, "tools[0].file_ids", "unknown field"},
		{"missing execution", raws(`{"type":"code_interpreter"}`), false, "tools[0].execution", `only "gateway" is accepted`},
		{"other execution", raws(`{"type":"code_interpreter","execution":"hosted"}`), false, "tools[0].execution", `"hosted" is not accepted: only "gateway" is accepted`},
		{"two declarations", raws(decl, fn, decl), false, "tools[2]", "only one code_interpreter"},
		{"collision", raws(decl, `{"type":"function","name":"code_interpreter","parameters":{}}`), false, "tools[1].name", "may not be named code_interpreter"},
		{"collision chat shape", raws(`{"type":"function","function":{"name":"code_interpreter"}}`, decl), false, "tools[0].function.name", "may not be named code_interpreter"},
		{"collision custom tool", raws(decl, `{"type":"custom","name":"code_interpreter"}`), false, "tools[1].name", "may not be named code_interpreter"},
		{"collision chat custom shape", raws(`{"type":"custom","custom":{"name":"code_interpreter"}}`, decl), false, "tools[0].custom.name", "may not be named code_interpreter"},
		{"not an object", raws(`{"type":"code_interpreter","execution":"gateway"`), false, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := ValidateTools(c.tools, Options{Enabled: !c.disabled})
			if c.field == "" {
				// Unparseable: not recognised as a declaration, passed through.
				if err != nil || len(out) != 1 {
					t.Fatalf("got %v, %v", out, err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want *ValidationError", err)
			}
			if ve.Field != c.field {
				t.Errorf("Field = %q, want %q", ve.Field, c.field)
			}
			if !strings.HasPrefix(err.Error(), c.field+": ") || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("Error() = %q, want field %q and %q", err.Error(), c.field, c.msg)
			}
			if out != nil {
				t.Errorf("tools returned with an error: %s", out)
			}
		})
	}
}

func TestValidateToolsNormalises(t *testing.T) {
	fn := `{"type":"function", "name":"lookup","parameters":{}}`
	web := `{"type":"web_search"}`
	caps := port.Capabilities{Runtime: "CPython", RuntimeVersion: "3.12.0", UnavailableModules: []string{"ssl"}}
	in := raws(fn, decl, web)
	out, err := ValidateTools(in, Options{Enabled: true, Capabilities: caps})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 || string(out[0]) != fn || string(out[2]) != web {
		t.Fatalf("other tools changed: %s", out)
	}
	if string(in[1]) != decl {
		t.Error("input slice was modified")
	}
	var got map[string]any
	if err := json.Unmarshal(out[1], &got); err != nil {
		t.Fatal(err)
	}
	desc := Description(caps)
	want := map[string]any{
		"type": "function", "name": "code_interpreter", "description": desc, "strict": true,
		"parameters": map[string]any{
			"type": "object",
			"properties": map[string]any{"code": map[string]any{
				"type": "string", "description": "The Python program to run. It starts with fresh state; print every result you need.",
			}},
			"required":             []any{"code"},
			"additionalProperties": false,
		},
	}
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Errorf("function tool\n got %s\nwant %s", g, w)
	}
	for _, s := range []string{"CPython 3.12.0", "print", "fresh Python state", "ssl", "standard library", "no network"} {
		if !strings.Contains(strings.ToLower(desc), strings.ToLower(s)) {
			t.Errorf("description lacks %q: %s", s, desc)
		}
	}
	if strings.Contains(desc, "persist") {
		t.Errorf("description promises persistence: %s", desc)
	}

	out, err = ValidateTools(raws(decl), Options{Enabled: true, Description: "custom text"})
	if err != nil || !strings.Contains(string(out[0]), `"description":"custom text"`) {
		t.Errorf("Description override: %s, %v", out, err)
	}
	// No declaration: unchanged, even when disabled or with a function named code_interpreter.
	plain := raws(`{"type":"function","name":"code_interpreter"}`)
	if out, err := ValidateTools(plain, Options{}); err != nil || string(out[0]) != string(plain[0]) {
		t.Errorf("no declaration: %s, %v", out, err)
	}
}

func TestDescriptionPackages(t *testing.T) {
	d := Description(port.Capabilities{Packages: []port.Package{{Name: "numpy", Version: "2.0"}}, Network: true})
	if !strings.Contains(d, "numpy 2.0") || strings.Contains(d, "no network") {
		t.Error(d)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
