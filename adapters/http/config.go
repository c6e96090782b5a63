package httpadapter

import (
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// Defaults of Config.
const (
	DefaultTimeoutMargin    = 10 * time.Second
	DefaultExecTimeout      = 30 * time.Second
	DefaultRequestTimeout   = 30 * time.Second
	DefaultMaxFileBytes     = 100 << 20
	DefaultMaxResponseBytes = 64 << 20
)

// Settings are the adapter's settings, the one place they are defined:
// flags, CODEPORT_* environment variables and YAML files set the tagged
// ones (see package binding), and Validate checks them all. Settings is
// plain data, to be filled and checked; a Config takes them only through
// its With methods: WithSettings for a whole Settings, the others for one
// setting each.
type Settings struct {
	// URL is the backend's base URL (for example "http://127.0.0.1:8080",
	// or "https://host/prefix" behind a reverse proxy).
	URL string `json:"url" setting:"sandbox-url" help:"base URL of a remote contract v1 backend; when set it is bound (the http adapter) instead of the in-process runtime"`
	// Token is sent as "Authorization: Bearer <token>"; empty sends none.
	Token string `json:"-" setting:"sandbox-token" help:"bearer token for the remote backend"`
	// Timeout is the timeout the backend applies to a call that grants
	// none (see WithDefaultTimeout).
	Timeout time.Duration `json:"timeout" setting:"timeout" help:"execution timeout of a call that asks for none"`
	// FileLimit caps a downloaded file (see WithMaxFileBytes).
	FileLimit int64 `json:"file_limit" setting:"file-limit" unit:"bytes" help:"largest file transferred"`
	// TimeoutMargin, RequestTimeout and MaxResponseBytes: see
	// WithTimeoutMargin, WithRequestTimeout and WithMaxResponseBytes.
	TimeoutMargin    time.Duration `json:"timeout_margin"`
	RequestTimeout   time.Duration `json:"request_timeout"`
	MaxResponseBytes int64         `json:"max_response_bytes"`
}

// DefaultSettings are the defaults: no backend, no token, a 10 s margin
// over the granted timeout, 30 s assumed when a request grants none, 30 s
// for other calls, files of up to 100 MiB and JSON responses of up to
// 64 MiB.
func DefaultSettings() Settings {
	return Settings{
		TimeoutMargin:    DefaultTimeoutMargin,
		Timeout:          DefaultExecTimeout,
		RequestTimeout:   DefaultRequestTimeout,
		FileLimit:        DefaultMaxFileBytes,
		MaxResponseBytes: DefaultMaxResponseBytes,
	}
}

// Validate reports the first setting out of range.
func (s Settings) Validate() error {
	_, err := s.base()
	return err
}

// Config configures the adapter: its Settings, plus what cannot be a
// setting (an HTTP client, a logger). Start from NewConfig and set what
// differs with the With methods, each of which returns a modified copy:
// WithSettings for the whole set (as package binding does), the others
// for one setting each. The settings are not fields of Config, so that
// there is one way to set each, and a Config handed on cannot be changed
// behind its holder.
type Config struct {
	settings       Settings
	client         *http.Client
	logger         *slog.Logger
	tracerProvider trace.TracerProvider
}

// NewConfig returns DefaultSettings for the backend at baseURL, with a
// connection-reusing HTTP client of the adapter's own and no logs.
func NewConfig(baseURL string) Config {
	s := DefaultSettings()
	s.URL = baseURL
	return Config{settings: s, logger: slog.New(slog.DiscardHandler)}
}

// WithSettings replaces every setting with s, the backend's URL and token
// included: the way to apply settings read from flags, CODEPORT_*
// environment variables or YAML (package binding). New validates them.
func (c Config) WithSettings(s Settings) Config { c.settings = s; return c }

// WithToken sends "Authorization: Bearer <token>" with every request. An
// empty token sends none.
func (c Config) WithToken(token string) Config { c.settings.Token = token; return c }

// WithHTTPClient sets the HTTP client. By default the adapter makes its own:
// a transport tuned to keep connections to the backend open for reuse
// (64 idle connections per host), redirects not followed, and no overall
// Timeout, since every call gets its own wall clock. A client given here is
// used as is; its Timeout, if any, also applies. nil restores the default.
func (c Config) WithHTTPClient(hc *http.Client) Config { c.client = hc; return c }

// WithTimeoutMargin sets how much longer than the timeout it grants Execute
// waits for the answer (default 10 s, as Otari's gateway allows). The
// margin covers transport and the backend's own teardown; without it a
// program that runs to its deadline would be reported as an unreachable
// backend.
func (c Config) WithTimeoutMargin(d time.Duration) Config { c.settings.TimeoutMargin = d; return c }

// WithDefaultTimeout sets the timeout Execute assumes the backend applies
// when a request grants none (default 30 s), for its wall clock. Set it to
// the backend's default timeout: a shorter one gives up on programs the
// backend is still running. Requests without a timeout are sent without
// one, so the backend's own default applies.
func (c Config) WithDefaultTimeout(d time.Duration) Config { c.settings.Timeout = d; return c }

// WithRequestTimeout sets the wall clock of every call but Execute (default
// 30 s). File transfers restart it whenever bytes move, so it bounds a
// stall, not a transfer.
func (c Config) WithRequestTimeout(d time.Duration) Config { c.settings.RequestTimeout = d; return c }

// WithMaxFileBytes caps the size of a file GetFile returns (default
// 100 MiB). A file announced larger is refused before its bytes are read;
// one that turns out larger while streaming fails the Read that passes the
// cap. Both errors wrap port.ErrFileTooLarge. Uploads are capped by the
// backend.
func (c Config) WithMaxFileBytes(n int64) Config { c.settings.FileLimit = n; return c }

// WithMaxResponseBytes caps JSON response bodies (default 64 MiB); a larger
// one is port.ErrBackendUnreachable. It must leave room for the backend's
// output limit on both streams, after JSON escaping.
func (c Config) WithMaxResponseBytes(n int64) Config { c.settings.MaxResponseBytes = n; return c }

// WithLogger sets the logger. The adapter logs one debug record per call
// (method, route, status, duration, session id) and warns about an
// unreachable backend; never code, output, file contents or the token.
func (c Config) WithLogger(l *slog.Logger) Config {
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	c.logger = l
	return c
}

// newDefaultClient is the client used when none is configured.
func newDefaultClient() *http.Client {
	var t *http.Transport
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		t = dt.Clone()
	} else {
		t = &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true}
	}
	// A gateway talks to one backend, many calls at a time: keep enough
	// connections to it for reuse instead of the default 2 per host.
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 64
	t.IdleConnTimeout = 90 * time.Second
	// An execution may take as long as its granted timeout before any
	// header arrives; each call's own wall clock bounds the wait instead.
	t.ResponseHeaderTimeout = 0
	return &http.Client{
		Transport: t,
		// A contract v1 backend never redirects, and following one would
		// turn a POST into a GET and carry the token elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
