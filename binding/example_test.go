package binding_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/binding"
	"github.com/codeport/codeport/port/porttest"
	"github.com/codeport/codeport/server"
)

// A gateway that offers only a remote sandbox registers only its opener,
// and links nothing of the runtime. The configuration (here the
// environment) names the sandbox.
func Example() {
	sandbox := httptest.NewServer(server.NewHandler(porttest.New()))
	defer sandbox.Close()
	env := map[string]string{"CODEPORT_SANDBOX_URL": sandbox.URL, "CODEPORT_TIMEOUT": "45s"}

	b, err := binding.New(httpadapter.Opener())
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := b.Load(nil, func(k string) string { return env[k] })
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Settings("http").(*httpadapter.Settings).Timeout)
	p, err := b.Open(cfg, binding.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	caps, err := p.Describe(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Adapter, caps.Backend, caps.PurposeHint != "")
	// Output:
	// 45s
	// http http true
}
