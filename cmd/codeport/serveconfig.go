package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/binding"
	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/gateway/containers"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/server"
)

// Bounds of serve's HTTP server beyond its settings (binding.Config's
// read and keep-alive timeouts).
const (
	// headerTimeout bounds the request line and headers alone.
	headerTimeout = 10 * time.Second
	// maxHeaderBytes is far above any real client's headers (the default
	// is 1 MiB): it bounds what each connection may make the server hold
	// before a handler runs.
	maxHeaderBytes = 64 << 10
	// writeMargin is what a response may take beyond the body's read and
	// the longest execution: stopping the program, creating a session,
	// writing the answer.
	writeMargin = time.Minute
)

// maxTokenFileBytes bounds what is read of a token file: a token is a line.
const maxTokenFileBytes = 4096

// authToken is the bearer token serve requires, from --auth-token (or
// CODEPORT_AUTH_TOKEN, or the YAML file) or --auth-token-file, at most one
// of them. warnings are for the log: they never quote the token.
func authToken(cfg binding.Config, tokenFlagGiven bool) (token string, warnings []string, err error) {
	switch {
	case cfg.AuthToken != "" && cfg.AuthTokenFile != "":
		return "", nil, errors.New("give auth-token or auth-token-file, not both")
	case cfg.AuthTokenFile != "":
		return readSecretFile("auth-token-file", cfg.AuthTokenFile)
	case tokenFlagGiven:
		// Any user of the machine can read a process's arguments.
		warnings = append(warnings, "--auth-token is visible to every user of this machine in the process list; use --auth-token-file or CODEPORT_AUTH_TOKEN instead")
	}
	return cfg.AuthToken, warnings, nil
}

// snapshotKey is the key of --snapshot-key-file, or nil without one (then
// snapshots are off).
func snapshotKey(cfg binding.Config) ([]byte, []string, error) {
	if cfg.SnapshotKeyFile == "" {
		return nil, nil, nil
	}
	key, warnings, err := readSecretFile("snapshot-key-file", cfg.SnapshotKeyFile)
	if err != nil {
		return nil, nil, err
	}
	if len(key) < port.MinSnapshotKeyBytes {
		return nil, nil, fmt.Errorf("snapshot-key-file %s: the key is %d bytes; it must be at least %d (for example 48 random bytes in base64)", cfg.SnapshotKeyFile, len(key), port.MinSnapshotKeyBytes)
	}
	return []byte(key), warnings, nil
}

// readSecretFile reads a token or key file (setting names it in errors):
// one line, surrounding white space dropped. A file that other users may
// write is refused, since whoever writes it chooses the secret; one that they may read is used with a
// warning, because that is how container runtimes mount secrets (Docker's
// are 0444, Kubernetes' 0644 unless told otherwise) where the other users
// are the container's own.
func readSecretFile(setting, path string) (string, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", setting, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", setting, err)
	}
	if !fi.Mode().IsRegular() {
		return "", nil, fmt.Errorf("%s %s: not a regular file", setting, path)
	}
	perm := fi.Mode().Perm()
	if perm&0o002 != 0 {
		return "", nil, fmt.Errorf("%s %s: mode %#o lets every user replace the secret; chmod o-w it (0600 is best)", setting, path, perm)
	}
	var warnings []string
	if perm&0o004 != 0 {
		warnings = append(warnings, fmt.Sprintf("%s %s has mode %#o: every user of this machine can read the secret; chmod 600 it unless only trusted users share the machine", setting, path, perm))
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFileBytes+1))
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", setting, err)
	}
	if len(b) > maxTokenFileBytes {
		return "", nil, fmt.Errorf("%s %s: over %d bytes; it must hold the secret alone", setting, path, maxTokenFileBytes)
	}
	tok := strings.TrimSpace(string(b))
	switch {
	case tok == "":
		return "", nil, fmt.Errorf("%s %s is empty", setting, path)
	case strings.ContainsAny(tok, "\r\n"):
		return "", nil, fmt.Errorf("%s %s: more than one line; it must hold the secret alone", setting, path)
	case strings.ContainsFunc(tok, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "", nil, fmt.Errorf("%s %s: the secret contains control characters", setting, path)
	}
	return tok, warnings, nil
}

// tenantsOf is serve's tenants, from the YAML file's tenants section (nil
// without one). A key given by file is read as auth-token-file is, must
// be at least server.MinTenantKeyBytes long, and, when the path is
// relative, is found beside the YAML file. Every mistake is reported at
// once; warnings (a key file others may read) never quote a key.
//
// The auth-token, when also given, serves as the operator's own tenant
// (server.TokenTenant, without limits), so it must not be a tenant's key.
func tenantsOf(cfg binding.Config, token string) ([]server.Tenant, []string, error) {
	if len(cfg.Tenants) == 0 {
		return nil, nil, nil
	}
	var (
		out      []server.Tenant
		warnings []string
		errs     []error
	)
	tokenDigest := server.KeyDigest(token)
	for _, c := range cfg.Tenants {
		t := server.Tenant{Name: c.Name, MaxSessions: c.MaxSessions, ExecutionsPerSecond: c.ExecutionsPerSecond, Burst: c.Burst}
		for _, k := range c.Keys {
			var digest [sha256.Size]byte
			if k.File == "" {
				copy(digest[:], k.SHA256)
			} else {
				path := k.File
				if !filepath.IsAbs(path) && cfg.ConfigFile != "" {
					path = filepath.Join(filepath.Dir(cfg.ConfigFile), path)
				}
				setting := fmt.Sprintf("tenant %s's key file (line %d)", c.Name, k.Line)
				key, w, err := readSecretFile(setting, path)
				if err == nil && len(key) < server.MinTenantKeyBytes {
					err = fmt.Errorf("%s %s: the key is %d bytes; it must be at least %d (for example 32 random bytes in base64)", setting, path, len(key), server.MinTenantKeyBytes)
				}
				if err != nil {
					errs = append(errs, err)
					continue
				}
				warnings = append(warnings, w...)
				digest = server.KeyDigest(key)
			}
			if token != "" && digest == tokenDigest {
				errs = append(errs, fmt.Errorf("tenant %s (line %d): its key is the auth-token; the token is the operator's own credential and must differ from every tenant's key", c.Name, k.Line))
			}
			t.Keys = append(t.Keys, digest)
		}
		out = append(out, t)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	if err := server.CheckTenants(out); err != nil {
		return nil, nil, err
	}
	return out, warnings, nil
}

// ownersFileName is the file, in the wasm adapter's hibernate-dir, that
// keeps which tenant owns which session (server.TenantsConfig.OwnersFile).
const ownersFileName = "tenant-owners.jsonl"

// ownersFile is where serve keeps session ownership across restarts: in
// the hibernate-dir when the bound adapter keeps sessions there, so that
// ownership survives exactly what the sessions survive (the adapter locks
// the directory to one process, which covers the file too). Elsewhere
// sessions end with the process, and ownership is kept in memory ("").
// A remote backend's sessions outlive a restart of serve, but their
// owners do not: they then fail closed, reachable by nobody until the
// backend reclaims them.
func ownersFile(cfg binding.Config, adapter string) (string, error) {
	s, ok := cfg.Settings(adapter).(*wasm.Settings)
	if !ok || s.HibernateDir == "" {
		return "", nil
	}
	dir, err := filepath.Abs(s.HibernateDir)
	if err != nil {
		return "", fmt.Errorf("hibernate-dir: %w", err)
	}
	return filepath.Join(dir, ownersFileName), nil
}

// newHTTPServer is serve's http.Server: every phase of a connection in
// which the client, not the backend, keeps the server waiting is bounded.
//
//   - ReadHeaderTimeout bounds the request line and headers; ReadTimeout
//     the whole request, body included. An unread body past it is
//     answered 408 and its connection closed. It does not cut an
//     execution: net/http lifts the read deadline once the body has been
//     read, to watch for the client going away.
//   - IdleTimeout closes a keep-alive connection no request comes on; left
//     at zero it fell back to ReadTimeout, and without either, idle
//     connections were held for ever.
//   - WriteTimeout runs from the end of the headers to the end of the
//     response, which for an exec comes only after the execution: it is
//     the read timeout plus the longest execution (maxExec) plus a margin,
//     so that it never cuts a call, yet a client that stops reading its
//     answer (a download) is let go. With maxExec unknown (0), there is
//     none.
//   - MaxHeaderBytes bounds what a connection can make the server hold
//     before a handler runs.
func newHTTPServer(h http.Handler, s binding.Config, maxExec time.Duration, logger *slog.Logger) *http.Server {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: min(headerTimeout, s.ReadTimeout),
		ReadTimeout:       s.ReadTimeout,
		IdleTimeout:       s.KeepaliveTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	if maxExec > 0 {
		srv.WriteTimeout = s.ReadTimeout + maxExec + writeMargin
	}
	return srv
}

// hostCheckSummary says, for the startup log, which hosts are answered.
func hostCheckSummary(hosts []string, token bool) string {
	switch {
	case slices.Contains(hosts, "*"):
		return "off"
	case len(hosts) > 0:
		return "loopback names and " + strings.Join(hosts, ", ")
	case token:
		return "off (a bearer credential is required)"
	}
	return "loopback names, on loopback connections"
}

// access is who may call a listener, and from where: the bearer token,
// the tenants and the allowed hosts of the configuration. serve's handler
// and mcp --listen's guard are given the same options (accessOptions), so
// that every listener answers to the same rules.
type access struct {
	token   string
	tenants []server.Tenant
	hosts   []string
}

// loadAccess reads the token (tokenFlag: given by --auth-token) and the
// tenants; warnings are for the log, and never quote a secret.
func loadAccess(cfg binding.Config, tokenFlag bool) (access, []string, error) {
	token, warnings, err := authToken(cfg, tokenFlag)
	if err != nil {
		return access{}, nil, err
	}
	tenants, tw, err := tenantsOf(cfg, token)
	if err != nil {
		return access{}, nil, err
	}
	hosts, _ := cfg.AllowedHostList() // checked by Load
	return access{token: token, tenants: tenants, hosts: hosts}, append(warnings, tw...), nil
}

// authenticated reports whether a credential is required.
func (a access) authenticated() bool { return a.token != "" || a.tenants != nil }

// accessOptions are the server options that a configures, for the
// backend bound as adapter. ts, when tenants are configured, is theirs:
// close it after the server has stopped. code is the exit status an error
// calls for.
func (a access) accessOptions(cfg binding.Config, adapter string, reg prometheus.Registerer, logger *slog.Logger) (opts []server.Option, ts *server.Tenants, code int, err error) {
	if a.token != "" {
		opts = append(opts, server.WithBearerToken(a.token))
	}
	if a.tenants != nil {
		owners, err := ownersFile(cfg, adapter)
		if err != nil {
			return nil, nil, 2, err
		}
		ts, err = server.NewTenants(server.TenantsConfig{Tenants: a.tenants, OwnersFile: owners, Registerer: reg, Logger: logger})
		if err != nil {
			return nil, nil, 1, err
		}
		opts = append(opts, server.WithTenants(ts))
	}
	if a.hosts != nil {
		opts = append(opts, server.WithAllowedHosts(a.hosts...))
	}
	return opts, ts, 0, nil
}

// containersUploadCap is the Containers API's cap on a request body when
// the backend names no file limit: the contract's default upload cap.
const containersUploadCap = 100 << 20

// newContainersAPI is serve's Containers API, for containers-api: OpenAI's
// Containers API (gateway/containers) over bound, behind a guard with the
// contract's access options (accessOpts: the token, the tenants, the
// hosts), so that the same credentials reach it and each tenant's
// containers are sessions of its own, held to its max_sessions and
// execution rate. The guard's cap on a body is the backend's file limit
// and a margin for the form, as the contract's upload cap is; the
// handler caps JSON bodies lower itself. Close the store after the
// server has stopped and before the tenants and the port close.
func newContainersAPI(cfg binding.Config, bound port.CodeExecutionPort, fileBytes int64, accessOpts []server.Option, logger *slog.Logger) (*containers.Store, http.Handler) {
	limit := int64(containersUploadCap)
	if fileBytes > 0 {
		limit = fileBytes + 64<<10
	}
	// The guard's own refusals (401, 403, 413) in OpenAI's error shape, as
	// the API's errors are, so that an OpenAI client reads their message.
	errorBody := server.WithErrorBody(func(status int, e contract.Error) any {
		return containers.ErrorBody(status, e.Code, e.Detail)
	})
	guard := server.NewGuard(append(slices.Clone(accessOpts), server.WithLogger(logger), server.WithMaxRequestBytes(limit), errorBody)...)
	opts := []containers.Option{
		containers.WithMaxContainers(cfg.MaxContainers),
		containers.WithDefaultExpiry(cfg.ContainerExpiry),
		containers.WithLogger(logger),
		containers.WithTenantOf(func(ctx context.Context) string {
			c, _ := server.CallerOf(ctx)
			return c.Tenant()
		}),
		// The store ends containers (expiry, Close) in a context of its
		// own: it carries the creator's tenant, whose session it is.
		containers.WithBackgroundContext(func(ctx context.Context) context.Context {
			c, _ := server.CallerOf(ctx)
			return c.Context(context.Background())
		}),
	}
	if cfg.NodeID != "" {
		opts = append(opts, containers.WithNodeID(cfg.NodeID))
	}
	store := containers.New(guard.Port(bound), opts...)
	return store, guard.Handler(containers.NewHandler(store, containers.WithHandlerLogger(logger)))
}

// withContainersAPI serves api for the Containers API's paths and
// contract for every other, as it did alone.
func withContainersAPI(contract, api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == containers.APIPrefix || strings.HasPrefix(p, containers.APIPrefix+"/") {
			api.ServeHTTP(w, r)
			return
		}
		contract.ServeHTTP(w, r)
	})
}
