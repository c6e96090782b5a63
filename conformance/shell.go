package conformance

import (
	"strings"

	"github.com/codeport/codeport/port"
)

// The shell checks: what a model's bash commands must be able to rely on.
// Each is a defect once seen in a backend (a shell whose python shared the
// session's interpreter, a pipeline that never ended, a sort key that
// crashed, matching that was not POSIX's).

func shellChecks() []Check {
	return []Check{
		{"bash/python-is-a-program", check(bashPythonIsAProgram)},
		{"bash/pipeline-ends-producer", check(bashPipelineEndsProducer)},
		{"bash/sort-keys", check(bashSortKeys)},
		{"bash/everyday-commands", check(bashEverydayCommands)},
		{"bash/posix-regex", check(bashPOSIXRegex)},
		{"hostile/bash-crashes", check(hostileBashCrashes)},
	}
}

// requireShellPython skips a check on a shell without python3.
func (e *env) requireShellPython(id string) {
	if res := e.bash(id, "python3 -c 'print(6 * 7)'"); strings.TrimSpace(res.Stdout) != "42" {
		e.t.Skipf("the shell has no working python3 (return code %d, stderr %q)", res.ReturnCode, clip(res.Stderr))
	}
}

// bashPythonIsAProgram: python in the shell is a program of its own, as in
// a terminal: it neither sees nor changes the session's code_execution
// namespace, its globals do not outlive it, and closing its standard
// output breaks nothing after it.
func bashPythonIsAProgram(e *env) {
	e.requireTool(port.ToolBashCodeExecution)
	id := e.session()
	e.requireShellPython(id)
	expect := func(cmd, want string) {
		if res := e.bash(id, cmd); strings.TrimSpace(res.Stdout) != want {
			e.t.Errorf("bash %q: stdout %q (return code %d, stderr %q), want %q", cmd, clip(res.Stdout), res.ReturnCode, clip(res.Stderr), want)
		}
	}
	expect(`python3 -c "secret = 41"; python3 -c "print('secret' in globals())"`, "False")
	expect(`printf '{"a": 1}' > conformance.json && python3 -m json.tool conformance.json > /dev/null; python3 -c 'print("after json.tool")'`, "after json.tool")
	expect(`python3 -c 'import sys; sys.stdout.close()'; echo still`, "still")
	if !e.python() {
		return
	}
	e.codeOK(id, "conformance_session_value = 7")
	expect(`python3 -c "print('conformance_session_value' in globals())"`, "False")
	e.bash(id, `python3 -c "from_bash = 1"`)
	e.expectStdout(id, "print('from_bash' in globals(), conformance_session_value)\nprint('printing works')", "False 7\nprinting works\n")
}

// bashPipelineEndsProducer: a producer without end stops when the reader
// of its pipe is gone, as SIGPIPE stops it in bash. The command runs under
// the backend's default timeout, not a short one: it must complete, and
// on a loaded machine ending the producer took more than 3 s; a backend
// that does not end it fails by the default deadline.
func bashPipelineEndsProducer(e *env) {
	e.requireTool(port.ToolBashCodeExecution)
	id := e.session()
	res := e.bash(id, "while true; do echo x; done | head -3; echo done")
	if res.Stdout != "x\nx\nx\ndone\n" || res.Outcome != port.OutcomeCompleted {
		e.t.Errorf("while true | head -3: %s, stdout %q (stderr %q); want three lines and done", res.Outcome, clip(res.Stdout), clip(res.Stderr))
	}
}

// bashSortKeys: sort's keys and options as models write them.
func bashSortKeys(e *env) {
	e.requireTool(port.ToolBashCodeExecution)
	id := e.session()
	for cmd, want := range map[string]string{
		`printf 'b 2\na 10\nc 1\n' | sort -k2,2n`:        "c 1\nb 2\na 10",
		`printf 'x,3\ny,1\nz,2\n' | sort -t, -k2 -rn`:    "x,3\nz,2\ny,1",
		`printf '1K\n3M\n2G\n10\n' | sort -h`:            "10\n1K\n3M\n2G",
		`printf 'b\na\nb\n' | sort | uniq -c | sort -rn`: "2 b\n      1 a",
	} {
		res := e.bash(id, cmd)
		if strings.TrimSpace(res.Stdout) != want || res.ReturnCode != 0 {
			e.t.Errorf("bash %q: stdout %q, return code %d (stderr %q); want %q", cmd, clip(res.Stdout), res.ReturnCode, clip(res.Stderr), want)
		}
	}
}

// bashEverydayCommands: the commands models reach for exist and do what
// GNU's do with the flags models write, and every command Describe lists
// is there. Each line was once a "command not found" in a backend.
func bashEverydayCommands(e *env) {
	e.requireTool(port.ToolBashCodeExecution)
	id := e.session()
	e.writeText(id, "everyday.txt", "b 2\na 1\n")
	for _, c := range []struct{ cmd, want string }{
		{`sed -n 's/^a /A=/p' everyday.txt`, "A=1"},
		{`awk '{s += $2} END {print s}' everyday.txt`, "3"},
		{`cut -d' ' -f2 everyday.txt | paste -sd+ | bc`, "3"},
		{`echo Hello | tr a-z A-Z`, "HELLO"},
		{`printf 'x\ny\n' | xargs echo`, "x y"},
		{`printf 'b 2\n' > other.txt; diff everyday.txt other.txt > /dev/null; echo $?`, "1"},
		{`cmp -s everyday.txt everyday.txt && echo same`, "same"},
		{`date -u -d @0 +%Y-%m-%d`, "1970-01-01"},
		{`stat -c %s everyday.txt`, "8"},
		{`du -b everyday.txt | cut -f1`, "8"},
		{`df . > /dev/null && echo ok`, "ok"},
		{`ln -sf everyday.txt link.txt 2>/dev/null; readlink -f everyday.txt | sed 's|.*/||'`, "everyday.txt"},
		{`mkdir -p t/u && touch t/u/f && tree t | head -1`, "t"},
		{`tar -cf e.tar everyday.txt && tar -tf e.tar`, "everyday.txt"},
		{`gzip -c everyday.txt | gzip -dc | head -1`, "b 2"},
		{`rm -f e.zip && zip -q e.zip everyday.txt && unzip -l e.zip | grep -c everyday.txt`, "1"},
		{`echo hi | base64`, "aGkK"},
		{`printf hi | md5sum | cut -d' ' -f1`, "49f68a5c8493ec2c0bf489821c21fc3b"},
		{`printf hi | sha256sum | cut -d' ' -f1`, "8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4"},
		{`timeout 5 echo in-time`, "in-time"},
		{`uname -a > /dev/null && echo ok`, "ok"},
		{`whoami > /dev/null && echo ok`, "ok"},
		{`printf '%s\n' 'print(1)' > f.py; file f.py > /dev/null && echo ok`, "ok"},
		{`find . -name 'everyday.*' -size -2k -exec cat {} + | wc -l`, "2"},
		{`cat -A everyday.txt | head -1`, "b 2$"},
	} {
		res := e.bash(id, c.cmd)
		if strings.TrimSpace(res.Stdout) != c.want || res.ReturnCode != 0 {
			e.t.Errorf("bash %q: stdout %q, return code %d (stderr %q); want %q", c.cmd, clip(res.Stdout), res.ReturnCode, clip(res.Stderr), c.want)
		}
	}
	caps, err := e.describe()
	if err != nil {
		return
	}
	for _, name := range caps.ShellCommands {
		if res := e.bash(id, "command -v "+name+" > /dev/null"); res.ReturnCode != 0 {
			e.t.Errorf("Describe lists the shell command %q, but command -v does not find it (return code %d, stderr %q)", name, res.ReturnCode, clip(res.Stderr))
		}
	}
}

// bashPOSIXRegex: grep matches as POSIX says (the longest of the leftmost
// matches) and has back-references.
func bashPOSIXRegex(e *env) {
	e.requireTool(port.ToolBashCodeExecution)
	id := e.session()
	for cmd, want := range map[string]string{
		`echo ab | grep -o 'a\|ab'`:                "ab",
		`echo 'abab cdcd' | grep -oE '(ab)\1'`:     "abab",
		`echo 'xyzxyz' | grep -c '\(xyz\)\1'`:      "1",
		`echo 'hello world' | sed 's/\(o\) /\1_/'`: "hello_world",
	} {
		res := e.bash(id, cmd)
		if strings.TrimSpace(res.Stdout) != want || res.ReturnCode != 0 {
			e.t.Errorf("bash %q: stdout %q, return code %d (stderr %q); want %q", cmd, clip(res.Stdout), res.ReturnCode, clip(res.Stderr), want)
		}
	}
}

// hostileBashCrashes: inputs that crashed the shell's interpreter (a
// pattern too nested for its regexp, a pipeline per level of recursion)
// end with an outcome, and the session and the backend go on.
func hostileBashCrashes(e *env) {
	e.requireTool(port.ToolBashCodeExecution)
	id := e.session()
	for _, cmd := range []string{
		`p=$(printf "@(%.0s" $(seq 1100))x$(printf ")%.0s" $(seq 1100)); [[ x == $p ]] | cat`,
		`f() { f | cat; }; f`,
	} {
		res := e.exec(id, port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: cmd, Timeout: hostileTimeout})
		if res.Outcome == "" {
			e.t.Errorf("%s: no outcome", firstLine(cmd))
		}
		e.survives(id, res)
	}
}
