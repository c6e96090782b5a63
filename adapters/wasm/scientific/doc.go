// Package scientific adds the scientific runtime profile to the wasm
// adapter: the same CPython 3.13 build as the default runtime with numpy,
// pandas, sympy, Pillow and their pure-Python dependencies built in.
// Importing the package for its side effect registers the profile; a
// program that does not import it does not carry the profile's module and
// packages (about 55 MB of the binary).
//
//	import (
//		"github.com/codeport/codeport/adapters/wasm"
//		_ "github.com/codeport/codeport/adapters/wasm/scientific"
//	)
//
//	p, err := wasm.New(wasm.NewConfig().WithProfile(scientific.Profile))
//
// Without the import, the profile setting "scientific" is refused with an
// error that names this package.
package scientific
