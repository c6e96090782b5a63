package scientific

import (
	"github.com/codeport/codeport/adapters/wasm/internal/cpython"
	"github.com/codeport/codeport/adapters/wasm/internal/cpython/scientific"
)

// Profile is the name of the profile setting that chooses this runtime.
const Profile = scientific.Profile

func init() { cpython.Register(scientific.Profile, scientific.Runtime) }
