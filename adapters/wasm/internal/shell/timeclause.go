package shell

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"sync"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// The interpreter's `time` prints its report on the standard output, where
// bash prints it on the standard error: `time python3 job.py > out.txt`
// kept the report out of out.txt, but `x=$(time cmd)` captured it, and a
// tool call's stdout held it among the program's output. So every time
// clause is rewritten when a script is parsed (rewriteTime) into
//
//	\0time begin N; STMT && \0time end N 0 || \0time end N $?
//
// where N names the clause and \0time is an internal command (a shell
// word cannot start with the NUL byte, so no user command has its name).
// The end prints the report on its standard error, which is the clause's,
// and returns STMT's status, so that $?, `!`, `set -e` (which ends the
// script after the report, as bash does) and an ERR trap see what they
// see in bash. A time clause in text the interpreter parses itself (eval,
// source, a trap's command) is not rewritten. type prints a function's
// clauses as written (originalTime) and set -x does not show the internal
// calls on the Run's standard error (internalTrace); declare -f, which the
// interpreter implements, prints the rewritten form.

// timeCommand is the internal command of a rewritten time clause, as the
// call handler passes it on (internalPrefix taken off).
const timeCommand = "\x00time"

// clock holds the start of each time clause in progress, by clause, as a
// stack: a clause inside a function may run again before it ends, in a
// recursion.
type clock struct {
	mu     sync.Mutex
	next   int
	starts map[int][]time.Time
}

// maxClockEntries bounds the starts held: a clause left by return, break
// or exit never reaches its end, and a loop could leave one each turn.
const maxClockEntries = 4096

// clause numbers a new time clause.
func (k *clock) clause() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.next++
	return k.next
}

func (k *clock) begin(n int, t time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.starts == nil || len(k.starts) >= maxClockEntries || len(k.starts[n]) >= maxClockEntries {
		k.starts = make(map[int][]time.Time) // what is left was abandoned
	}
	k.starts[n] = append(k.starts[n], t)
}

// end returns the start of clause n's innermost run, and false when it
// was dropped.
func (k *clock) end(n int) (time.Time, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	s := k.starts[n]
	if len(s) == 0 {
		return time.Time{}, false
	}
	t := s[len(s)-1]
	if len(s) == 1 {
		delete(k.starts, n)
	} else {
		k.starts[n] = s[:len(s)-1]
	}
	return t, true
}

// rewriteTime rewrites st, whose command is a time clause, as the comment
// above says. The clause's own statement keeps its redirections; st keeps
// its own (`{ time cmd; } 2> t.txt` puts the report in t.txt).
func (s *Shell) rewriteTime(st *syntax.Stmt, tc *syntax.TimeClause) {
	pos := tc.Pos()
	n := strconv.Itoa(s.clock.clause())
	word := func(part syntax.WordPart) *syntax.Word { return &syntax.Word{Parts: []syntax.WordPart{part}} }
	lit := func(v string) *syntax.Word { return word(&syntax.Lit{ValuePos: pos, ValueEnd: pos, Value: v}) }
	call := func(args ...*syntax.Word) *syntax.Stmt {
		return &syntax.Stmt{Position: pos, Cmd: &syntax.CallExpr{Args: append([]*syntax.Word{lit(internalPrefix + timeCommand)}, args...)}}
	}
	end := func(status *syntax.Word) *syntax.Stmt {
		args := []*syntax.Word{lit("end"), lit(n), status}
		if tc.PosixFormat {
			args = append(args, lit("-p"))
		}
		return call(args...)
	}
	inner, begin := tc.Stmt, call(lit("begin"), lit(n))
	if inner == nil { // a bare `time`: the report of nothing
		inner = &syntax.Stmt{Position: pos, Cmd: statusTrue}
		begin = call(lit("begin"), lit(n), lit("bare")) // for originalTime
	}
	status := word(&syntax.ParamExp{Dollar: pos, Short: true, Param: &syntax.Lit{ValuePos: pos, ValueEnd: pos, Value: "?"}})
	st.Cmd = &syntax.Block{Lbrace: pos, Rbrace: pos, Stmts: []*syntax.Stmt{
		begin,
		{Position: pos, Cmd: &syntax.BinaryCmd{OpPos: pos, Op: syntax.OrStmt,
			X: &syntax.Stmt{Position: pos, Cmd: &syntax.BinaryCmd{OpPos: pos, Op: syntax.AndStmt, X: inner, Y: end(lit("0"))}},
			Y: end(status)}},
	}}
}

// cmdTimeReport is timeCommand: "begin N [bare]" notes clause N's start; "end N
// STATUS [-p]" prints its report on stderr, as bash does (its -p format
// with -p), and returns STATUS. The user and system times are the
// guest's to know, and it does not: they read 0.
func cmdTimeReport(c *call) int {
	if len(c.args) < 2 {
		return 2
	}
	n, err := strconv.Atoi(c.args[1])
	if err != nil {
		return 2
	}
	now := time.Now()
	switch c.args[0] {
	case "begin":
		c.sh.clock.begin(n, now)
		return 0
	case "end":
		if len(c.args) < 3 {
			return 2
		}
		status, err := strconv.Atoi(c.args[2])
		if err != nil {
			return 2
		}
		var real time.Duration
		if start, ok := c.sh.clock.end(n); ok {
			real = now.Sub(start)
		}
		if len(c.args) > 3 && c.args[3] == "-p" {
			fmt.Fprintf(c.stderr, "real %.2f\nuser 0.00\nsys 0.00\n", real.Seconds())
		} else {
			fmt.Fprintf(c.stderr, "\nreal\t%s\nuser\t0m0.000s\nsys\t0m0.000s\n", minutesSeconds(real))
		}
		return status
	}
	return 2
}

// minutesSeconds is d as bash's time prints it: 0m1.234s.
func minutesSeconds(d time.Duration) string {
	return fmt.Sprintf("%dm%.3fs", int(d.Minutes()), math.Mod(d.Seconds(), 60))
}

// originalTime is a copy of the statement st for printing (type), with
// each rewritten time clause in it back as the script had it.
func originalTime(st *syntax.Stmt) *syntax.Stmt {
	c := deepCopy(reflect.ValueOf(st)).Interface().(*syntax.Stmt)
	syntax.Walk(c, func(n syntax.Node) bool {
		if st, ok := n.(*syntax.Stmt); ok {
			if tc := timeClauseOf(st.Cmd); tc != nil {
				st.Cmd = tc
			}
		}
		return true
	})
	return c
}

// timeClauseOf is the time clause cmd was rewritten from (rewriteTime), or
// nil when cmd is not one.
func timeClauseOf(cmd syntax.Command) *syntax.TimeClause {
	b, ok := cmd.(*syntax.Block)
	if !ok || len(b.Stmts) != 2 || internalCall(b.Stmts[0]) != "begin" {
		return nil
	}
	or, ok := b.Stmts[1].Cmd.(*syntax.BinaryCmd)
	if !ok || or.Op != syntax.OrStmt {
		return nil
	}
	and, ok := or.X.Cmd.(*syntax.BinaryCmd)
	if !ok || and.Op != syntax.AndStmt || internalCall(and.Y) != "end" {
		return nil
	}
	end := and.Y.Cmd.(*syntax.CallExpr).Args
	tc := &syntax.TimeClause{Time: b.Lbrace, PosixFormat: end[len(end)-1].Lit() == "-p", Stmt: and.X}
	if begin := b.Stmts[0].Cmd.(*syntax.CallExpr).Args; begin[len(begin)-1].Lit() == "bare" {
		tc.Stmt = nil
	}
	return tc
}

// internalCall is the operation ("begin", "end") of st when st is a call
// of timeCommand, else "".
func internalCall(st *syntax.Stmt) string {
	if st == nil {
		return ""
	}
	c, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) < 2 || c.Args[0].Lit() != internalPrefix+timeCommand {
		return ""
	}
	return c.Args[1].Lit()
}

// deepCopy copies a syntax tree: its nodes, the slices and the nodes they
// point to (a tree: no node is reached twice).
func deepCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Elem().Type())
		c.Elem().Set(deepCopy(v.Elem()))
		return c
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type()).Elem()
		c.Set(deepCopy(v.Elem()))
		return c
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		for i := range v.NumField() {
			if c.Field(i).CanSet() {
				c.Field(i).Set(deepCopy(v.Field(i)))
			}
		}
		return c
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(deepCopy(v.Index(i)))
		}
		return c
	}
	return v
}

// internalTrace reports whether p is the trace (set -x) of a call of
// timeCommand, which bash would not print: "+ " and the call, one line.
// The Run's standard error drops it (a trace the script redirected to a
// file or a pipe keeps it).
func internalTrace(p []byte) bool {
	const prefix = "+ " + internalPrefix + timeCommand + " "
	return len(p) > len(prefix) && string(p[:len(prefix)]) == prefix && bytes.IndexByte(p, '\n') == len(p)-1
}
