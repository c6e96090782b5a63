// Package binding turns codeport's configuration into a bound port, the
// way gocloud.dev's URL openers bind a driver: a program registers the
// adapters it offers, the caller states what it wants in configuration
// (flags, CODEPORT_* environment variables or a YAML file), and gets the
// one adapter that serves it, with an honest capability description and
// purpose hint.
//
// Registration is explicit and per Binder (there is no package state), so
// a program links only the adapters it registers: a gateway that binds a
// remote sandbox alone links neither the runtime nor the worker protocol.
//
//	b, err := binding.New(wasm.Opener(nil), httpadapter.Opener())
//	if err != nil {
//		log.Fatal(err)
//	}
//	fv := b.Flags(flag.CommandLine)
//	flag.Parse()
//	cfg, err := b.Load(fv, os.Getenv)
//	if err != nil {
//		log.Fatal(err)
//	}
//	p, err := b.Open(cfg, binding.Options{})
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer p.Close()
//	caps, _ := p.Describe(ctx) // caps.PurposeHint is what a model is told
//
// Options carry what is not configuration: a logger, observers, and a
// TracerProvider, which traces every call of the bound port (a span per
// call, telemetry/tracing) and the remote adapter's requests; package
// tracingenv builds one from the OTEL_* variables.
//
//	p, err := b.Open(cfg, binding.Options{TracerProvider: tp})
//
// Settings are declared by each adapter's settings type in struct tags
// (`setting:"memory-limit" unit:"bytes" help:"..."`); the flag, the
// environment variable and the YAML key all derive from the tag, and a
// setting two adapters declare under one name (every runtime has a
// timeout) is one setting that sets both. An adapter's Opener hands its
// filled settings to its Config whole, with the Config's WithSettings.
package binding
