package shell

import (
	"testing"
	"time"
)

func TestSysinfo(t *testing.T) {
	runTable(t, []tc{
		{name: "uname", cmd: "uname", stdout: "codeport\n"},
		{name: "uname all", cmd: "uname -a", stdout: "codeport sandbox wasip1 #1 wasm32 WASI\n"},
		{name: "uname parts", cmd: "uname -smo", stdout: "codeport wasm32 WASI\n"},
		{name: "uname processor", cmd: "uname -p", stdout: "unknown\n"},
		{name: "uname hostname", cmd: "HOSTNAME=box uname -n", stdout: "box\n"},
		{name: "uname bad", cmd: "uname -z", code: 1, anyErr: true},
		{name: "whoami", cmd: "whoami", stdout: "user\n"},
		{name: "whoami USER", cmd: "USER=alice whoami", stdout: "alice\n"},
		{name: "id", cmd: "id", stdout: "uid=1000(user) gid=1000(user) groups=1000(user)\n"},
		{name: "id u", cmd: "id -u; id -g; id -G; id -un; id -gn", stdout: "1000\n1000\n1000\nuser\nuser\n"},
		{name: "id consistent", cmd: `[ "$(id -un)" = "$(whoami)" ]`},
		{name: "id other user", cmd: "id root", code: 1, stderr: "id: 'root': no such user\n"},
		{name: "id two", cmd: "id -u -g", code: 1, stderr: "id: cannot print \"only\" of more than one choice\n"},
		{name: "hostname", cmd: "hostname", stdout: "sandbox\n"},
		{name: "hostname env", cmd: "HOSTNAME=a.b.c hostname -s", stdout: "a\n"},
		{name: "hostname set", cmd: "hostname x", code: 1, anyErr: true},
		{name: "nproc", cmd: "nproc; nproc --all", stdout: "1\n1\n"},
		{name: "nproc extra", cmd: "nproc x", code: 1, anyErr: true},
	})
}

// parseTZ is the zone of a TZ value for a shell without a zone database.
func parseTZ(tz string) *time.Location { return (&Shell{}).location(tz) }
