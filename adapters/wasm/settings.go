package wasm

import (
	"encoding/json"
	"fmt"
	"time"
)

// settings are the parts of a Config that can cross a process boundary:
// everything but the logger and the metrics registry. Durations travel as
// Go duration strings so that the JSON stays readable in a worker's
// environment.
type settings struct {
	CompileCache     string   `json:"compile_cache,omitempty"`
	SessionsDir      string   `json:"sessions_dir,omitempty"`
	DefaultTimeout   string   `json:"default_timeout"`
	MaxTimeout       string   `json:"max_timeout"`
	MemoryBytes      int64    `json:"memory_bytes"`
	OutputBytes      int      `json:"output_bytes"`
	SourceBytes      int      `json:"source_bytes"`
	WorkspaceBytes   int64    `json:"workspace_bytes"`
	FileBytes        int64    `json:"file_bytes"`
	MaxSessions      int      `json:"max_sessions"`
	DefaultIdle      string   `json:"default_idle"`
	MaxIdle          string   `json:"max_idle"`
	MaxLifetime      string   `json:"max_lifetime"`
	RetryAfter       string   `json:"retry_after"`
	PoolSize         int      `json:"pool_size"`
	PoolRefill       int      `json:"pool_refill"`
	WarmModules      []string `json:"warm_modules"`
	ReapIntervalTest string   `json:"reap_interval,omitempty"`
}

// MarshalJSON encodes the configuration's settings, without its logger and
// metrics registry, so that another process (a subprocess worker) can run
// an adapter configured exactly like this one.
func (c Config) MarshalJSON() ([]byte, error) {
	return json.Marshal(settings{
		CompileCache: c.compileCache, SessionsDir: c.sessionsDir,
		DefaultTimeout: c.defaultTimeout.String(), MaxTimeout: c.maxTimeout.String(),
		MemoryBytes: c.memoryBytes, OutputBytes: c.outputBytes, SourceBytes: c.sourceBytes,
		WorkspaceBytes: c.workspaceBytes, FileBytes: c.fileBytes, MaxSessions: c.maxSessions,
		DefaultIdle: c.defaultIdle.String(), MaxIdle: c.maxIdle.String(), MaxLifetime: c.maxLifetime.String(),
		RetryAfter: c.retryAfter.String(), PoolSize: c.poolSize, PoolRefill: c.poolRefill,
		WarmModules: c.warmModules, ReapIntervalTest: c.reapInterval.String(),
	})
}

// UnmarshalJSON sets the settings MarshalJSON encoded; the logger and
// registry are left as they are. Decode into NewConfig() so that a setting
// the encoder left out keeps its default.
func (c *Config) UnmarshalJSON(b []byte) error {
	var s settings
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("wasm adapter config: %w", err)
	}
	durations := []struct {
		text string
		dst  *time.Duration
	}{
		{s.DefaultTimeout, &c.defaultTimeout}, {s.MaxTimeout, &c.maxTimeout},
		{s.DefaultIdle, &c.defaultIdle}, {s.MaxIdle, &c.maxIdle}, {s.MaxLifetime, &c.maxLifetime},
		{s.RetryAfter, &c.retryAfter}, {s.ReapIntervalTest, &c.reapInterval},
	}
	for _, d := range durations {
		if d.text == "" {
			continue
		}
		v, err := time.ParseDuration(d.text)
		if err != nil {
			return fmt.Errorf("wasm adapter config: %w", err)
		}
		*d.dst = v
	}
	c.compileCache, c.sessionsDir = s.CompileCache, s.SessionsDir
	c.memoryBytes, c.outputBytes, c.sourceBytes = s.MemoryBytes, s.OutputBytes, s.SourceBytes
	c.workspaceBytes, c.fileBytes, c.maxSessions = s.WorkspaceBytes, s.FileBytes, s.MaxSessions
	c.poolSize, c.poolRefill = s.PoolSize, s.PoolRefill
	if s.WarmModules != nil {
		c.warmModules = s.WarmModules
	}
	return nil
}
