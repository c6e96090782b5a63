package shell

import (
	"reflect"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// functions is the interpreter's functions where the command of hc runs
// (a subshell's own copy in a subshell), or nil when this version of the
// interpreter keeps them elsewhere (TestTypeKnowsFunctions fails then).
// mvdan.cc/sh's own type builtin reads them from its Runner; ours
// (cmdType, which knows the commands this shell provides) replaces it
// and needs the same answer, but a HandlerContext keeps its Runner in an
// unexported field. The read is on the goroutine running the command,
// as the builtin's own would be.
func functions(hc interp.HandlerContext) map[string]*syntax.Stmt {
	f := reflect.ValueOf(hc).FieldByName("runner")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*interp.Runner]() || f.IsNil() {
		return nil
	}
	return (*interp.Runner)(f.UnsafePointer()).Funcs
}
