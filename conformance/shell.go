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
// of its pipe is gone, as SIGPIPE stops it in bash.
func bashPipelineEndsProducer(e *env) {
	e.requireTool(port.ToolBashCodeExecution)
	id := e.session()
	res := e.exec(id, port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: "while true; do echo x; done | head -3; echo done", Timeout: hostileTimeout})
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
