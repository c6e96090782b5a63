// Package binding turns codeport's configuration into a bound
// CodeExecutionPort, the way gocloud.dev's URL openers bind a driver: the
// caller states what it wants in configuration (flags, CODEPORT_*
// environment variables or a YAML file) and gets the one adapter that
// serves it, with an honest capability description and purpose hint.
//
//	fv := binding.Flags(flag.CommandLine)
//	flag.Parse()
//	cfg, err := binding.Load(fv, os.Getenv)
//	if err != nil {
//		log.Fatal(err)
//	}
//	p, err := binding.Open(cfg, binding.Options{})
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer p.Close()
//	caps, _ := p.Describe(ctx) // caps.PurposeHint is what a model is told
package binding
