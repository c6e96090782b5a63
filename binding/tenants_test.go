package binding_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codeport/codeport/binding"
)

const digestHex = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

func loadYAMLText(t *testing.T, text string) (binding.Config, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "codeport.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return binder(t).Load(nil, env(map[string]string{"CODEPORT_CONFIG": p}))
}

func TestTenantsSection(t *testing.T) {
	cfg, err := loadYAMLText(t, `listen: 127.0.0.1:9000
tenants:
  - name: acme
    keys:
      - sha256: `+digestHex+`
      - file: /run/secrets/acme.key
    max_sessions: 8
    executions_per_second: 2.5
    burst: 10
  - name: globex
    keys: [{file: globex.key}]
max_sessions: 16
`)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:9000" || wasmSettings(t, cfg).MaxSessions != 16 {
		t.Fatalf("the settings around the section were lost: %q %d", cfg.Listen, wasmSettings(t, cfg).MaxSessions)
	}
	if len(cfg.Tenants) != 2 {
		t.Fatalf("%d tenants", len(cfg.Tenants))
	}
	a, g := cfg.Tenants[0], cfg.Tenants[1]
	if a.Name != "acme" || a.MaxSessions != 8 || a.ExecutionsPerSecond != 2.5 || a.Burst != 10 || len(a.Keys) != 2 {
		t.Fatalf("acme: %+v", a)
	}
	if len(a.Keys[0].SHA256) != 32 || a.Keys[0].File != "" || a.Keys[1].File != "/run/secrets/acme.key" || a.Keys[1].SHA256 != nil {
		t.Fatalf("acme's keys: %+v", a.Keys)
	}
	if a.Line != 3 || a.Keys[1].Line != 6 {
		t.Errorf("lines %d %d", a.Line, a.Keys[1].Line)
	}
	if g.Name != "globex" || g.MaxSessions != 0 || g.ExecutionsPerSecond != 0 || g.Keys[0].File != "globex.key" {
		t.Fatalf("globex: %+v", g)
	}
	// An integer rate is a rate.
	cfg, err = loadYAMLText(t, "tenants:\n  - name: a\n    keys: [{file: k}]\n    executions_per_second: 3\n")
	if err != nil || cfg.Tenants[0].ExecutionsPerSecond != 3 {
		t.Fatalf("%v %+v", err, cfg.Tenants)
	}
	// No section, or an empty one: no tenants.
	for _, text := range []string{"listen: 127.0.0.1:1\n", "tenants:\n", "tenants: []\n"} {
		if cfg, err := loadYAMLText(t, text); err != nil || len(cfg.Tenants) != 0 {
			t.Errorf("%q: %v %+v", text, err, cfg.Tenants)
		}
	}
}

// The section is read strictly: every mistake is an error naming its line.
func TestTenantsSectionRefusesMistakes(t *testing.T) {
	key := "    keys: [{file: k}]\n"
	cases := []struct{ name, text, want string }{
		{"not a list", "tenants: {name: a}\n", "line 1: tenants: want a list"},
		{"entry not a mapping", "tenants:\n  - acme\n", "want a mapping"},
		{"unknown key", "tenants:\n  - name: a\n" + key + "    max_session: 3\n", `line 4: tenant at line 2: max_session: unknown key`},
		{"repeated key", "tenants:\n  - name: a\n    name: b\n" + key, `mapping key "name" already defined`},
		{"fraction", "tenants:\n  - name: a\n" + key + "    max_sessions: 1.5\n", `"1.5" is not a whole number`},
		{"quoted number", "tenants:\n  - name: a\n" + key + "    burst: \"3\"\n", `"3" is not a whole number`},
		{"rate not a number", "tenants:\n  - name: a\n" + key + "    executions_per_second: fast\n", `"fast" is not a number`},
		{"name not a string", "tenants:\n  - name: 12\n" + key, `"12" is not a string`},
		{"no keys", "tenants:\n  - name: a\n", "give at least one key"},
		{"keys not a list", "tenants:\n  - name: a\n    keys: {file: k}\n", "want a list of keys"},
		{"both", "tenants:\n  - name: a\n    keys: [{file: k, sha256: " + digestHex + "}]\n", "exactly one of sha256 and file"},
		{"neither", "tenants:\n  - name: a\n    keys: [{}]\n", "exactly one of sha256 and file"},
		{"short digest", "tenants:\n  - name: a\n    keys: [{sha256: abcd}]\n", "64 hexadecimal digits"},
		{"not hex", "tenants:\n  - name: a\n    keys: [{sha256: " + strings.Repeat("g", 64) + "}]\n", "64 hexadecimal digits"},
		{"unknown key field", "tenants:\n  - name: a\n    keys: [{path: k}]\n", "unknown key (known: sha256, file)"},
		{"section twice", "tenants: []\ntenants: []\n", `"tenants" already defined`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadYAMLText(t, c.text)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, c.want)
			}
		})
	}
	// Every entry's mistakes are reported together.
	_, err := loadYAMLText(t, "tenants:\n  - name: a\n    bogus: 1\n  - name: b\n    keys: [{}]\n")
	if err == nil || !strings.Contains(err.Error(), "bogus") || !strings.Contains(err.Error(), "exactly one") {
		t.Fatalf("%v", err)
	}
}
