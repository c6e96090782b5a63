package containers

import (
	"context"
	"io"
	"log/slog"
	"time"
)

// FileSource is the gateway's file store, from which a container is
// seeded with files by their ids (CreateParams.FileIDs, Store.AddFile):
// OpenAI's and Anthropic's file ids name files a client uploaded to the
// gateway, not to codeport.
type FileSource interface {
	// OpenFile opens the tenant's file fileID and returns its name (the
	// file name the client gave it) and its bytes. An unknown id, or one
	// of another tenant, is an error wrapping ErrFileNotFound. The caller
	// closes the reader.
	OpenFile(ctx context.Context, tenant, fileID string) (name string, r io.ReadCloser, err error)
}

// Defaults of the options.
const (
	// DefaultExpiry is how long a container lives without activity when
	// its creator asks for nothing else: OpenAI's 20 minutes.
	DefaultExpiry = 20 * time.Minute
	// DefaultMaxContainers is the number of live containers a tenant may
	// hold.
	DefaultMaxContainers = 100
	// DefaultMaxFiles is the number of files a container lists at most
	// (uploaded and produced).
	DefaultMaxFiles = 1000
	// defaultSweep is how often expired containers are looked for.
	defaultSweep = 30 * time.Second
)

// Option configures a Store.
type Option func(*config)

type config struct {
	source        FileSource
	maxContainers int
	maxFiles      int
	expiry        time.Duration
	nodeID        string
	tenantOf      func(context.Context) string
	background    func(context.Context) context.Context
	now           func() time.Time
	sweep         time.Duration
	logger        *slog.Logger
}

func newConfig(opts []Option) config {
	c := config{
		maxContainers: DefaultMaxContainers,
		maxFiles:      DefaultMaxFiles,
		expiry:        DefaultExpiry,
		tenantOf:      func(context.Context) string { return "" },
		background:    func(context.Context) context.Context { return context.Background() },
		now:           time.Now,
		sweep:         defaultSweep,
		logger:        slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithFileSource sets the file store that file ids are read from. Without
// one, a request that names file ids is refused (port.ErrInvalidRequest).
func WithFileSource(s FileSource) Option { return func(c *config) { c.source = s } }

// WithMaxContainers sets how many live containers one tenant may hold
// (DefaultMaxContainers); n ≤ 0 keeps the default.
func WithMaxContainers(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxContainers = n
		}
	}
}

// WithMaxFiles sets how many files one container lists (DefaultMaxFiles);
// n ≤ 0 keeps the default. An upload past it is refused; files a call
// produces past it are left in the workspace, unlisted.
func WithMaxFiles(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxFiles = n
		}
	}
}

// WithDefaultExpiry sets the idle expiry of a container whose creator
// asks for none (DefaultExpiry); d ≤ 0 keeps the default. The port may
// clamp it (its maximum idle timeout); the container reports what is in
// force.
func WithDefaultExpiry(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.expiry = d
		}
	}
}

// WithNodeID makes every container id carry node, a node id as
// port.CheckNodeID accepts it (New panics on another), and makes the
// store answer an id of another node as an unknown one.
func WithNodeID(node string) Option { return func(c *config) { c.nodeID = node } }

// WithTenantOf sets how a call's tenant is read from its context; without
// it, every caller is the one tenant "".
func WithTenantOf(f func(ctx context.Context) string) Option {
	return func(c *config) {
		if f != nil {
			c.tenantOf = f
		}
	}
}

// WithBackgroundContext sets how the context of the call that created a
// container becomes the context in which the store later ends it, by
// itself (expiry) or at Close. It must not keep ctx's cancellation; it
// may keep what the port needs of the caller (a tenant). Without it,
// context.Background is used.
func WithBackgroundContext(f func(ctx context.Context) context.Context) Option {
	return func(c *config) {
		if f != nil {
			c.background = f
		}
	}
}

// WithClock sets the clock that expiry is measured by (time.Now).
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.now = now
		}
	}
}

// WithLogger sets the logger for containers ended by expiry and failures
// of background work. It never logs code, output or file contents.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}
