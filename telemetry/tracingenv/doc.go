// Package tracingenv configures OpenTelemetry tracing from the standard
// OTEL_* environment variables, for a program's main (`codeport serve` and
// its workers): the library packages never read the environment, and take
// the provider it builds as an option instead.
//
// Tracing is off, at no cost, unless OTEL_TRACES_EXPORTER,
// OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set;
// OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn it off too.
// Exporters are otlp (over http/protobuf or grpc, from
// OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL) and console; anything else is an
// error at start-up.
//
//	t, err := tracingenv.New(ctx, tracingenv.Config{Getenv: os.Getenv, Console: os.Stderr})
//	if err != nil {
//		return err // a value the program does not understand
//	}
//	defer func() {
//		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
//		defer cancel()
//		_ = t.Shutdown(ctx) // flush what is left
//	}()
//	bound, err := b.Open(cfg, binding.Options{TracerProvider: t.TracerProvider()})
package tracingenv
