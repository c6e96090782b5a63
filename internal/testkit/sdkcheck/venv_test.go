package sdkcheck

import (
	"testing"

	"github.com/codeport/codeport/internal/testkit/pyvenv"
)

// The SDK versions the check pins: the newest released when it was written.
// Changing one builds a new cached environment.
const (
	openaiVersion    = "3.57.0"
	anthropicVersion = "2.14.0"
)

// sdkPython returns the python of a cached virtual environment with the
// pinned openai and anthropic SDKs (see internal/testkit/pyvenv).
func sdkPython(t *testing.T) string {
	t.Helper()
	return pyvenv.Python(t, "sdkcheck", "openai=="+openaiVersion, "anthropic=="+anthropicVersion)
}
