package wasm

import (
	"fmt"
	"strings"

	"github.com/codeport/codeport/adapters/wasm/internal/cpython"
)

// Profiles names the runtimes the Profile setting can choose in this
// program, the default first. Each is the same CPython build; they differ
// in what is linked in. A profile other than the default is there when its
// package is imported (see optionalProfiles).
func Profiles() []string { return cpython.Profiles() }

// optionalProfiles are the profiles this module provides, each with the
// package a program imports to link it in.
func optionalProfiles() map[string]string {
	return map[string]string{"scientific": "github.com/codeport/codeport/adapters/wasm/scientific"}
}

// runtime is the build the settings' profile names.
func (s Settings) runtime() (cpython.Runtime, error) {
	if py, ok := cpython.Lookup(s.Profile); ok {
		return py, nil
	}
	if pkg, ok := optionalProfiles()[s.Profile]; ok {
		return cpython.Runtime{}, fmt.Errorf("profile: %q is not linked into this program: it needs import _ %q", s.Profile, pkg)
	}
	return cpython.Runtime{}, fmt.Errorf("profile: %q is not a runtime profile (known: %s)", s.Profile, strings.Join(Profiles(), ", "))
}
