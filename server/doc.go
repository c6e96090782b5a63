// Package server serves any port.CodeExecutionPort over code-execution
// contract v1, to gateways such as Otari: NewHandler returns the
// http.Handler, plus /healthz, /capabilities, /metrics and /openapi.yaml.
//
// It is kept apart from package contract, which holds only the wire types,
// so that a client of contract v1 (adapters/http, a gateway) does not link
// an HTTP server and Prometheus.
//
// The handler is where the contract's promises are kept whatever the
// backend does: errors become the statuses the contract names (404 unknown
// session, 409 busy, 503 with Retry-After at capacity or shutting down,
// ...), bad input never becomes a 5xx, uploads are streamed into the
// workspace rather than buffered, and a client that disconnects cancels its
// execution. Every error body is {"detail": "...", "code": "..."}: detail
// is what contract v1 clients read, code one of contract.ErrorCodes, from
// which the status is decided.
//
// Serving a backend:
//
//	var p port.CodeExecutionPort = ... // any adapter
//	h := server.NewHandler(p,
//		server.WithBearerToken(os.Getenv("CODEPORT_TOKEN")),
//		server.WithLogger(slog.Default()),
//		server.WithGatherer(prometheus.DefaultGatherer),
//	)
//	srv := &http.Server{Addr: ":8080", Handler: h,
//		ReadHeaderTimeout: 10 * time.Second, // a client that stalls is let go
//		ReadTimeout:       5 * time.Minute,  // bodies; never cuts an execution
//		IdleTimeout:       2 * time.Minute,  // idle keep-alive connections
//	}
//	log.Fatal(srv.ListenAndServe())
//
// Tenants: several clients, each with API keys and limits of its own, and
// each kept to its own sessions (see Tenants):
//
//	ts, err := server.NewTenants(server.TenantsConfig{
//		Tenants: []server.Tenant{{Name: "acme", Keys: [][32]byte{server.KeyDigest(acmeKey)},
//			MaxSessions: 8, ExecutionsPerSecond: 5, Burst: 10}},
//		OwnersFile: "/var/lib/codeport/tenant-owners.jsonl", // ownership across restarts
//		Registerer: reg,
//	})
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer ts.Close()
//	h := server.NewHandler(p, server.WithTenants(ts), server.WithGatherer(reg))
//
// Other listeners: NewGuard takes the same options and applies the same
// host and origin rules, credentials, tenants and body cap to a handler of
// another protocol over the same port (codeport mcp --listen); its Port
// keeps each tenant to its own sessions and limits there too.
//
// Tracing: WithTracerProvider makes an OpenTelemetry span per request,
// named by its route pattern and continuing the client's W3C traceparent;
// the port's calls (with a telemetry/tracing observer) are its children.
//
//	h := server.NewHandler(p, server.WithTracerProvider(tp))
//
// Hostile input: JSON routes take only application/json bodies, and a body
// that repeats a key is refused; an unauthenticated handler on loopback
// answers only to loopback host names (WithAllowedHosts); an upload with a
// second path or file part is refused, and writes nothing. (Its path part
// may come before or after its file part: a file sent first is spooled to
// a temporary file, refused as soon as it passes the port's file limit.)
// A body that arrives slower than the minimum rate (WithMinBodyRate) is
// cut off with 408. Snapshots and restores are admitted before they read
// or touch anything: a slot of those at once (WithMaxSnapshotRequests),
// the tenant's session and execution limits, and, for a restore, the
// port's room for a session and its snapshot cap.
package server
