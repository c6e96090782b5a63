//go:build !unix

package wasm

import (
	"errors"
	"log/slog"
	"os"
	"time"
)

// noFollow: no such flag here; a configured hibernation directory needs
// a Unix host anyway (lockDir).
const noFollow = 0

// nonBlock: no FIFOs to wait on here.
const nonBlock = 0

// lockDir: a hibernation directory of its own needs flock(2).
func lockDir(string) (*os.File, error) {
	return nil, errors.New("needs a Unix host (flock)")
}

// checkHibernateDir: modes are Unix's.
func checkHibernateDir(string, *slog.Logger) error { return nil }

// touchNoFollow sets path's times to now.
func touchNoFollow(path string) {
	now := time.Now()
	_ = os.Chtimes(path, now, now)
}
