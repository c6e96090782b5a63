// Command remoteonly is a gateway that binds only a remote sandbox: the
// program binding's dependency test lists the packages of.
package main

import (
	"os"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/binding"
)

func main() {
	b, err := binding.New(httpadapter.Opener())
	if err != nil {
		panic(err)
	}
	cfg, err := b.Load(nil, os.Getenv)
	if err != nil {
		panic(err)
	}
	p, err := b.Open(cfg, binding.Options{})
	if err != nil {
		panic(err)
	}
	_ = p.Close()
}
