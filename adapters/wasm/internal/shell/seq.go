package shell

import (
	"fmt"
	"strconv"
	"strings"
)

func cmdSeq(c *call) int {
	sep, width := "\n", false
	userFormat, hasFormat := "", false
	var nums []string
	args := c.args
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-s" && i+1 < len(args):
			i++
			sep = args[i]
		case strings.HasPrefix(a, "-s") && len(a) > 2 && !isNumber(a):
			sep = a[2:]
		case a == "-w" || a == "--equal-width":
			width = true
		case (a == "-f" || a == "--format") && i+1 < len(args):
			i++
			userFormat, hasFormat = args[i], true
		case strings.HasPrefix(a, "-f") && len(a) > 2:
			userFormat, hasFormat = a[2:], true
		case strings.HasPrefix(a, "--format="):
			userFormat, hasFormat = a[len("--format="):], true
		case strings.HasPrefix(a, "--separator="):
			sep = a[len("--separator="):]
		case a == "--separator" && i+1 < len(args):
			i++
			sep = args[i]
		case a == "--":
		default:
			if !isNumber(a) {
				c.errorf("invalid floating point argument: '%s'", a)
				return 1
			}
			nums = append(nums, a)
		}
	}
	if len(nums) == 0 || len(nums) > 3 {
		c.errorf("usage: seq [-s SEP] [-w] [FIRST [INCREMENT]] LAST")
		return 1
	}
	first, incr, last := "1", "1", nums[len(nums)-1]
	if len(nums) > 1 {
		first = nums[0]
	}
	if len(nums) == 3 {
		incr = nums[1]
	}
	decimals := 0
	for _, n := range []string{first, incr} {
		if i := strings.IndexByte(n, '.'); i >= 0 {
			decimals = max(decimals, len(n)-i-1)
		}
	}
	f, _ := strconv.ParseFloat(first, 64)
	step, _ := strconv.ParseFloat(incr, 64)
	end, _ := strconv.ParseFloat(last, 64)
	if step == 0 {
		c.errorf("invalid Zero increment value: '%s'", incr)
		return 1
	}
	format := func(v float64) string { return strconv.FormatFloat(v, 'f', decimals, 64) }
	if hasFormat {
		if width {
			c.errorf("format string may not be specified when printing equal width strings")
			return 1
		}
		goFormat, err := seqFormat(userFormat)
		if err != nil {
			c.errorf("%s", err)
			return 1
		}
		format = func(v float64) string { return fmt.Sprintf(goFormat, v) }
	}
	pad := 0
	if width {
		pad = max(len(format(f)), len(format(end)))
	}
	w := c.out()
	for i := 0; ; i++ {
		v := f + float64(i)*step
		if step > 0 && v > end+1e-9 || step < 0 && v < end-1e-9 {
			break
		}
		if i%1024 == 1023 && c.ctx.Err() != nil {
			return 1
		}
		if i > 0 {
			w.WriteString(sep)
		}
		s := format(v)
		if pad > 0 && len(s) < pad {
			neg := strings.HasPrefix(s, "-")
			s = strings.TrimPrefix(s, "-")
			s = strings.Repeat("0", pad-len(s)-btoi(neg)) + s
			if neg {
				s = "-" + s
			}
		}
		if _, err := w.WriteString(s); err != nil {
			return c.writeFailed(err)
		}
	}
	if f <= end && step > 0 || f >= end && step < 0 {
		w.WriteString("\n")
	}
	return c.flush(w, 0)
}

// seqFormat turns the printf format of seq -f, which must hold exactly one
// floating-point directive (%e, %f, %g, %E, %F, %G with flags, width and
// precision) and any number of %%, into a Go format. C's %g without a
// precision has 6 digits, Go's as many as needed.
func seqFormat(f string) (string, error) {
	var b strings.Builder
	directives := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		if i+1 < len(f) && f[i+1] == '%' {
			b.WriteString("%%")
			i++
			continue
		}
		j := i + 1
		for j < len(f) && strings.IndexByte("-+ #0'", f[j]) >= 0 {
			j++
		}
		flags := strings.ReplaceAll(f[i+1:j], "'", "")
		k := j
		for k < len(f) && f[k] >= '0' && f[k] <= '9' {
			k++
		}
		widthStr := f[j:k]
		prec := ""
		if k < len(f) && f[k] == '.' {
			p := k + 1
			for p < len(f) && f[p] >= '0' && f[p] <= '9' {
				p++
			}
			prec = "." + f[k+1:p]
			if prec == "." {
				prec = ".0"
			}
			k = p
		}
		for k < len(f) && strings.IndexByte("hlLqjzt", f[k]) >= 0 {
			k++ // length modifiers: a long double is a double here
		}
		if k >= len(f) {
			return "", fmt.Errorf("format '%s' ends in %%", f)
		}
		verb := f[k]
		switch verb {
		case 'e', 'f', 'g', 'E', 'F', 'G':
		default:
			return "", fmt.Errorf("format '%s' has unknown %%%c directive", f, verb)
		}
		if directives++; directives > 1 {
			return "", fmt.Errorf("format '%s' has too many %% directives", f)
		}
		if (verb == 'g' || verb == 'G') && prec == "" {
			prec = ".6"
		}
		if verb == 'F' {
			verb = 'f'
		}
		b.WriteString("%" + flags + widthStr + prec + string(verb))
		i = k
	}
	if directives == 0 {
		return "", fmt.Errorf("format '%s' has no %% directive", f)
	}
	return b.String(), nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil && !strings.ContainsAny(s, "xXpPnN_")
}
