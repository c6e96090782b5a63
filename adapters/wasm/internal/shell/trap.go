package shell

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/interp"
)

// The interpreter's trap knows EXIT and ERR only, refuses every signal
// ("invalid signal specification", status 2), and does not implement -p.
// A signal never reaches this shell (a call's deadline stops the guest; no
// process sends it one), so a trap on one would never run: trapArgs drops
// signals from a trap command, so that the common
//
//	trap cleanup INT TERM EXIT
//
// sets its EXIT trap instead of failing before it, and cmdTrap prints the
// traps set, as bash does, for trap -p and a bare trap.

// signalNames are the signals bash's trap accepts by name (without SIG,
// upper case); numbers 1 to 64 are accepted too.
var signalNames = map[string]bool{
	"HUP": true, "INT": true, "QUIT": true, "ILL": true, "TRAP": true, "ABRT": true, "IOT": true,
	"BUS": true, "FPE": true, "KILL": true, "USR1": true, "SEGV": true, "USR2": true, "PIPE": true,
	"ALRM": true, "TERM": true, "STKFLT": true, "CHLD": true, "CONT": true, "STOP": true, "TSTP": true,
	"TTIN": true, "TTOU": true, "URG": true, "XCPU": true, "XFSZ": true, "VTALRM": true, "PROF": true,
	"WINCH": true, "IO": true, "POLL": true, "PWR": true, "SYS": true,
}

// isSignal reports whether spec names a signal (not EXIT or ERR), as
// bash's trap reads it: a name with or without SIG in any case, or a
// number from 1 to 64.
func isSignal(spec string) bool {
	if n, err := strconv.Atoi(spec); err == nil {
		return n >= 1 && n <= 64
	}
	name := strings.ToUpper(spec)
	return signalNames[strings.TrimPrefix(name, "SIG")]
}

// trapSpec is spec as the interpreter's trap takes it: EXIT for bash's
// other names of it (0, SIGEXIT, any case), ERR for ERR's; otherwise spec.
func trapSpec(spec string) string {
	switch strings.TrimPrefix(strings.ToUpper(spec), "SIG") {
	case "0", "EXIT":
		return "EXIT"
	case "ERR":
		return "ERR"
	}
	return spec
}

// trapArgs rewrites a trap command (args[0] is "trap") for the
// interpreter: printing (-p, or no operand) goes to cmdTrap, signals are
// dropped, and when only signals were named the command does nothing.
func trapArgs(args []string) []string {
	ops := args[1:]
	if len(ops) > 0 && ops[0] == "--" {
		ops = ops[1:]
	} else if len(ops) > 0 && strings.HasPrefix(ops[0], "-") && len(ops[0]) > 1 {
		if strings.Trim(ops[0][1:], "p") == "" {
			return divert(args)
		}
		return args // -l and the rest: the interpreter's answer
	}
	if len(ops) == 0 {
		return divert(args)
	}
	action, specs := ops[:1], ops[1:]
	if len(ops) == 1 {
		action, specs = nil, ops // trap SPEC: reset it
	}
	kept := []string{"trap", "--"}
	kept = append(kept, action...)
	named := 0
	for _, s := range specs {
		if isSignal(s) {
			continue
		}
		kept = append(kept, trapSpec(s))
		named++
	}
	if named == 0 && len(specs) > 0 {
		return []string{"builtin", ":"}
	}
	return kept
}

// cmdTrap prints the traps set (-p SPEC: those named) as commands that set
// them again, as bash's trap -p does.
func cmdTrap(c *call) int {
	c.name = "bash: trap"
	specs := c.args
	if len(specs) > 0 && strings.HasPrefix(specs[0], "-") {
		specs = specs[1:]
	}
	exit, errTrap := traps(interp.HandlerCtx(c.ctx))
	set := map[string]string{"EXIT": exit, "ERR": errTrap}
	if len(specs) == 0 {
		specs = []string{"EXIT", "ERR"}
	}
	status := 0
	for _, s := range specs {
		name := trapSpec(s)
		switch {
		case set[name] != "":
			fmt.Fprintf(c.stdout, "trap -- %s %s\n", singleQuote(set[name]), name)
		case name != "EXIT" && name != "ERR" && !isSignal(s):
			c.errorf("%s: invalid signal specification", s)
			status = 1
		}
	}
	return status
}

// traps is the action of the EXIT and of the ERR trap where the command
// of hc runs ("" when none), read from the interpreter's Runner's
// unexported fields (see runnerOf).
func traps(hc interp.HandlerContext) (exit, errTrap string) {
	runner := runnerOf(hc)
	if runner == nil {
		return "", ""
	}
	r := reflect.ValueOf(runner).Elem()
	read := func(name string) string {
		if v := r.FieldByName(name); v.IsValid() && v.Kind() == reflect.String {
			return v.String()
		}
		return ""
	}
	return read("callbackExit"), read("callbackErr")
}

// singleQuote quotes s for the shell as bash's trap -p does: in single
// quotes, a single quote as '\”.
func singleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
