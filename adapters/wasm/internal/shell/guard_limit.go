//go:build !wasip1

package shell

// maxStackFrames is the stack guard's limit; see guard.go.
const maxStackFrames = 1 << 15
