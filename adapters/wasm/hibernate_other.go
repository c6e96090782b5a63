//go:build !unix

package wasm

import (
	"errors"
	"os"
)

// lockDir: a hibernation directory of its own needs flock(2).
func lockDir(string) (*os.File, error) {
	return nil, errors.New("needs a Unix host (flock)")
}
