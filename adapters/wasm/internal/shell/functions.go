package shell

import (
	"reflect"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// runnerOf is the interpreter's Runner where the command of hc runs (a
// subshell's own copy in a subshell), or nil when this version of the
// interpreter keeps it elsewhere (TestTypeKnowsFunctions and TestTrap
// fail then). mvdan.cc/sh's own type and trap builtins read their Runner;
// ours (cmdType, which knows the commands this shell provides, and
// cmdTrap, which prints the traps set) replace them and need the same
// answers, but a HandlerContext keeps its Runner in an unexported field.
// Reads of it are on the goroutine running the command, as the builtins'
// own would be.
func runnerOf(hc interp.HandlerContext) *interp.Runner {
	f := reflect.ValueOf(hc).FieldByName("runner")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*interp.Runner]() || f.IsNil() {
		return nil
	}
	return (*interp.Runner)(f.UnsafePointer())
}

// functions is the interpreter's functions where the command of hc runs,
// or nil (see runnerOf).
func functions(hc interp.HandlerContext) map[string]*syntax.Stmt {
	if r := runnerOf(hc); r != nil {
		return r.Funcs
	}
	return nil
}
