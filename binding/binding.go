package binding

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
	"gopkg.in/yaml.v3"

	"github.com/codeport/codeport/gateway/containers"
	"github.com/codeport/codeport/internal/purpose"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/telemetry/tracing"
)

// Opener binds one adapter from configuration. Each adapter package
// provides one (wasm.Opener, subprocess.Opener, httpadapter.Opener), so a
// program links only the adapters it registers with New.
type Opener interface {
	// Name names the adapter ("wasm", "subprocess", "http").
	Name() string
	// Isolation is the isolation setting that selects the adapter
	// ("in-process", "process"), or "" for one that only Claims selects.
	Isolation() string
	// NewSettings returns the adapter's settings with their defaults: a
	// pointer to a struct whose tagged fields are the settings (see the
	// package documentation).
	NewSettings() Settings
	// Claims reports whether settings ask for this adapter whatever the
	// isolation (a configured sandbox URL claims the remote adapter).
	Claims(s Settings) bool
	// Open binds the adapter with settings NewSettings returned.
	Open(s Settings, opts Options) (*port.Port, error)
}

// Settings are an adapter's settings.
type Settings interface {
	// Validate reports every setting out of range.
	Validate() error
}

// Options are what opening an adapter needs besides its settings.
type Options struct {
	// Logger logs the port's calls and the adapter's own events.
	Logger *slog.Logger
	// Observers watch every call (metrics, tracing); see port.Observer.
	Observers []port.Observer
	// SnapshotKey, when set, turns session snapshots on for an adapter
	// that can make them (see port.WithSnapshotKey).
	SnapshotKey []byte
	// NodeID, when set, puts the node's name in every session id (see
	// port.WithNodeID), for a router in front of several nodes.
	NodeID string
	// MaxSnapshotBytes, when positive, bounds the snapshot a restore
	// reads (see port.WithMaxSnapshotBytes); otherwise the bound follows
	// from the adapter's memory and workspace limits.
	MaxSnapshotBytes int64
	// TracerProvider, when set, traces every call: a span per call of the
	// port (telemetry/tracing), and a client span per request of the
	// remote adapter. Trace context reaches a remote backend and worker
	// processes with or without it. nil traces nothing.
	TracerProvider trace.TracerProvider
	// CodeExecutionOnly says the program will run only the code_execution
	// tool (a one-shot `codeport exec`, `describe`): an adapter need not
	// prepare the bash tool before it is ready, and a bash call, if one
	// comes, waits for that instead.
	CodeExecutionOnly bool
	// WorkerTraceEnv are OTEL_* variables for the worker processes of the
	// subprocess adapter, so that they export their spans too (see
	// subprocess.Config.WithWorkerTraceEnv).
	WorkerTraceEnv []string
}

// PortOptions are the port options opts stand for, for an Opener to pass
// to its adapter's constructor.
func (o Options) PortOptions() []port.Option {
	opts := []port.Option{port.WithLogger(o.Logger)}
	for _, obs := range o.Observers {
		opts = append(opts, port.WithObserver(obs))
	}
	if len(o.SnapshotKey) > 0 {
		opts = append(opts, port.WithSnapshotKey(o.SnapshotKey))
	}
	if o.NodeID != "" {
		opts = append(opts, port.WithNodeID(o.NodeID))
	}
	if o.MaxSnapshotBytes > 0 {
		opts = append(opts, port.WithMaxSnapshotBytes(o.MaxSnapshotBytes))
	}
	if o.TracerProvider != nil {
		opts = append(opts, port.WithObserver(tracing.NewObserver(o.TracerProvider)))
	}
	return opts
}

// Binder binds the adapters registered with it. It holds no state beyond
// its openers; make one per program.
type Binder struct {
	openers []Opener
}

// New registers the openers of the adapters a program offers. Names must
// be unique, and settings two adapters share must have the same type.
func New(openers ...Opener) (*Binder, error) {
	seen := map[string]bool{}
	for _, o := range openers {
		if o == nil || o.Name() == "" || seen[o.Name()] {
			return nil, errors.New("binding: every opener needs a unique name")
		}
		seen[o.Name()] = true
	}
	b := &Binder{openers: openers}
	def := b.Defaults()
	if _, err := def.settings(); err != nil {
		return nil, err
	}
	return b, nil
}

// Adapters names the registered adapters.
func (b *Binder) Adapters() []string {
	out := make([]string, len(b.openers))
	for i, o := range b.openers {
		out[i] = o.Name()
	}
	return out
}

// Config is the configuration: the server's own settings and every
// registered adapter's, from defaults, then an optional YAML file, then
// CODEPORT_* environment variables, then flags, each source overriding the
// ones before it.
type Config struct {
	// ConfigFile is the YAML file read, if any.
	ConfigFile string

	Listen    string `setting:"listen" help:"address to serve contract v1 on"`
	AuthToken string `setting:"auth-token" help:"bearer token clients must send (empty: no authentication); prefer auth-token-file or the environment, as a flag shows in the process list"`
	// AuthTokenFile names a file holding the token instead.
	AuthTokenFile string `setting:"auth-token-file" help:"file holding the bearer token clients must send, on one line; unlike --auth-token it does not show in the process list (refused if other users may write it, warned about if they may read it)"`
	// SnapshotKeyFile names a file holding the key session snapshots are
	// sealed with; without it, snapshots are off.
	SnapshotKeyFile string `setting:"snapshot-key-file" help:"file holding the key (at least 32 bytes, on one line; e.g. 48 random bytes in base64) that seals session snapshots; servers sharing it restore each other's snapshots (empty: snapshots off; refused if other users may write it)"`
	// AllowedHosts are the Host names served besides the loopback ones:
	// comma-separated, "*" for any (see AllowedHostList).
	AllowedHosts string `setting:"allowed-hosts" help:"comma-separated host names the server answers to besides localhost, 127.0.0.1 and [::1]; then every request is checked (\"*\": any host). Without it, unauthenticated requests on loopback must name a loopback host"`
	// ReadTimeout bounds a request's transfer (headers and body), not its
	// execution; KeepaliveTimeout closes an idle connection.
	ReadTimeout      time.Duration `setting:"read-timeout" help:"longest a client may take to send a request, headers and body (then 408); raise it for large uploads over slow links"`
	KeepaliveTimeout time.Duration `setting:"keepalive-timeout" help:"an idle keep-alive connection is closed after this long"`
	// MinBodyRate is the slowest a request body may arrive, in bytes per
	// second averaged over MinBodyRateWindow; 0 turns the check off.
	MinBodyRate       int64         `setting:"min-body-rate" unit:"bytes" help:"slowest a request body may arrive, in bytes per second averaged over min-body-rate-window (then 408, and the connection is closed); a body may pause for up to the window (0: no minimum; read-timeout still applies)"`
	MinBodyRateWindow time.Duration `setting:"min-body-rate-window" help:"the window min-body-rate is averaged over: the longest a request body may pause"`
	// SnapshotLimit bounds a snapshot a restore accepts; 0 derives it
	// from the adapter's memory and workspace limits.
	SnapshotLimit int64 `setting:"snapshot-limit" unit:"bytes" help:"largest session snapshot POST /snapshots/restore accepts (larger: 400 invalid_snapshot, refused before it is read when announced) (0: the most a session within the memory, workspace and entry limits can need)"`
	// MaxSnapshotRequests bounds the snapshots and restores served at
	// once.
	MaxSnapshotRequests int    `setting:"max-snapshot-requests" help:"snapshots and restores served at once; one more is refused with 503 and Retry-After before its body is read (each holds a temporary file of up to snapshot-limit)"`
	LogLevel            string `setting:"log-level" help:"debug, info, warn or error"`
	// LogFormat is how log records are written: "text" (key=value) or
	// "json" (an object a line, for a log collector).
	LogFormat string `setting:"log-format" help:"text (key=value pairs) or json (one JSON object a line, for a log collector)"`
	// NodeID names this node among several behind a router; see
	// port.WithNodeID.
	NodeID string `setting:"node-id" help:"this node's name among several behind a router (a DNS label, e.g. a StatefulSet pod name): session ids become <node-id>.<uuid> so the router can send each call to its node, and ids naming another node are refused (empty: ids are plain UUIDs)"`
	// ContainersAPI has serve also serve OpenAI's Containers API
	// (gateway/containers) under /v1/containers, behind the same
	// credentials, tenants and host rules as contract v1; MaxContainers
	// and ContainerExpiry are its limits.
	ContainersAPI   bool          `setting:"containers-api" help:"also serve OpenAI's Containers API under /v1/containers (create, list, retrieve and delete containers and their files), with the same credentials, tenants and limits as contract v1; each container is a session (false: /v1/containers is 404)"`
	MaxContainers   int           `setting:"max-containers" help:"with containers-api: live containers per tenant (one more is refused with 400, code container_limit_reached); each also counts against its tenant's max_sessions"`
	ContainerExpiry time.Duration `setting:"container-expiry" help:"with containers-api: how long a container lives without activity when its creator gives no expires_after (the adapter's max-idle-timeout bounds it)"`
	// Isolation selects the adapter when none claims the configuration
	// (see Opener).
	Isolation string `setting:"isolation" help:"in-process (the runtime in this process) or process (each session in a worker process of its own)"`
	// Tenants are the YAML file's tenants section (API keys with limits;
	// see TenantConfig), which has no flag or environment form.
	Tenants []TenantConfig

	openers  []Opener
	adapters map[string]Settings
}

// Defaults of the server's timeouts. The read timeout bounds a request's
// body, so that a client that stops sending cannot hold a connection and
// its handler forever; it does not bound an execution (net/http lifts the
// deadline once the body is read), so it need only cover a body's
// transfer: 5 minutes carries a 50 MiB upload at 1.4 Mbit/s. The
// keep-alive timeout is above the 90 s for which Go's clients (adapters/http
// among them) keep an idle connection: a server that closed it first would
// race the client's next request on it, which for a POST is not retried.
const (
	DefaultReadTimeout      = 5 * time.Minute
	DefaultKeepaliveTimeout = 2 * time.Minute
)

// Defaults of the request body rate and of the snapshots at once. A body
// must come at 4 KiB/s at least (32 kbit/s, a poor mobile link), averaged
// over 30 s, so that a client trickling a body cannot hold a connection
// and what its handler holds for the whole read timeout; a small body has
// the whole window to arrive. Snapshots and restores each hold a
// temporary file of up to the snapshot limit and seconds of CPU: 4 at
// once.
const (
	DefaultMinBodyRate         = 4 << 10
	DefaultMinBodyRateWindow   = 30 * time.Second
	DefaultMaxSnapshotRequests = 4
)

// Defaults of the Containers API's limits: the store's own.
const (
	DefaultMaxContainers   = containers.DefaultMaxContainers
	DefaultContainerExpiry = containers.DefaultExpiry
)

// AllowedHostList splits AllowedHosts: nil when it is empty (the
// server's default applies).
func (c *Config) AllowedHostList() ([]string, error) {
	if strings.TrimSpace(c.AllowedHosts) == "" {
		return nil, nil
	}
	var out []string
	for h := range strings.SplitSeq(c.AllowedHosts, ",") {
		h = strings.TrimSpace(h)
		if h == "" || strings.ContainsAny(h, "/ \t@?#") {
			return nil, fmt.Errorf("allowed-hosts: %q is not a host name", h)
		}
		out = append(out, h)
	}
	return out, nil
}

// The isolation settings of codeport's adapters.
const (
	IsolationInProcess = "in-process"
	IsolationProcess   = "process"
)

// Defaults returns the configuration before any source is applied.
func (b *Binder) Defaults() Config {
	c := Config{Listen: "127.0.0.1:8080", LogLevel: "info", LogFormat: "text", Isolation: IsolationInProcess,
		ReadTimeout: DefaultReadTimeout, KeepaliveTimeout: DefaultKeepaliveTimeout,
		MinBodyRate: DefaultMinBodyRate, MinBodyRateWindow: DefaultMinBodyRateWindow, MaxSnapshotRequests: DefaultMaxSnapshotRequests,
		MaxContainers: DefaultMaxContainers, ContainerExpiry: DefaultContainerExpiry,
		openers: b.openers, adapters: map[string]Settings{}}
	for _, o := range b.openers {
		c.adapters[o.Name()] = o.NewSettings()
	}
	return c
}

// Settings returns the settings of the named adapter (a pointer to its
// settings struct, to type-assert), nil if it is not registered.
func (c *Config) Settings(adapter string) Settings { return c.adapters[adapter] }

// settings lists every setting: the server's, then each adapter's.
func (c *Config) settings() ([]*setting, error) {
	structs := []settingsOf{{ptr: c}}
	for _, o := range c.openers {
		structs = append(structs, settingsOf{owner: o.Name(), ptr: c.adapters[o.Name()]})
	}
	return collect(structs...)
}

// Selected is the opener the configuration selects: the first that claims
// it, else the one of its isolation.
func (c *Config) Selected() (Opener, error) {
	for _, o := range c.openers {
		if o.Claims(c.adapters[o.Name()]) {
			return o, nil
		}
	}
	var isolations, claimed []string
	for _, o := range c.openers {
		if o.Isolation() == "" {
			claimed = append(claimed, o.Name())
			continue
		}
		if o.Isolation() == c.Isolation {
			return o, nil
		}
		isolations = append(isolations, o.Isolation())
	}
	if len(isolations) == 0 {
		// A program built with the remote adapter alone: no isolation
		// can be chosen, and the configuration named no backend.
		return nil, fmt.Errorf("isolation %q: this program offers no isolation; its adapters (%s) are bound only when a setting of theirs asks for them, such as a sandbox URL", c.Isolation, strings.Join(claimed, ", "))
	}
	return nil, fmt.Errorf("isolation %q: want one of %s", c.Isolation, strings.Join(isolations, ", "))
}

// check validates the server's settings and the selected adapter's.
func (c *Config) check() error {
	var errs []error
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("log-level %q: want debug, info, warn or error", c.LogLevel))
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		errs = append(errs, fmt.Errorf("log-format %q: want text or json", c.LogFormat))
	}
	if c.ReadTimeout <= 0 || c.KeepaliveTimeout <= 0 {
		errs = append(errs, errors.New("read-timeout and keepalive-timeout must be positive"))
	}
	if c.MinBodyRateWindow <= 0 || c.MaxSnapshotRequests <= 0 {
		errs = append(errs, errors.New("min-body-rate-window and max-snapshot-requests must be positive"))
	}
	if c.MaxContainers <= 0 || c.ContainerExpiry <= 0 {
		errs = append(errs, errors.New("max-containers and container-expiry must be positive"))
	}
	if _, err := c.AllowedHostList(); err != nil {
		errs = append(errs, err)
	}
	if c.AuthToken != "" && c.AuthTokenFile != "" {
		errs = append(errs, errors.New("give auth-token or auth-token-file, not both"))
	}
	if c.NodeID != "" {
		if err := port.CheckNodeID(c.NodeID); err != nil {
			errs = append(errs, fmt.Errorf("node-id: %w", err))
		}
	}
	if o, err := c.Selected(); err != nil {
		errs = append(errs, err)
	} else if err := c.adapters[o.Name()].Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	return nil
}

// FlagValues holds parsed flags until Load merges them.
type FlagValues struct {
	fs     *flag.FlagSet
	config *string
	values map[string]*string
}

// Flags binds a flag per setting to fs. Call Load after fs.Parse. A
// setting adapters share shows the help and default of the adapter the
// defaults bind (the in-process runtime, when registered), and names any
// other adapter's different default.
func (b *Binder) Flags(fs *flag.FlagSet) *FlagValues {
	fv := &FlagValues{fs: fs, values: map[string]*string{}}
	def := b.Defaults()
	all, _ := def.settings() // checked by New
	selected := ""
	if o, err := def.Selected(); err == nil {
		selected = o.Name()
	}
	fv.config = fs.String("config", "", "YAML configuration file (env "+configEnv+")")
	for _, s := range all {
		help, d := s.usage(selected)
		fv.values[s.name] = fs.String(s.name, d, help)
	}
	return fv
}

// Load builds the configuration: defaults, then the YAML file (from
// --config or CODEPORT_CONFIG), then the environment, then the flags given
// on the command line, and validates the server's settings and the
// selected adapter's. getenv is os.Getenv outside tests. fv may be nil.
func (b *Binder) Load(fv *FlagValues, getenv func(string) string) (Config, error) {
	c := b.Defaults()
	all, err := c.settings()
	if err != nil {
		return Config{}, err
	}
	set := map[string]bool{}
	if fv != nil {
		fv.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	}
	path := getenv(configEnv)
	if fv != nil && set["config"] {
		path = *fv.config
	}
	if path != "" {
		if err := loadYAML(path, all, &c); err != nil {
			return Config{}, err
		}
		c.ConfigFile = path
	}
	for _, s := range all {
		if v := getenv(s.env()); v != "" {
			if err := s.set(v); err != nil {
				return Config{}, fmt.Errorf("environment %s: %w", s.env(), err)
			}
		}
	}
	if fv != nil {
		for _, s := range all {
			if set[s.name] {
				if err := s.set(*fv.values[s.name]); err != nil {
					return Config{}, fmt.Errorf("flag --%s: %w", s.name, err)
				}
			}
		}
	}
	return c, c.check()
}

func loadYAML(path string, all []*setting, c *Config) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	var raw map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	byKey := map[string]*setting{}
	for _, s := range all {
		byKey[s.yamlKey()] = s
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		if k == tenantsKey {
			continue // a section, not a setting: loadTenants reads it
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s, ok := byKey[k]
		if !ok {
			return fmt.Errorf("config file %s: unknown key %q (known: %s, and the %s section)", path, k, strings.Join(names(all), ", "), tenantsKey)
		}
		var v string
		switch x := raw[k].(type) {
		case string:
			v = x
		case int, int64, uint64, float64, bool:
			// uint64: YAML's type for a whole number past int64, which
			// the setting then refuses as out of range.
			v = fmt.Sprint(x)
		case nil:
			continue
		default:
			return fmt.Errorf("config file %s: key %q: want a scalar value", path, k)
		}
		if err := s.set(v); err != nil {
			return fmt.Errorf("config file %s: key %q: %w", path, k, err)
		}
	}
	tenants, err := loadTenants(b)
	if err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	c.Tenants = tenants
	return nil
}

// Bound is the adapter the configuration selected. Its Describe carries
// the purpose hint.
type Bound struct {
	*port.Port
	// Adapter names the bound adapter ("wasm", "subprocess", "http").
	Adapter string
}

// Open binds the adapter the configuration selects: the first registered
// adapter that claims it (a configured sandbox URL claims the remote
// one), else the one of its isolation. The returned port must be closed.
func (b *Binder) Open(cfg Config, opts Options) (*Bound, error) {
	if cfg.adapters == nil {
		return nil, errors.New("binding: Open needs a Config from this Binder's Defaults or Load")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	o, err := cfg.Selected()
	if err != nil {
		return nil, err
	}
	s := cfg.adapters[o.Name()]
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("bind %s adapter: %w", o.Name(), err)
	}
	p, err := o.Open(s, opts)
	if err != nil {
		return nil, fmt.Errorf("bind %s adapter: %w", o.Name(), err)
	}
	return &Bound{Port: p, Adapter: o.Name()}, nil
}

// Describe returns the bound adapter's capability description with its
// purpose hint filled in.
func (b *Bound) Describe(ctx context.Context) (port.Capabilities, error) {
	c, err := b.Port.Describe(ctx)
	if err != nil {
		return c, err
	}
	if c.PurposeHint == "" {
		c.PurposeHint = PurposeHint(c)
	}
	return c, nil
}

// PurposeHint is the text a model is shown about the tool, built only from
// what the capability description says, so it never promises a package,
// a network or a limit the backend does not have.
func PurposeHint(c port.Capabilities) string {
	return purpose.Hint(c, purpose.Options{})
}
