package binding

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/internal/bytesize"
)

// Config is codeport's configuration, from defaults, then an optional YAML
// file, then CODEPORT_* environment variables, then flags: each source
// overrides the ones before it.
type Config struct {
	// ConfigFile is the YAML file read, if any.
	ConfigFile string

	// Serving.
	Listen    string
	AuthToken string
	LogLevel  string

	// A remote contract v1 backend; when set, it is bound instead of the
	// in-process runtime.
	SandboxURL   string
	SandboxToken string

	// Isolation is "in-process" (the runtime in this process) or "process"
	// (each session in a worker process); a SandboxURL wins over both.
	Isolation string
	// Worker processes, with isolation "process": how many idle ones are
	// kept started, how many sessions each hosts, and each one's OS memory
	// limit (0: derived from the memory limit).
	MinWorkers        int
	SessionsPerWorker int
	WorkerMemoryLimit int64

	// The runtime (embedded in the binary): where its compiled code is
	// cached, and where sessions' files live.
	CompileCacheDir string
	SessionsDir     string

	// Limits.
	Timeout        time.Duration
	MaxTimeout     time.Duration
	MemoryLimit    int64
	OutputLimit    int64
	SourceLimit    int64
	WorkspaceLimit int64
	FileLimit      int64
	MaxSessions    int
	WarmPool       int
	// WarmModules are imported by the interpreter image every session
	// starts from; nil keeps the runtime's default list.
	WarmModules    []string
	WarmPoolRefill int
	IdleTimeout    time.Duration
	MaxIdleTimeout time.Duration
	MaxLifetime    time.Duration
}

// The isolation settings.
const (
	IsolationInProcess = "in-process"
	IsolationProcess   = "process"
)

// Defaults returns the configuration before any source is applied: the
// in-process adapter's own defaults, so the two cannot drift apart.
func Defaults() Config {
	l := wasm.NewConfig().Limits()
	return Config{
		Listen:            "127.0.0.1:8080",
		LogLevel:          "info",
		Isolation:         IsolationInProcess,
		MinWorkers:        2,
		SessionsPerWorker: 1,
		Timeout:           l.DefaultTimeout,
		MaxTimeout:        l.MaxTimeout,
		MemoryLimit:       l.MemoryBytes,
		OutputLimit:       l.OutputBytes,
		SourceLimit:       l.SourceBytes,
		WorkspaceLimit:    l.WorkspaceBytes,
		FileLimit:         l.FileBytes,
		MaxSessions:       l.MaxSessions,
		WarmPool:          wasm.NewConfig().WarmPoolSize(),
		WarmPoolRefill:    1,
		IdleTimeout:       l.DefaultIdleTimeout,
		MaxIdleTimeout:    l.MaxIdleTimeout,
		MaxLifetime:       l.MaxLifetime,
	}
}

// setting is one configuration value, known by a flag name, an
// environment variable and a YAML key, all set through one parser so the
// three sources cannot disagree on syntax.
type setting struct {
	name  string // flag name; the YAML key is name with '-' as '_'
	usage string
	set   func(c *Config, v string) error
	get   func(c *Config) string
}

func (s setting) env() string {
	return "CODEPORT_" + strings.ToUpper(strings.ReplaceAll(s.name, "-", "_"))
}

func (s setting) yamlKey() string { return strings.ReplaceAll(s.name, "-", "_") }

func settings() []setting {
	str := func(name, usage string, f func(*Config) *string) setting {
		return setting{name, usage,
			func(c *Config, v string) error { *f(c) = v; return nil },
			func(c *Config) string { return *f(c) }}
	}
	dur := func(name, usage string, f func(*Config) *time.Duration) setting {
		return setting{name, usage,
			func(c *Config, v string) error {
				d, err := parseDuration(v)
				if err == nil {
					*f(c) = d
				}
				return err
			},
			func(c *Config) string { return f(c).String() }}
	}
	size := func(name, usage string, f func(*Config) *int64) setting {
		return setting{name, usage,
			func(c *Config, v string) error {
				n, err := bytesize.Parse(v)
				if err == nil {
					*f(c) = n
				}
				return err
			},
			func(c *Config) string { return bytesize.Format(*f(c)) }}
	}
	sizeOrZero := func(name, usage string, f func(*Config) *int64) setting {
		s := size(name, usage, f)
		set := s.set
		s.set = func(c *Config, v string) error {
			if strings.TrimSpace(v) == "0" {
				*f(c) = 0
				return nil
			}
			return set(c, v)
		}
		return s
	}
	whole := func(name, usage string, least int, f func(*Config) *int) setting {
		return setting{name, usage,
			func(c *Config, v string) error {
				n, err := strconv.Atoi(strings.TrimSpace(v))
				if err != nil || n < least {
					return fmt.Errorf("want a whole number of at least %d, got %q", least, v)
				}
				*f(c) = n
				return nil
			},
			func(c *Config) string { return strconv.Itoa(*f(c)) }}
	}
	return []setting{
		str("listen", "address to serve contract v1 on", func(c *Config) *string { return &c.Listen }),
		str("auth-token", "bearer token clients must send (empty: no authentication)", func(c *Config) *string { return &c.AuthToken }),
		str("log-level", "debug, info, warn or error", func(c *Config) *string { return &c.LogLevel }),
		str("sandbox-url", "base URL of a remote contract v1 backend; when set it is used instead of the in-process runtime", func(c *Config) *string { return &c.SandboxURL }),
		str("sandbox-token", "bearer token for the remote backend", func(c *Config) *string { return &c.SandboxToken }),
		str("isolation", "in-process (the runtime in this process) or process (each session in a worker process of its own)", func(c *Config) *string { return &c.Isolation }),
		whole("min-workers", "with isolation process: idle worker processes kept started and warm", 0, func(c *Config) *int { return &c.MinWorkers }),
		whole("sessions-per-worker", "with isolation process: sessions a worker process hosts (1: a process per session)", 1, func(c *Config) *int { return &c.SessionsPerWorker }),
		sizeOrZero("worker-memory-limit", "with isolation process: OS memory limit of a worker (RLIMIT_DATA, with RLIMIT_AS 2.5GiB above it) (0: twice the memory limit per session plus 512MiB)", func(c *Config) *int64 { return &c.WorkerMemoryLimit }),
		str("compile-cache-dir", "wazero compilation cache (default: codeport/wazero in the user cache directory)", func(c *Config) *string { return &c.CompileCacheDir }),
		str("sessions-dir", "host directory for session workspaces (default: a private temporary directory)", func(c *Config) *string { return &c.SessionsDir }),
		dur("timeout", "execution timeout of a call that asks for none", func(c *Config) *time.Duration { return &c.Timeout }),
		dur("max-timeout", "ceiling a requested timeout is clamped to", func(c *Config) *time.Duration { return &c.MaxTimeout }),
		size("memory-limit", "memory per session", func(c *Config) *int64 { return &c.MemoryLimit }),
		size("output-limit", "output kept per stream per call", func(c *Config) *int64 { return &c.OutputLimit }),
		size("source-limit", "largest code accepted in one call", func(c *Config) *int64 { return &c.SourceLimit }),
		size("workspace-limit", "files per session, temporary files included", func(c *Config) *int64 { return &c.WorkspaceLimit }),
		size("file-limit", "largest uploaded file", func(c *Config) *int64 { return &c.FileLimit }),
		whole("max-sessions", "sessions alive at once", 1, func(c *Config) *int { return &c.MaxSessions }),
		whole("warm-pool", "interpreters restored ahead of demand, so a session need not wait for one (0: off)", 0, func(c *Config) *int { return &c.WarmPool }),
		whole("warm-pool-refill", "interpreters the warm pool restores at once when it refills (0: fill once, never refill)", 0, func(c *Config) *int { return &c.WarmPoolRefill }),
		setting{"warm-modules", "comma-separated modules the interpreter image imports, so every session has them (none: import nothing; empty: the default list)",
			func(c *Config, v string) error {
				switch v = strings.TrimSpace(v); v {
				case "":
					c.WarmModules = nil
				case "none":
					c.WarmModules = []string{}
				default:
					c.WarmModules = nil
					for m := range strings.SplitSeq(v, ",") {
						m = strings.TrimSpace(m)
						if !validModule(m) {
							return fmt.Errorf("want comma-separated module names, got %q", m)
						}
						c.WarmModules = append(c.WarmModules, m)
					}
				}
				return nil
			},
			func(c *Config) string {
				if c.WarmModules != nil && len(c.WarmModules) == 0 {
					return "none"
				}
				return strings.Join(c.WarmModules, ",")
			}},
		dur("idle-timeout", "idle time after which a session is reclaimed, when it gives no hint", func(c *Config) *time.Duration { return &c.IdleTimeout }),
		dur("max-idle-timeout", "ceiling of idle timeout hints", func(c *Config) *time.Duration { return &c.MaxIdleTimeout }),
		dur("max-lifetime", "longest a session lives (also the ceiling of lifetime hints)", func(c *Config) *time.Duration { return &c.MaxLifetime }),
	}
}

// Flags binds the configuration flags to fs. Call Load after fs.Parse.
func Flags(fs *flag.FlagSet) *FlagValues {
	fv := &FlagValues{fs: fs, values: map[string]*string{}}
	def := Defaults()
	fv.config = fs.String("config", "", "YAML configuration file (env CODEPORT_CONFIG)")
	for _, s := range settings() {
		d := s.get(&def)
		if d == "" || d == "0s" {
			d = ""
		}
		usage := fmt.Sprintf("%s (env %s)", s.usage, s.env())
		fv.values[s.name] = fs.String(s.name, d, usage)
	}
	return fv
}

// FlagValues holds parsed flags until Load merges them.
type FlagValues struct {
	fs     *flag.FlagSet
	config *string
	values map[string]*string
}

// Load builds the configuration: defaults, then the YAML file (from
// --config or CODEPORT_CONFIG), then the environment, then the flags given
// on the command line. getenv is os.Getenv outside tests. fv may be nil.
func Load(fv *FlagValues, getenv func(string) string) (Config, error) {
	c := Defaults()
	all := settings()
	set := map[string]bool{}
	if fv != nil {
		fv.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	}

	path := getenv("CODEPORT_CONFIG")
	if fv != nil && set["config"] {
		path = *fv.config
	}
	if path != "" {
		if err := loadYAML(&c, path, all); err != nil {
			return Config{}, err
		}
		c.ConfigFile = path
	}
	for _, s := range all {
		if v, ok := lookupEnv(getenv, s.env()); ok {
			if err := s.set(&c, v); err != nil {
				return Config{}, fmt.Errorf("environment %s: %w", s.env(), err)
			}
		}
	}
	if fv != nil {
		for _, s := range all {
			if set[s.name] {
				if err := s.set(&c, *fv.values[s.name]); err != nil {
					return Config{}, fmt.Errorf("flag --%s: %w", s.name, err)
				}
			}
		}
	}
	return c, c.check()
}

func lookupEnv(getenv func(string) string, name string) (string, bool) {
	v := getenv(name)
	return v, v != ""
}

func loadYAML(c *Config, path string, all []setting) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	var raw map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	byKey := map[string]setting{}
	for _, s := range all {
		byKey[s.yamlKey()] = s
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s, ok := byKey[k]
		if !ok {
			known := make([]string, 0, len(byKey))
			for k := range byKey {
				known = append(known, k)
			}
			sort.Strings(known)
			return fmt.Errorf("config file %s: unknown key %q (known: %s)", path, k, strings.Join(known, ", "))
		}
		var v string
		switch x := raw[k].(type) {
		case string:
			v = x
		case int, int64, float64, bool:
			v = fmt.Sprint(x)
		case nil:
			continue
		default:
			return fmt.Errorf("config file %s: key %q: want a scalar value", path, k)
		}
		if err := s.set(c, v); err != nil {
			return fmt.Errorf("config file %s: key %q: %w", path, k, err)
		}
	}
	return nil
}

func (c Config) check() error {
	var errs []error
	if c.Timeout <= 0 || c.MaxTimeout <= 0 || c.Timeout > c.MaxTimeout {
		errs = append(errs, errors.New("timeout must be positive and at most max-timeout"))
	}
	if c.IdleTimeout <= 0 || c.MaxIdleTimeout <= 0 || c.MaxLifetime <= 0 || c.IdleTimeout > c.MaxIdleTimeout {
		errs = append(errs, errors.New("idle-timeout, max-idle-timeout and max-lifetime must be positive, idle-timeout at most max-idle-timeout"))
	}
	for _, v := range []struct {
		name string
		n    int64
	}{{"memory-limit", c.MemoryLimit}, {"output-limit", c.OutputLimit}, {"source-limit", c.SourceLimit}, {"workspace-limit", c.WorkspaceLimit}, {"file-limit", c.FileLimit}} {
		if v.n <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive", v.name))
		}
	}
	if c.OutputLimit > 1<<30 || c.SourceLimit > 1<<30 {
		errs = append(errs, errors.New("output-limit and source-limit must be at most 1GiB"))
	}
	switch c.Isolation {
	case IsolationInProcess, IsolationProcess:
	default:
		errs = append(errs, fmt.Errorf("isolation %q: want %s or %s", c.Isolation, IsolationInProcess, IsolationProcess))
	}
	if c.Isolation == IsolationProcess && c.MinWorkers*c.SessionsPerWorker > c.MaxSessions {
		errs = append(errs, errors.New("min-workers times sessions-per-worker must be at most max-sessions"))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("log-level %q: want debug, info, warn or error", c.LogLevel))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	return nil
}

// validModule reports whether m is a dotted Python module name.
func validModule(m string) bool {
	if m == "" {
		return false
	}
	for part := range strings.SplitSeq(m, ".") {
		if part == "" || part[0] >= '0' && part[0] <= '9' {
			return false
		}
		for _, r := range part {
			if r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
				return false
			}
		}
	}
	return true
}

// parseDuration reads a Go duration ("30s", "5m") or a number of seconds.
func parseDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if n <= 0 {
			return 0, fmt.Errorf("want a positive duration, got %q", v)
		}
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want a positive duration such as 30s or 5m, got %q", v)
	}
	return d, nil
}
