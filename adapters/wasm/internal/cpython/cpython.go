package cpython

import (
	"embed"
	"io/fs"

	"github.com/codeport/codeport/adapters/wasm/internal/wasmpatch"
)

// Version is the CPython release the artifacts are built from.
const Version = "3.13.5"

// Names of the module's exports: entry.c's, wasi-libc's, and those
// wasmpatch adds.
const (
	ExportInitData  = wasmpatch.InitDataFunc    // copy the (passive) data segments into memory
	ExportInitLibc  = "_initialize"             // wasi-libc's constructors
	ExportInit      = "codeport_init"           // start CPython
	ExportBuffer    = "codeport_buffer"         // the request buffer, at least n+1 bytes
	ExportBoot      = "codeport_boot"           // run the driver's source from the buffer
	ExportRun       = "codeport_run"            // run one request: (status << 32) | return code
	ExportInterrupt = wasmpatch.InterruptGlobal // global: non-zero traps at the next safepoint
)

// StdlibDir is where the guest finds StdlibZip (entry.c's module search
// path); the host mounts Stdlib there, read-only.
const (
	StdlibDir = "/usr/local/lib"
	StdlibZip = "python313.zip"
)

// The artifacts are in runtime/, with their SHA256SUMS: the project keeps
// committed build artifacts in runtime/ folders.

//go:embed runtime/python.wasm
var module []byte

//go:embed runtime/SHA256SUMS
var sums string

// BuildID names the default runtime's build: the SHA256SUMS of its
// artifacts.
func BuildID() string { return sums }

//go:embed runtime/python313.zip
var artifacts embed.FS

// Module returns the WebAssembly module. The slice is shared: do not
// modify it.
func Module() []byte { return module }

// Stdlib returns a file system holding StdlibZip at its root.
func Stdlib() fs.FS {
	sub, _ := fs.Sub(artifacts, "runtime") // a valid name of an embedded folder: no error
	return sub
}
