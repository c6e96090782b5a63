package shell

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Signals timeout accepts (it runs commands in-process: a "signal" ends
// the command at its next step, whichever is named).
var timeoutSignals = map[string]int{
	"HUP": 1, "INT": 2, "QUIT": 3, "KILL": 9, "USR1": 10, "USR2": 12, "PIPE": 13,
	"ALRM": 14, "TERM": 15, "CONT": 18, "STOP": 19,
}

func timeoutSignal(s string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, n >= 0 && n < 65
	}
	n, ok := timeoutSignals[strings.TrimPrefix(strings.ToUpper(s), "SIG")]
	return n, ok
}

// parseTimeout parses a DURATION of timeout: a number with an optional
// unit s, m, h or d.
func parseTimeout(s string) (time.Duration, bool) {
	unit := time.Second
	if s != "" {
		switch s[len(s)-1] {
		case 's':
			s = s[:len(s)-1]
		case 'm':
			s, unit = s[:len(s)-1], time.Minute
		case 'h':
			s, unit = s[:len(s)-1], time.Hour
		case 'd':
			s, unit = s[:len(s)-1], 24*time.Hour
		}
	}
	if s == "" || strings.ContainsAny(s, "xXpPnN_ \t") {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || math.IsNaN(f) {
		return 0, false
	}
	if f*float64(unit) >= math.MaxInt64 {
		return math.MaxInt64, true
	}
	d := time.Duration(f * float64(unit))
	if d == 0 && f > 0 {
		d = 1
	}
	return d, true
}

func cmdTimeout(c *call) int {
	usage := func() int {
		fmt.Fprintf(c.stderr, "Try 'timeout --help' for more information.\n")
		return 125
	}
	args := c.args
	signal, sigName := 15, "TERM"
	preserve, verbose := false, false
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' {
			break
		}
		var val string
		var opt byte
		switch {
		case a == "--preserve-status":
			preserve = true
			continue
		case a == "--foreground":
			continue
		case a == "-v" || a == "--verbose":
			verbose = true
			continue
		case a == "-s" || a == "--signal" || a == "-k" || a == "--kill-after":
			if i+1 >= len(args) {
				if strings.HasPrefix(a, "--") {
					c.errorf("option '%s' requires an argument", a)
				} else {
					c.errorf("option requires an argument -- '%c'", a[1])
				}
				return usage()
			}
			opt = a[len(a)-1]
			if a == "--signal" {
				opt = 's'
			} else if a == "--kill-after" {
				opt = 'k'
			}
			i++
			val = args[i]
		case strings.HasPrefix(a, "--signal="):
			opt, val = 's', a[len("--signal="):]
		case strings.HasPrefix(a, "--kill-after="):
			opt, val = 'k', a[len("--kill-after="):]
		case strings.HasPrefix(a, "-s") || strings.HasPrefix(a, "-k"):
			opt, val = a[1], a[2:]
		case strings.HasPrefix(a, "--"):
			c.errorf("unrecognized option '%s'", a)
			return usage()
		default:
			c.errorf("invalid option -- '%c'", a[1])
			return usage()
		}
		if opt == 's' {
			n, ok := timeoutSignal(val)
			if !ok {
				c.errorf("'%s': invalid signal", val)
				return usage()
			}
			signal, sigName = n, strings.TrimPrefix(strings.ToUpper(val), "SIG")
			if _, err := strconv.Atoi(val); err == nil {
				sigName = val
			}
		} else if _, ok := parseTimeout(val); !ok {
			c.errorf("invalid time interval '%s'", val)
			return usage()
		}
	}
	rest := args[i:]
	if len(rest) < 2 {
		return usage() // GNU says no more for a missing command
	}
	d, ok := parseTimeout(rest[0])
	if !ok {
		c.errorf("invalid time interval '%s'", rest[0])
		return usage()
	}
	argv := rest[1:]
	ctx, cancel := c.ctx, context.CancelFunc(func() {})
	if d > 0 && d < math.MaxInt64 {
		ctx, cancel = context.WithTimeout(c.ctx, d)
	}
	defer cancel()
	in := c.rawIn
	if in == nil {
		in = strings.NewReader("")
	}
	code, found := c.runCommand(ctx, argv, in)
	if !found {
		c.errorf("failed to run command '%s': No such file or directory", argv[0])
		return 127
	}
	if c.stopped() || ctx.Err() == nil {
		return code
	}
	if verbose {
		c.errorf("sending signal %s to command '%s'", sigName, argv[0])
	}
	switch {
	case preserve || signal == 9:
		return 128 + signal
	}
	return 124
}
