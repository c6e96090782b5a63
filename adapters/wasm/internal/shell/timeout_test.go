package shell

import "testing"

// Expected outputs come from GNU coreutils 9.1 timeout on the same inputs.

func TestTimeout(t *testing.T) {
	// A command that must time out would run 1000 s, and a limit a
	// command must stay within is 1000 s: load stretches the run of a
	// test by seconds, and cannot turn one outcome into the other.
	runTable(t, []tc{
		{name: "times out", cmd: "timeout 0.2 sleep 1000", code: 124},
		{name: "status passes", cmd: "timeout 1000 sh -c 'exit 7'", code: 7},
		{name: "success", cmd: "timeout 1000s echo hi", stdout: "hi\n"},
		{name: "preserve", cmd: "timeout --preserve-status 0.1 sleep 1000", code: 143},
		{name: "preserve int", cmd: "timeout --preserve-status -s INT 0.1 sleep 1000", code: 130},
		{name: "kill", cmd: "timeout -s KILL 0.1 sleep 1000", code: 137},
		{name: "kill after", cmd: "timeout -k 1 0.1 sleep 1000", code: 124},
		{name: "verbose", cmd: "timeout -v 0.1 sleep 1000", code: 124, stderr: "timeout: sending signal TERM to command 'sleep'\n"},
		{name: "not found", cmd: "timeout 1000 nonexist", code: 127, stderr: "timeout: failed to run command 'nonexist': No such file or directory\n"},
		{name: "function not visible", cmd: "f() { echo fn; }; timeout 1000 f", code: 127, stderr: "timeout: failed to run command 'f': No such file or directory\n"},
		{name: "bad interval", cmd: "timeout x sleep 1", code: 125, stderr: "timeout: invalid time interval 'x'\nTry 'timeout --help' for more information.\n"},
		{name: "bad signal", cmd: "timeout -s FOO 1 true", code: 125, stderr: "timeout: 'FOO': invalid signal\nTry 'timeout --help' for more information.\n"},
		{name: "no command", cmd: "timeout 1", code: 125, stderr: "Try 'timeout --help' for more information.\n"},
		{name: "zero is no limit", cmd: "timeout 0 true"},
		{name: "minutes", cmd: "timeout 0.5m true"},
		{name: "days", cmd: "timeout 1d echo ok", stdout: "ok\n"},
		{name: "stdin passes", cmd: "echo hi | timeout 1000 cat", stdout: "hi\n"},
		// Loops that never wait: the guest has no preemption, and its
		// scheduler fires timeout's timer only when the loop yields.
		{name: "shell loop", cmd: "timeout 0.2 bash -c 'while true; do :; done'", code: 124},
		{name: "arithmetic loop", cmd: "timeout 0.2 bash -c 'i=0; while :; do i=$((i+1)); done'", code: 124},
		{name: "background job runs beside a loop", cmd: "(echo bg) & timeout 0.3 bash -c 'while :; do :; done'; echo $?; wait", stdout: "bg\n124\n"},
		{name: "script continues", cmd: "timeout 0.1 sleep 1000; echo after $?", stdout: "after 124\n"},
		{name: "with xargs", cmd: "echo 0.1 | xargs timeout 1000 sleep; echo $?", stdout: "0\n"},
	})
}

// TestTimeoutStdinReusable checks that a timed-out read leaves the rest of
// the input to the next command. Status 124 shows that the timeout ended
// the sleep (of 1000 s) rather than the sleep ending: a bound on how long
// the script took said the same, but could not tell a loaded machine from
// a timeout that did not fire.
func TestTimeoutStdinReusable(t *testing.T) {
	e := newEnv(t, 0, 0, nil)
	e.put(map[string]string{"in": "line1\nline2\n"})
	stdout, stderr, code := e.run("{ timeout 0.1 sleep 1000; echo $?; read x; echo $x; } < in")
	if stdout != "124\nline1\n" || code != 0 || stderr != "" {
		t.Errorf("stdout %q stderr %q code %d", stdout, stderr, code)
	}
}
