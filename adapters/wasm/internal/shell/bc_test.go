package shell

import (
	"bufio"
	"context"
	"strings"
	"testing"
	"time"
)

func TestBc(t *testing.T) {
	runTable(t, []tc{
		{name: "scale div", cmd: `echo "scale=2; 10/3" | bc`, stdout: "3.33\n"},
		{name: "int div", cmd: `echo "10/3" | bc`, stdout: "3\n"},
		{name: "leading dot", cmd: `echo "scale=2; 1/3" | bc`, stdout: ".33\n"},
		{name: "negative fraction", cmd: `echo "scale=3; -1/3" | bc`, stdout: "-.333\n"},
		{name: "negative zero", cmd: `echo "-1/3; -0; 0.000" | bc`, stdout: "0\n0\n0\n"},
		{name: "mul scale", cmd: `echo ".5*3; 1.25*1.25; scale=1; 1.25*1.25" | bc`, stdout: "1.5\n1.56\n1.56\n"},
		{name: "mod", cmd: `echo "3%2; scale=2; 7%3; 5.5%2" | bc`, stdout: "1\n.01\n0\n"},
		{name: "power", cmd: `echo "2^10; 2^-1; scale=3; 2^-1; 1.5^2" | bc`, stdout: "1024\n0\n.500\n2.25\n"},
		{name: "big power", cmd: `echo "2^300" | bc`, stdout: "20370359763344860862684456884093781610514683936659362506361404493543\\\n81299763336706183397376\n"},
		{name: "precedence", cmd: `echo "2+3*4; (2+3)*4; -2^2; 2^3^2" | bc`, stdout: "14\n20\n4\n512\n"},
		{name: "comparisons", cmd: `echo "1 < 2; 2 == 3; !0; 1 && 0; 1 || 0; 3 >= 3" | bc`, stdout: "1\n0\n1\n0\n1\n1\n"},
		{name: "variables", cmd: `echo "a=3; a++; a; ++a; a+=2; a; b=a*2; b" | bc`, stdout: "3\n4\n5\n7\n14\n"},
		{name: "multi-char names", cmd: "printf 'total=5\\ntotal*2\\n' | bc", stdout: "10\n"},
		{name: "last", cmd: `echo "5; last+1" | bc`, stdout: "5\n6\n"},
		{name: "sqrt", cmd: `echo "sqrt(16); scale=5; sqrt(2)" | bc`, stdout: "4\n1.41421\n"},
		{name: "length scale", cmd: `echo "length(123.45); scale(1.234)" | bc`, stdout: "5\n3\n"},
		{name: "obase", cmd: `echo "obase=16; 255; -255; 10.5; obase=2; 5" | bc`, stdout: "FF\n-FF\nA.8\n101\n"},
		{name: "ibase", cmd: `echo "ibase=16; FF; A.8" | bc`, stdout: "255\n10.5\n"},
		{name: "ibase 2", cmd: `echo "ibase=2; 1010" | bc`, stdout: "10\n"},
		{name: "strings", cmd: `echo '"hi"; print "x\n"; print 1+1, "\n"' | bc`, stdout: "hix\n2\n"},
		{name: "mathlib", cmd: `bc -l <<< "s(1); c(1); a(1); l(2); e(1); sqrt(2); 4*a(1); 1/3"`,
			stdout: ".84147098480789650665\n.54030230586813971740\n.78539816339744830961\n.69314718055994530941\n2.71828182845904523536\n1.41421356237309504880\n3.14159265358979323844\n.33333333333333333333\n"},
		{name: "mathlib scale", cmd: `echo "scale=5; e(2); l(10)" | bc -l`, stdout: "7.38905\n2.30258\n"},
		{name: "quit", cmd: `printf '1\nquit\n2\n' | bc`, stdout: "1\n"},
		{name: "comments", cmd: `echo "1+1 # two" | bc; echo "/* x */ 3" | bc`, stdout: "2\n3\n"},
		{name: "continuation", cmd: "printf '1+\\\\\\n2\\n' | bc", stdout: "3\n"},
		{name: "file operand", files: map[string]string{"calc.bc": "scale=1\n7/2\n"}, cmd: "bc calc.bc </dev/null", stdout: "3.5\n"},
		{name: "syntax error", cmd: `printf 'scale=2; 10/3; 1+; 5\n4\n' | bc`, stdout: "4\n", stderr: "(standard_in) 1: syntax error\n"},
		{name: "divide by zero", cmd: `echo "x=5; 2+3; 1/0; 4" | bc; echo "rc=$?"`, stdout: "5\nrc=0\n", stderr: "Runtime error (func=(main), adr="},
		{name: "divide by zero message", cmd: `echo "1/0" | bc`, stderr: "): Divide by zero\n"},
		{name: "huge power", cmd: `echo "2^2^2^2^99" | bc`, stderr: "exponent too large in raise"},
		{name: "non-integer exponent", cmd: `echo "2^0.5" | bc`, stdout: "1\n", stderr: "Runtime warning (func=(main), adr="},
		{name: "missing file", cmd: `bc nope`, stderr: "bc: File nope is unavailable.", code: 1},
		{name: "undefined function", cmd: `echo "s(1)" | bc`, stderr: "Function s not defined."},
		// A refused base or scale leaves the one before (FuzzBc found an
		// obase of 0 left behind, which divided by zero at the next print).
		{name: "refused bases kept", cmd: `printf 'obase=16\nobase=u\n255\nibase=1\n11\nobase=10\nscale=2\nscale=-1\n1/3\n' | bc`,
			stdout: "FF\nB\n.33\n", stderr: "obase too small"},
	})
}

// TestBcDeadline checks that a long computation stops with the context.
func TestBcDeadline(t *testing.T) {
	e := newEnv(t, 0, 0, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var o, er strings.Builder
	start := time.Now()
	e.sh.Run(ctx, `awk 'BEGIN {for (i = 0; i < 1000000; i++) print "scale=300; e(" i % 50 ")"}' | bc -l`, &o, &er)
	if d := time.Since(start); d > stuckAfter {
		t.Fatalf("bc ran %v past its deadline", d)
	}
}

// FuzzBc runs bc programs: no panic, and every one ends.
func FuzzBc(f *testing.F) {
	for _, s := range []string{
		"scale=2; 10/3", "2^2^2^2^99", "obase=16; -10.5", "ibase=2; 101.1", "a=1; a++; --a",
		"s(1); c(1); a(-3); l(0.001); e(-5)", "sqrt(-1)", "1/0", "scale=100000", "9^999999", "((((1))))",
		"print 1, \"a\\n\"", "x=10^100; x*x", "scale=1.0A3", "length(0.00)", "obase=999; 12345.678",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, prog string) {
		if len(prog) > 200 {
			return
		}
		c := &call{ctx: context.Background(), name: "bc", sh: &Shell{fs: &fsys{}}}
		var out, errs strings.Builder
		c.stdout, c.stderr = &out, &errs
		w := bufio.NewWriter(&out)
		b := &bc{c: c, vars: map[string]bnum{}, ibase: 10, obase: 10, mathlib: true, scale: 20, w: w}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i, line := range strings.Split(prog, "\n") {
				b.runLine(line, i+1)
			}
		}()
		select {
		case <-done:
		case <-time.After(stuckAfter):
			t.Fatalf("bc %q did not end", prog)
		}
	})
}
