// Package contract speaks code-execution contract v1 over HTTP: its JSON wire
// shapes, their conversions to and from the port's types, and an
// http.Handler that serves any port.CodeExecutionPort to gateways such as
// Otari.
//
// The handler is where the contract's promises are kept whatever the backend
// does: errors become the statuses the contract names (404 unknown session,
// 409 busy, 503 with Retry-After at capacity, ...), bad input never becomes a
// 5xx, uploads are streamed into the workspace rather than buffered, and a
// client that disconnects cancels its execution.
//
// Serving a backend:
//
//	var p port.CodeExecutionPort = ... // any adapter
//	h := contract.NewHandler(p,
//		contract.WithBearerToken(os.Getenv("CODEPORT_TOKEN")),
//		contract.WithLogger(slog.Default()),
//		contract.WithGatherer(prometheus.DefaultGatherer),
//	)
//	srv := &http.Server{Addr: ":8080", Handler: h, ReadHeaderTimeout: 10 * time.Second}
//	log.Fatal(srv.ListenAndServe())
//
// A contract v1 client uses the same wire types the other way round:
// ExecRequestFromPort to build a request body, ResultToPort to read the
// response, which tolerates the nulls and unknown fields other backends may
// send.
//
// OpenAPI returns the OpenAPI 3.1 document of what the handler serves, which
// it also serves on GET /openapi.yaml.
package contract
