//go:build codeport_interp

package shell

import "mvdan.cc/sh/v3/interp"

// backgroundJobs and exitTrapSet read the runner's state through the
// accessors that build.sh adds to the guest's copy of the interpreter
// (see wasmshell/runtime/interp_wasip1.go.in), with the build tag
// codeport_interp.
func backgroundJobs(r *interp.Runner) int { return interp.BackgroundJobs(r) }

func exitTrapSet(r *interp.Runner) bool { return interp.ExitTrapSet(r) }
