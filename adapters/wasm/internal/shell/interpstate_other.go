//go:build !codeport_interp

package shell

import "mvdan.cc/sh/v3/interp"

// backgroundJobs and exitTrapSet cannot see the state of an unmodified
// interpreter (see interpstate_guest.go): backgroundJobs is -1, unknown,
// so that every run waits for background jobs, and every run clears the
// EXIT trap.
func backgroundJobs(*interp.Runner) int { return -1 }

func exitTrapSet(*interp.Runner) bool { return true }
