package shell

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"io/fs"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The interpreter answers $$ and $PPID with the process IDs of the gateway
// and of its parent (os.Getpid, os.Getppid), which a sandboxed script has no
// business seeing. A shell that runs no processes has no PIDs of its own
// either, so the scripts see fixed values instead: 1 for $$ (a shell that is
// the first process of its namespace), 0 for $PPID (whose parent is outside
// it). The interpreter offers no hook for them, so every script is
// rewritten once parsed: its own source, child shells (bash -c, ./script),
// eval, source and trap.
//
// What static rewriting cannot see stays as the interpreter has it: a
// reference made at run time through another variable (${!name} with
// name='$', a nameref, or arithmetic on a variable holding "PPID").
const (
	fakePID  = "1"
	fakePPID = "0"
)

// hidePIDs rewrites the references to $$ and $PPID in file to their fixed
// values, and reports whether there were any.
func hidePIDs(file *syntax.File) bool {
	changed := false
	syntax.Walk(file, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Word:
			changed = hideInParts(n.Parts) || changed
		case *syntax.DblQuoted:
			changed = hideInParts(n.Parts) || changed
		case *syntax.ArithmExp:
			changed = hideInArithm(&n.X) || changed
		case *syntax.ArithmCmd:
			changed = hideInArithm(&n.X) || changed
		case *syntax.BinaryArithm:
			changed = hideInArithm(&n.X) || changed
			changed = hideInArithm(&n.Y) || changed
		case *syntax.UnaryArithm:
			changed = hideInArithm(&n.X) || changed
		case *syntax.ParenArithm:
			changed = hideInArithm(&n.X) || changed
		case *syntax.LetClause:
			for i := range n.Exprs {
				changed = hideInArithm(&n.Exprs[i]) || changed
			}
		case *syntax.CStyleLoop:
			changed = hideInArithm(&n.Init) || changed
			changed = hideInArithm(&n.Cond) || changed
			changed = hideInArithm(&n.Post) || changed
		case *syntax.ParamExp:
			changed = hideInArithm(&n.Index) || changed
			if n.Slice != nil {
				changed = hideInArithm(&n.Slice.Offset) || changed
				changed = hideInArithm(&n.Slice.Length) || changed
			}
		case *syntax.Assign:
			changed = hideInArithm(&n.Index) || changed
		case *syntax.ArrayElem:
			changed = hideInArithm(&n.Index) || changed
		}
		return true
	})
	return changed
}

// pidParam returns the fixed value of a parameter that names a process
// ID, or "".
func pidParam(name string) string {
	switch name {
	case "$":
		return fakePID
	case "PPID":
		return fakePPID
	}
	return ""
}

// hideInParts replaces $$, ${$}, $PPID and ${PPID} among parts by their
// values. An expansion with an operator (${#$}, ${PPID:-x}, ...) is pointed
// at a variable no script sets, which expands as unset: a wrong answer to a
// question scripts do not ask, rather than the real ID.
func hideInParts(parts []syntax.WordPart) bool {
	changed := false
	for i, p := range parts {
		pe, ok := p.(*syntax.ParamExp)
		if !ok || pe.Param == nil || pe.Excl {
			continue
		}
		v := pidParam(pe.Param.Value)
		if v == "" {
			continue
		}
		changed = true
		if plainParam(pe) {
			parts[i] = &syntax.Lit{ValuePos: pe.Pos(), ValueEnd: pe.End(), Value: v}
			continue
		}
		pe.Param = &syntax.Lit{ValuePos: pe.Param.ValuePos, ValueEnd: pe.Param.ValueEnd, Value: hiddenName}
	}
	return changed
}

// hiddenName is the variable such an expansion reads instead. It is a
// valid name, as eval, source and trap sources are printed and parsed again.
const hiddenName = "_codeport_hidden_pid"

func plainParam(pe *syntax.ParamExp) bool {
	return !pe.Length && !pe.Width && !pe.IsSet && pe.Index == nil && pe.Slice == nil &&
		pe.Repl == nil && pe.Names == 0 && pe.Exp == nil && pe.Flags == nil && pe.NestedParam == nil
}

// hideInArithm replaces a bare PPID in an arithmetic expression (where a
// name is a variable) by its value.
func hideInArithm(e *syntax.ArithmExpr) bool {
	w, ok := (*e).(*syntax.Word)
	if !ok || len(w.Parts) != 1 {
		return false
	}
	lit, ok := w.Parts[0].(*syntax.Lit)
	if !ok || lit.Value != "PPID" {
		return false
	}
	*e = &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{ValuePos: lit.ValuePos, ValueEnd: lit.ValueEnd, Value: fakePPID}}}
	return true
}

// rewriteSource parses src (as the interpreter will for eval, source or a
// trap) with the stack guard, and returns it rewritten by hidePIDs when it
// refers to a process ID, or "" when it needs no change. nested is set when
// the source nests deeper than the guard allows; a syntax error is left for
// the interpreter to report.
func (s *Shell) rewriteSource(src string) (rewritten string, nested bool) {
	if len(src) <= shortSource && !mentionsPID(src) {
		return "", false
	}
	file, err := s.parseGuarded(src, "")
	switch {
	case errors.Is(err, errParseNesting):
		return "", true
	case err != nil:
		return "", false
	}
	if !mentionsPID(src) || !hidePIDs(file) {
		return "", false
	}
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, file); err != nil {
		return "", false
	}
	return b.String(), false
}

// shortSource is the length up to which a source is not parsed first: it
// cannot nest more than that many levels, a few MB of stack at most, and
// the commands it runs pass the stack guard anyway.
const shortSource = 1024

// mentionsPID is a quick test that saves a rewrite of sources that cannot
// refer to $$ or $PPID: every reference to the parameter $ is "$$", "${$..."
// or "${#$...".
func mentionsPID(src string) bool {
	for _, s := range []string{"$$", "{$", "#$", "PPID"} {
		if strings.Contains(src, s) {
			return true
		}
	}
	return false
}

// sourcePrefix starts the paths under which sourced scripts rewritten by
// hidePIDs are handed to the source builtin, which opens them through the
// open handler. /dev/null has no children, so no file of the guest or the
// host can have such a path.
const sourcePrefix = devNull + "/codeport-source-"

// rewriteSourced reads the script source is about to run (the guest path
// p), parses it under the stack guard, and, when it refers to $$ or
// $PPID, keeps the rewritten script and returns the path to hand the
// builtin instead. A script that cannot be read is left for the builtin to
// report.
func (s *Shell) rewriteSourced(ctx context.Context, p string) (replaced string, nested bool) {
	t, err := resolve(guestRoot, p)
	if err != nil || t.dev != "" {
		return "", false
	}
	f, err := s.fs.open(ctx, t.rel)
	if err != nil {
		return "", false
	}
	r := io.Reader(f)
	if s.fs.max > 0 {
		r = io.LimitReader(f, s.fs.max)
	}
	data, err := io.ReadAll(&ctxReader{ctx: ctx, r: r})
	f.Close()
	if err != nil {
		return "", false
	}
	src, nested := s.rewriteSource(string(data))
	if src == "" {
		return "", nested
	}
	key := sourcePrefix + rand.Text() + "/" + path.Base(p)
	s.sourcesMu.Lock()
	if s.sources == nil {
		s.sources = map[string]string{}
	}
	s.sources[key] = src
	s.sourcesMu.Unlock()
	return key, false
}

// takeSource returns (once) the rewritten script kept under key.
func (s *Shell) takeSource(key string) (string, bool) {
	s.sourcesMu.Lock()
	defer s.sourcesMu.Unlock()
	src, ok := s.sources[key]
	delete(s.sources, key)
	return src, ok
}

// forgetSources drops the rewritten scripts no source opened.
func (s *Shell) forgetSources() {
	s.sourcesMu.Lock()
	s.sources = nil
	s.sourcesMu.Unlock()
}

// sourceFile is a rewritten script as the open handler returns it.
type sourceFile struct{ *strings.Reader }

func (sourceFile) Write([]byte) (int, error) { return 0, fs.ErrPermission }
func (sourceFile) Close() error              { return nil }
