package cpython

import (
	"io/fs"

	"github.com/codeport/codeport/port"
)

// Runtime is one build of the interpreter that sessions can run: its module,
// the read-only files it imports from (mounted at StdlibDir), and what it
// offers beyond the standard library. The default runtime is the standard
// library only; a profile such as "scientific" is another build of the same
// CPython with packages linked in.
type Runtime struct {
	// Profile names the build ("default", "scientific").
	Profile string
	// Module is the WebAssembly module, entered through the exports named
	// in this package. Shared: do not modify it.
	Module []byte
	// Lib holds the zips the module's entry code puts on sys.path, at its
	// root; the host mounts it read-only at StdlibDir.
	Lib fs.FS
	// Packages are the third-party packages the build can import, as
	// Describe lists them.
	Packages []port.Package
	// Warm are modules worth importing into the image every session
	// starts from (the packages' top-level modules): their first import
	// costs a session far more than a restore of the memory they fill.
	Warm []string
	// Limitations are what a program cannot do with the packages, in a
	// sentence each, for the capability description.
	Limitations []string
	// ID names the build: its artifacts' SHA256SUMS (which a test keeps
	// true to the embedded bytes). A host can key what it derives from
	// the build (an interpreter image) by it without hashing megabytes.
	// Empty: unknown.
	ID string
}

// Default returns the standard-library runtime of runtime/.
func Default() Runtime {
	return Runtime{Profile: DefaultProfile, Module: Module(), Lib: Stdlib(), ID: BuildID()}
}

// DefaultProfile names the runtime that has the standard library only.
const DefaultProfile = "default"
