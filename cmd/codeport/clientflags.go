package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
)

// clientFlags is the flag handling of the commands that talk to running
// backends (conformance, drain): -h prints the usage to stdout; a bad flag,
// a stray argument or a failed check prints the error and the usage to
// stderr, and the command exits 2.
type clientFlags struct {
	*flag.FlagSet
	name, about    string
	stdout, stderr io.Writer
}

func newClientFlags(name, about string, stdout, stderr io.Writer) *clientFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by fail, help goes to stdout
	return &clientFlags{FlagSet: fs, name: name, about: about, stdout: stdout, stderr: stderr}
}

func (c *clientFlags) usage(w io.Writer) {
	fmt.Fprint(w, c.about)
	c.SetOutput(w)
	c.PrintDefaults()
	c.SetOutput(io.Discard)
}

// fail reports a usage error and returns the exit code 2.
func (c *clientFlags) fail(format string, args ...any) int {
	fmt.Fprintf(c.stderr, "codeport "+c.name+": "+format+"\n\n", args...)
	c.usage(c.stderr)
	return 2
}

// parse parses args, which take no positional arguments. When the command
// is over (help asked for, or a usage error), done is true and code is its
// exit code.
func (c *clientFlags) parse(args []string) (code int, done bool) {
	if err := c.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.usage(c.stdout)
			return 0, true
		}
		return c.fail("%v", err), true
	}
	if c.NArg() > 0 {
		return c.fail("unexpected arguments %q", c.Args()), true
	}
	return 0, false
}

// backendURL parses the value of a flag that names a backend's base URL.
func backendURL(flagName, v string) (*url.URL, error) {
	u, err := url.Parse(v)
	if v == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s must be an absolute http or https URL, got %q", flagName, v)
	}
	return u, nil
}
