package wasm

import (
	"fmt"
	"strings"

	"github.com/codeport/codeport/adapters/wasm/internal/cpython"
	"github.com/codeport/codeport/adapters/wasm/internal/cpython/scientific"
)

// Profiles names the runtimes the Profile setting can choose, the default
// first. Each is the same CPython build; they differ in what is linked in.
func Profiles() []string {
	return []string{cpython.DefaultProfile, scientific.Profile}
}

// runtime is the build the settings' profile names.
func (s Settings) runtime() (cpython.Runtime, error) {
	switch s.Profile {
	case "", cpython.DefaultProfile:
		return cpython.Default(), nil
	case scientific.Profile:
		return scientific.Runtime(), nil
	}
	return cpython.Runtime{}, fmt.Errorf("profile: %q is not a runtime profile (known: %s)", s.Profile, strings.Join(Profiles(), ", "))
}
