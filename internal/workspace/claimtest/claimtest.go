// Package claimtest makes, for the adapters' tests, what a server killed
// with kill -9 leaves in a sessions directory (see workspace.ClaimDir).
package claimtest

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/codeport/codeport/internal/workspace"
)

// Dead makes under parent what a server killed with kill -9 leaves
// in its sessions directory: a claim (workspace.ClaimDir's layout, with
// its marked lock file) whose lock nobody holds, holding a user's file at
// userPath below the claim's sessions directory. It returns the claim's
// directory. That the lock of a really killed process is free is
// internal/workspace's test; an adapter's is that it sweeps such claims
// when it starts, and only those.
func Dead(t testing.TB, parent, userPath string) string {
	t.Helper()
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	dir := filepath.Join(parent, "codeport-999999-"+hex.EncodeToString(b))
	user := filepath.Join(dir, workspace.ClaimSessions, filepath.FromSlash(userPath))
	if err := os.MkdirAll(filepath.Dir(user), 0o700); err != nil {
		t.Fatal(err)
	}
	for p, data := range map[string]string{
		user: "private",
		filepath.Join(dir, workspace.ClaimLockFile): workspace.ClaimMarker,
	} {
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
