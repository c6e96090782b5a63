//go:build !unix

package workspace

import (
	"os"
	"path/filepath"
)

// newClaim makes a claim under parent. Without flock(2) nothing can prove
// the claim alive to another process, so SweepClaims removes none: the
// claim is only a directory of this process's, removed by Release.
func newClaim(parent string) (*Claim, error) {
	dir := filepath.Join(parent, claimName())
	if err := os.MkdirAll(filepath.Join(dir, ClaimSessions), 0o700); err != nil {
		return nil, stripPath(err)
	}
	return &Claim{root: dir, dir: filepath.Join(dir, ClaimSessions)}, nil
}

// sweepClaim removes nothing: see newClaim.
func sweepClaim(string) (bool, error) { return false, nil }

// PrivateTempDir is unix only: elsewhere a process given no sessions
// directory makes a temporary one of its own.
func PrivateTempDir() (string, bool) { return "", false }
