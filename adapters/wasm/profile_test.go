package wasm

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	// The tests run the scientific profile too.
	_ "github.com/codeport/codeport/adapters/wasm/scientific"
)

// A profile is chosen by name; a name that is not a profile, or one whose
// package this program does not import, is refused with what to do.
func TestProfilesAreChosenByName(t *testing.T) {
	if got := Profiles(); !slices.Equal(got, []string{"default", "scientific"}) {
		t.Errorf("Profiles() = %v", got)
	}
	for _, name := range []string{"", "default", "scientific"} {
		if _, err := NewConfig().WithProfile(name).Settings().runtime(); err != nil {
			t.Errorf("profile %q: %v", name, err)
		}
	}
	err := NewConfig().WithProfile("Scientific").Settings().Validate()
	if err == nil || !strings.Contains(err.Error(), `"Scientific" is not a runtime profile (known: default, scientific)`) {
		t.Errorf("an unknown profile: %v", err)
	}
}

// TestProfilesAreOptIn: a program that imports only the adapter links the
// default runtime alone, offers only it, and refuses the scientific
// profile with the import that adds it; the CLI links both.
func TestProfilesAreOptIn(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to build the program")
	}
	const sci = "github.com/codeport/codeport/adapters/wasm/internal/cpython/scientific"
	for _, c := range []struct {
		pkg  string
		want bool
	}{{"./testdata/defaultonly", false}, {"../../cmd/codeport", true}} {
		out, err := exec.Command(goBin, "list", "-deps", c.pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		if got := slices.Contains(strings.Fields(string(out)), sci); got != c.want {
			t.Errorf("%s links the scientific runtime: %v, want %v", c.pkg, got, c.want)
		}
	}
	bin := filepath.Join(t.TempDir(), "defaultonly")
	if out, err := exec.Command(goBin, "build", "-o", bin, "./testdata/defaultonly").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	want := "[default]\nwasm adapter settings: profile: \"scientific\" is not linked into this program: it needs import _ \"github.com/codeport/codeport/adapters/wasm/scientific\"\n"
	if err == nil || string(out) != want {
		t.Errorf("defaultonly: %v\n%s\nwant\n%s", err, out, want)
	}
}
