package server

import (
	"log/slog"
	"strings"
	"time"

	"github.com/codeport/codeport/contract"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
)

// Defaults of the handler's limits.
const (
	// Code arrives inside a JSON string, so the cap leaves room for a large
	// program after escaping; the backend's own source limit still applies.
	defaultMaxRequestBytes = 10 << 20
	// Uploads are streamed, so the cap bounds the work wasted on a refused
	// upload rather than memory; the backend's file cap still applies.
	defaultMaxUploadBytes = 100 << 20
	// A body must come at 4 KiB/s at least (32 kbit/s, a poor mobile
	// link), averaged over 30 s: a small body has the whole window to
	// arrive, a large one must keep coming. The read timeout still bounds
	// the whole body.
	defaultMinBodyRate   = 4 << 10
	defaultMinBodyWindow = 30 * time.Second
	// Snapshots and restores each spool up to the snapshot cap to disk and
	// spend seconds of CPU on a large session: a few at once.
	defaultMaxSnapshotRequests = 4
)

// Option configures the handler NewHandler returns.
type Option func(*config)

type config struct {
	token           string
	tenants         *Tenants
	hosts           hostPolicy
	ready           func() bool
	gatherer        prometheus.Gatherer
	logger          *slog.Logger
	maxRequestBytes int64
	maxUploadBytes  int64
	tracerProvider  trace.TracerProvider
	// minBodyRate is in bytes per second; 0 is no minimum.
	minBodyRate         int64
	minBodyWindow       time.Duration
	maxSnapshotRequests int
	// errorBody shapes error answers (WithErrorBody); nil: contract v1's.
	errorBody func(status int, e contract.Error) any
}

func newConfig(opts []Option) config {
	c := config{
		logger:              slog.New(slog.DiscardHandler),
		maxRequestBytes:     defaultMaxRequestBytes,
		maxUploadBytes:      defaultMaxUploadBytes,
		minBodyRate:         defaultMinBodyRate,
		minBodyWindow:       defaultMinBodyWindow,
		maxSnapshotRequests: defaultMaxSnapshotRequests,
	}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithErrorBody makes every error answer's body shape(status, e) instead
// of contract v1's {"detail", "code"}: for a Guard in front of a handler
// of another protocol, whose clients read errors in that protocol's shape
// (OpenAI's, for the Containers API), so that the guard's own refusals
// (401, 403, 413) read as the handler's errors do. The status and the
// headers (WWW-Authenticate, Retry-After) are unchanged.
func WithErrorBody(shape func(status int, e contract.Error) any) Option {
	return func(c *config) { c.errorBody = shape }
}

// WithBearerToken requires "Authorization: Bearer <token>" on every route
// except /healthz, which orchestrators probe without credentials. The
// contract has no authentication of its own; a deployment reachable by
// anything but its one trusted client needs this. The comparison takes the
// same time whatever the presented credential. An empty token leaves the
// handler open.
func WithBearerToken(token string) Option {
	return func(c *config) { c.token = token }
}

// WithTenants requires a tenant's bearer key on every route except
// /healthz and keeps each tenant to its own sessions and limits (see
// Tenants). WithBearerToken's token, if also given, is the TokenTenant.
// The handler does not close ts.
func WithTenants(ts *Tenants) Option {
	return func(c *config) { c.tenants = ts }
}

// WithReady makes GET /healthz answer 503 until ready reports true, so a
// load balancer holds traffic back while the backend warms up (compiling a
// runtime can take seconds). Without it the handler is always ready. ready is
// called on every probe and must be safe for concurrent use.
func WithReady(ready func() bool) Option {
	return func(c *config) { c.ready = ready }
}

// WithGatherer serves the gatherer's metrics on GET /metrics in the
// Prometheus exposition format. Without it /metrics answers 404: the handler
// never reaches for the global registry on its own.
func WithGatherer(g prometheus.Gatherer) Option {
	return func(c *config) { c.gatherer = g }
}

// WithLogger logs one record per request: method, route pattern, status,
// duration and session id, plus the error behind a 5xx. Code, output and
// file contents are never logged. /healthz probes are logged at DEBUG, so
// that an orchestrator's probes do not fill the log. Without it nothing is
// logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithMaxRequestBytes caps JSON request bodies; a larger one is refused with
// 413. The default is 10 MiB; n <= 0 keeps it.
func WithMaxRequestBytes(n int64) Option {
	return func(c *config) {
		if n > 0 {
			c.maxRequestBytes = n
		}
	}
}

// WithMaxUploadBytes caps the whole multipart body of a file upload; a larger
// one is refused with 413 as soon as reading passes the cap, so a refused
// upload costs at most n bytes of work. The default is 100 MiB; n <= 0 keeps
// it.
func WithMaxUploadBytes(n int64) Option {
	return func(c *config) {
		if n > 0 {
			c.maxUploadBytes = n
		}
	}
}

// WithAllowedHosts sets the host names the handler answers to, besides the
// loopback ones (localhost, 127.0.0.1 and any other 127.x address, ::1),
// which are always accepted. A request whose Host header names another host
// is refused with 403 (code host_not_allowed), and so is one a browser sent
// from another origin (an Origin header other than the request's own host).
// /healthz is exempt, as it is from authentication. Names are compared
// without regard to case; a port, in the Host header or here, is ignored.
// "*" turns the check off; no names at all keeps the loopback ones only,
// but checks every request.
//
// Without this option the check applies only where it is needed and
// cannot break a deployment: to requests that arrive on a loopback
// address while no bearer token is configured. That is the server a web
// page in a browser on the same machine can reach, by DNS rebinding (a
// name of the attacker's that resolves to 127.0.0.1, so the browser sends
// the attacker's name as the Host) or by a cross-origin request; the
// contract has no authentication of its own to stop either. A server
// behind a proxy on the same machine that passes on the client's Host
// needs that name here.
func WithAllowedHosts(hosts ...string) Option {
	return func(c *config) {
		for _, h := range hosts {
			if strings.TrimSpace(h) == "*" {
				c.hosts.any = true
				continue
			}
			if n := hostName(h); n != "" {
				c.hosts.names = append(c.hosts.names, n)
			}
		}
		c.hosts.explicit = true
	}
}

// WithMinBodyRate cuts off a request body that arrives slower than
// bytesPerSecond, averaged over window: it is answered 408 (code
// request_timeout) and its connection closed, as a body that outlasts
// the server's read timeout is. A body may pause for up to window, and
// must then catch up; a small body has the whole window to arrive. It
// applies to every route's body, and ends with the body: an execution
// is never cut by it. The default is 4 KiB per second over 30 s;
// bytesPerSecond 0 (or less) turns it off, and window <= 0 keeps the
// default window. It needs an http.Server (it sets the connection's read
// deadline), and never extends that server's ReadTimeout.
func WithMinBodyRate(bytesPerSecond int64, window time.Duration) Option {
	return func(c *config) {
		c.minBodyRate = max(bytesPerSecond, 0)
		if window > 0 {
			c.minBodyWindow = window
		}
	}
}

// WithMaxSnapshotRequests bounds the snapshots and restores the handler
// serves at once (POST /sessions/{id}/snapshot, POST /snapshots/restore):
// each holds a temporary file of up to the snapshot cap and spends CPU on
// the session's memory. One more is refused with 503 (code at_capacity)
// and Retry-After, before its body is read. The default is 4; n <= 0
// keeps it.
func WithMaxSnapshotRequests(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxSnapshotRequests = n
		}
	}
}
