package cpython

import (
	"slices"
	"sync"
)

// Runtimes other than the default are linked into a program only when it
// asks for them: the scientific module alone is tens of megabytes, which a
// gateway that never runs numpy should not carry. A profile's public
// package registers its runtime from init, as database/sql drivers do, so
// that one blank import adds it. This registry is written only by those
// init functions and read afterwards; the lock keeps a late Register (a
// program calling it itself) safe.
var registry struct {
	sync.RWMutex
	loads map[string]func() Runtime
}

// Register makes profile's runtime available to Lookup. load is called
// each time a runtime of the profile is needed. It panics if profile is
// the default, empty, or already registered: two packages claiming one
// name is a build mistake, not a condition to handle at run time.
func Register(profile string, load func() Runtime) {
	registry.Lock()
	defer registry.Unlock()
	if profile == "" || profile == DefaultProfile || load == nil {
		panic("cpython: Register of an invalid profile " + profile)
	}
	if _, dup := registry.loads[profile]; dup {
		panic("cpython: Register called twice for profile " + profile)
	}
	if registry.loads == nil {
		registry.loads = map[string]func() Runtime{}
	}
	registry.loads[profile] = load
}

// Lookup returns the runtime of profile: the default for "" or
// DefaultProfile, otherwise a registered one.
func Lookup(profile string) (Runtime, bool) {
	if profile == "" || profile == DefaultProfile {
		return Default(), true
	}
	registry.RLock()
	load, ok := registry.loads[profile]
	registry.RUnlock()
	if !ok {
		return Runtime{}, false
	}
	return load(), true
}

// Profiles names the runtimes Lookup finds: the default first, then the
// registered ones in order of name.
func Profiles() []string {
	registry.RLock()
	names := make([]string, 0, len(registry.loads))
	for name := range registry.loads {
		names = append(names, name)
	}
	registry.RUnlock()
	slices.Sort(names)
	return append([]string{DefaultProfile}, names...)
}
