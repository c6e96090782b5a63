package shell

// System information. The sandbox is not Linux: the shell's commands run
// as a WebAssembly (wasm32) guest under WASI, inside codeport. uname says
// so rather than copying the host's values, which the guest cannot see and
// scripts would misread (a kernel version to work around, an x86_64 to
// download binaries for).
const (
	unameKernel   = "codeport" // -s: the "kernel" the commands run on
	unameRelease  = "wasip1"   // -r: the WASI version of the guest
	unameVersion  = "#1"       // -v
	unameMachine  = "wasm32"   // -m
	unameOS       = "WASI"     // -o
	defaultHost   = "sandbox"
	defaultUser   = "user"
	sandboxUserID = 1000
)

func (c *call) hostname() string {
	if v := c.env.Get("HOSTNAME"); v.IsSet() && v.String() != "" {
		return v.String()
	}
	return defaultHost
}

// userName is the one identity of the sandbox: $USER if set, else "user".
func (c *call) userName() string {
	if v := c.env.Get("USER"); v.IsSet() && v.String() != "" {
		return v.String()
	}
	return defaultUser
}
