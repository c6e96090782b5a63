package shell

import (
	"context"
	"errors"
	"io"
)

// nestsTooDeep parses src (as the interpreter will for eval, source or a
// trap) under the stack guard, and reports whether it nests deeper than
// the guard allows. A syntax error is left for the interpreter to report.
func (s *Shell) nestsTooDeep(src string) bool {
	if len(src) <= shortSource {
		return false
	}
	_, err := s.parseGuarded(nil, src, "")
	return errors.Is(err, errParseNesting)
}

// shortSource is the length up to which a source is not parsed first: it
// cannot nest more than that many levels, a few MB of stack at most, and
// the commands it runs pass the stack guard anyway.
const shortSource = 1024

// sourcedNestsTooDeep reads the script source is about to run (the guest
// path p) and reports whether it nests too deep. A script that cannot be
// read is left for the builtin to report.
func (s *Shell) sourcedNestsTooDeep(ctx context.Context, p string) bool {
	t, err := resolve(guestRoot, p)
	if err != nil || t.dev != "" {
		return false
	}
	f, err := s.fs.open(ctx, t.rel)
	if err != nil {
		return false
	}
	defer f.Close()
	r := io.Reader(f)
	if s.fs.max > 0 {
		r = io.LimitReader(f, s.fs.max)
	}
	data, err := io.ReadAll(&ctxReader{ctx: ctx, r: r})
	return err == nil && s.nestsTooDeep(string(data))
}
