// Command defaultonly is a program that imports the wasm adapter and no
// profile package: TestProfilesAreOptIn lists its packages and runs it to
// see the scientific profile refused with the import it needs.
package main

import (
	"fmt"
	"os"

	"github.com/codeport/codeport/adapters/wasm"
)

func main() {
	fmt.Println(wasm.Profiles())
	if err := wasm.NewConfig().WithProfile("scientific").Settings().Validate(); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
}
