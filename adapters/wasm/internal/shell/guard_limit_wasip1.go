//go:build wasip1

package shell

// maxStackFrames is the stack guard's limit in the WASI guest, where the
// shell runs: about 1,500 levels of plain function recursion, 900 of eval
// or $(...). See guard.go.
const maxStackFrames = 1 << 14
