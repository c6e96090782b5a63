package shell

import (
	"strings"
	"testing"
)

// Expected outputs come from GNU coreutils 9.1 on the same inputs.

func TestBase64(t *testing.T) {
	zeros := strings.Repeat("\x00", 100)
	runTable(t, []tc{
		{name: "encode", cmd: "echo hi | base64", stdout: "aGkK\n"},
		{name: "wrap default", files: map[string]string{"z": zeros}, cmd: "base64 z",
			stdout: strings.Repeat("A", 76) + "\n" + strings.Repeat("A", 58) + "==\n"},
		{name: "wrap 20", files: map[string]string{"z": zeros}, cmd: "base64 -w 20 z | head -2",
			stdout: strings.Repeat("A", 20) + "\n" + strings.Repeat("A", 20) + "\n"},
		{name: "no wrap", cmd: "echo hi | base64 -w0", stdout: "aGkK"},
		{name: "empty", cmd: "printf '' | base64", stdout: ""},
		{name: "decode", cmd: "echo YWJj | base64 -d", stdout: "abc"},
		{name: "decode long option", cmd: "echo YWJj | base64 --decode", stdout: "abc"},
		{name: "decode wrapped", cmd: "printf 'YW\\nJj\\n' | base64 -d", stdout: "abc"},
		{name: "garbage", cmd: "echo 'YWJj!!' | base64 -d", stdout: "abc", code: 1, stderr: "base64: invalid input\n"},
		{name: "ignore garbage", cmd: "echo 'YWJj!!' | base64 -di", stdout: "abc"},
		{name: "truncated", cmd: "echo YWI | base64 -d", stdout: "ab", code: 1, stderr: "base64: invalid input\n"},
		{name: "round trip", files: map[string]string{"f": "any\x00binary\xff\n"}, cmd: "base64 f | base64 -d | cmp - f"},
		{name: "bad wrap", cmd: "base64 -w x", code: 1, stderr: "base64: invalid wrap size: 'x'\n"},
		{name: "missing", cmd: "base64 nope", code: 1, stderr: "base64: nope: No such file or directory\n"},
		{name: "base32", cmd: "echo hi | base32", stdout: "NBUQU===\n"},
		{name: "base32 decode", cmd: "echo NBUQU=== | base32 -d", stdout: "hi\n"},
	})
}

func TestBase64TooLarge(t *testing.T) {
	e := newEnv(t, 0, 64, nil)
	e.put(map[string]string{"big": strings.Repeat("x", 100)})
	_, stderr, code := e.run("base64 big")
	if code != 1 || !strings.HasPrefix(stderr, "base64: big: ") {
		t.Errorf("code %d, stderr %q", code, stderr)
	}
}
