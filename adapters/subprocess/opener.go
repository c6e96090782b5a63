package subprocess

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codeport/codeport/binding"
	"github.com/codeport/codeport/port"
)

// Opener binds worker processes from configuration: it is the adapter of
// isolation "process". reg, when not nil, registers the adapter's own
// metrics (its workers); workerCommand, when not empty, runs a worker
// (default: this executable with the argument "worker", right for the
// codeport binary; a gateway embedding binding names a codeport binary).
func Opener(reg prometheus.Registerer, workerCommand ...string) binding.Opener {
	return opener{reg: reg, command: workerCommand}
}

type opener struct {
	reg     prometheus.Registerer
	command []string
}

func (opener) Name() string                  { return "subprocess" }
func (opener) Isolation() string             { return binding.IsolationProcess }
func (opener) Claims(binding.Settings) bool  { return false }
func (opener) NewSettings() binding.Settings { s := DefaultSettings(); return &s }
func (o opener) Open(s binding.Settings, opts binding.Options) (*port.Port, error) {
	ss, ok := s.(*Settings)
	if !ok {
		return nil, fmt.Errorf("subprocess opener: settings of type %T", s)
	}
	cfg := NewConfig().WithSettings(*ss).WithLogger(opts.Logger).WithWorkerTraceEnv(opts.WorkerTraceEnv)
	if len(o.command) > 0 {
		cfg = cfg.WithWorkerCommand(o.command[0], o.command[1:]...)
	}
	if o.reg != nil {
		cfg = cfg.WithMetrics(o.reg)
	}
	return New(cfg, opts.PortOptions()...)
}
