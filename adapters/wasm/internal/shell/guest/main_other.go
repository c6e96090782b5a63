//go:build !wasip1

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "the shell guest runs only as a WASI program; see ../wasmshell/runtime/build.sh")
	os.Exit(2)
}
