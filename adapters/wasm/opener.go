package wasm

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codeport/codeport/binding"
	"github.com/codeport/codeport/port"
)

// Opener binds the in-process runtime from configuration: it is the
// adapter of isolation "in-process". reg, when not nil, registers the
// runtime's own metrics (its warm pool and interpreter starts).
//
//	b, err := binding.New(wasm.Opener(nil), httpadapter.Opener())
func Opener(reg prometheus.Registerer) binding.Opener { return opener{reg: reg} }

type opener struct{ reg prometheus.Registerer }

func (opener) Name() string                  { return "wasm" }
func (opener) Isolation() string             { return binding.IsolationInProcess }
func (opener) Claims(binding.Settings) bool  { return false }
func (opener) NewSettings() binding.Settings { s := DefaultSettings(); return &s }
func (o opener) Open(s binding.Settings, opts binding.Options) (*port.Port, error) {
	ws, ok := s.(*Settings)
	if !ok {
		return nil, fmt.Errorf("wasm opener: settings of type %T", s)
	}
	cfg := NewConfig().WithSettings(*ws).WithLogger(opts.Logger).WithShellAtStart(!opts.CodeExecutionOnly)
	if o.reg != nil {
		cfg = cfg.WithMetrics(o.reg)
	}
	return New(cfg, opts.PortOptions()...)
}
