package shell

import "testing"

// Expected outputs come from GNU coreutils 9.1 on the same inputs.

const (
	md5Hello = "b1946ac92492d2347c6235b4d2611184"
	md5Hi    = "764efa883dda1e11db47671c4a3bbd9e"
)

func TestSums(t *testing.T) {
	hello := map[string]string{"h": "hello\n", "h2": "bad\n"}
	list := md5Hello + "  h2\n" + md5Hello + "  h\n" + "garbage\n" + md5Hello + "  missing\n"
	withList := map[string]string{"h": "hello\n", "h2": "bad\n", "l": list}
	runTable(t, []tc{
		{name: "md5", files: hello, cmd: "md5sum h", stdout: md5Hello + "  h\n"},
		{name: "sha1", files: hello, cmd: "sha1sum h", stdout: "f572d396fae9206628714fb2ce00f72e94f2258f  h\n"},
		{name: "sha224", files: hello, cmd: "sha224sum h", stdout: "2d6d67d91d0badcdd06cbbba1fe11538a68a37ec9c2e26457ceff12b  h\n"},
		{name: "sha256", files: hello, cmd: "sha256sum h", stdout: "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03  h\n"},
		{name: "sha384", files: hello, cmd: "sha384sum h", stdout: "1d0f284efe3edea4b9ca3bd514fa134b17eae361ccc7a1eefeff801b9bd6604e01f21f6bf249ef030599f0c218f2ba8c  h\n"},
		{name: "sha512", files: hello, cmd: "sha512sum h", stdout: "e7c22b994c59d9cf2b48e549b1e24666636045930d3da7c1acb299d1c3b7f931f94aae41edda2c2b207a36e10f8bcb8d45223e54878f5b316e7ce3b6bc019629  h\n"},
		{name: "tag", files: hello, cmd: "sha256sum --tag h", stdout: "SHA256 (h) = 5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03\n"},
		{name: "stdin", cmd: "echo hi | md5sum", stdout: md5Hi + "  -\n"},
		{name: "stdin dash binary", cmd: "echo hi | md5sum -b -", stdout: md5Hi + " *-\n"},
		{name: "missing", cmd: "md5sum nope", code: 1, stderr: "md5sum: nope: No such file or directory\n"},
		{name: "space in name", files: map[string]string{"we ird": "a\nb\n"}, cmd: "md5sum 'we ird'", stdout: "dd8c6a395b5dd36c56d23275028f526c  we ird\n"},
		{name: "check ok", files: hello, cmd: "md5sum h > l; md5sum -c l", stdout: "h: OK\n"},
		{name: "check tag", files: hello, cmd: "md5sum --tag h | md5sum -c", stdout: "h: OK\n"},
		{name: "check mixed", files: withList, cmd: "md5sum -c l", code: 1,
			stdout: "h2: FAILED\nh: OK\nmissing: FAILED open or read\n",
			stderr: "md5sum: missing: No such file or directory\nmd5sum: WARNING: 1 line is improperly formatted\nmd5sum: WARNING: 1 listed file could not be read\nmd5sum: WARNING: 1 computed checksum did NOT match\n"},
		{name: "check quiet", files: withList, cmd: "md5sum -c --quiet l 2>/dev/null", code: 1,
			stdout: "h2: FAILED\nmissing: FAILED open or read\n"},
		{name: "check status", files: withList, cmd: "md5sum -c --status l", code: 1,
			stderr: "md5sum: missing: No such file or directory\n"},
		{name: "check ignore missing", files: withList, cmd: "md5sum -c --ignore-missing l", code: 1,
			stdout: "h2: FAILED\nh: OK\n", anyErr: true},
		{name: "check warn", files: withList, cmd: "md5sum -c -w l 2>&1 >/dev/null | head -1",
			stdout: "md5sum: l: 3: improperly formatted MD5 checksum line\n"},
		{name: "check nothing", cmd: "echo zz | md5sum -c", code: 1,
			stderr: "md5sum: 'standard input': no properly formatted checksum lines found\n"},
		{name: "check comment", files: hello, cmd: "{ echo '# sums'; md5sum h; } > l; md5sum -c l", stdout: "h: OK\n"},
		{name: "strict", files: map[string]string{"h": "hello\n", "l": md5Hello + "  h\nxx\n"}, cmd: "md5sum -c --strict l", code: 1,
			stdout: "h: OK\n", stderr: "md5sum: WARNING: 1 line is improperly formatted\n"},
		{name: "tag with check", files: hello, cmd: "md5sum -c --tag h", code: 1, anyErr: true},
		{name: "quiet without check", files: hello, cmd: "md5sum --quiet h", code: 1, anyErr: true},
	})
}
