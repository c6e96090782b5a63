package server_test

import (
	"log"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/server"
)

// Serving a backend over contract v1. Any port.CodeExecutionPort works; the
// example leaves out which.
func ExampleNewHandler() {
	var backend port.CodeExecutionPort // e.g. the wasm adapter
	if backend == nil {
		return
	}
	reg := prometheus.NewRegistry()
	h := server.NewHandler(backend,
		server.WithBearerToken(os.Getenv("CODEPORT_TOKEN")),
		server.WithLogger(slog.Default()),
		server.WithGatherer(reg),
		server.WithMaxUploadBytes(32<<20),
	)
	srv := &http.Server{
		Addr:              "127.0.0.1:8080",
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		// Bounds a request's body, not the execution that follows it.
		ReadTimeout: 5 * time.Minute,
		IdleTimeout: 2 * time.Minute,
	}
	log.Fatal(srv.ListenAndServe())
}
