// Package sdkcheck holds only a test: it builds the items, streaming events
// and blocks that gateway/responses and gateway/messages produce, and has
// the official openai and anthropic Python SDKs, installed by pip into a
// throwaway virtual environment, parse them into their typed models and
// round-trip them without loss (testdata/check_sdks.py).
//
// The virtual environment is cached under the user cache directory
// (codeport/sdkcheck-venv-…, keyed by the Python and SDK versions), so only
// the first run installs anything. Without python3, its venv module or pip
// the test says so and is skipped, except under CI=true, where it fails.
package sdkcheck
