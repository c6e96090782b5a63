package shell

import (
	"math"
	"strconv"
	"strings"
	"time"
)

func cmdSleep(c *call) int {
	if len(c.args) == 0 {
		c.errorf("missing operand")
		return 1
	}
	var total time.Duration
	for _, a := range c.args {
		d, ok := parseSleep(a)
		if !ok {
			c.errorf("invalid time interval '%s'", a)
			return 1
		}
		total += d
		if total < 0 || d == math.MaxInt64 {
			total = math.MaxInt64
		}
	}
	t := time.NewTimer(total)
	defer t.Stop()
	select {
	case <-t.C:
		return 0
	case <-c.ctx.Done():
		return 1
	}
}

func parseSleep(s string) (time.Duration, bool) {
	if s == "inf" || s == "infinity" {
		return math.MaxInt64, true
	}
	unit := time.Second
	switch {
	case strings.HasSuffix(s, "s"):
		s = s[:len(s)-1]
	case strings.HasSuffix(s, "m"):
		s, unit = s[:len(s)-1], time.Minute
	case strings.HasSuffix(s, "h"):
		s, unit = s[:len(s)-1], time.Hour
	case strings.HasSuffix(s, "d"):
		s, unit = s[:len(s)-1], 24*time.Hour
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || math.IsNaN(f) {
		return 0, false
	}
	if f*float64(unit) >= math.MaxInt64 {
		return math.MaxInt64, true
	}
	return time.Duration(f * float64(unit)), true
}
