package httpadapter

import (
	"fmt"

	"github.com/codeport/codeport/binding"
	"github.com/codeport/codeport/port"
)

// Opener binds a remote contract v1 backend from configuration: it claims
// any configuration with a sandbox URL, whatever the isolation.
func Opener() binding.Opener { return opener{} }

type opener struct{}

func (opener) Name() string                  { return "http" }
func (opener) Isolation() string             { return "" }
func (opener) NewSettings() binding.Settings { s := DefaultSettings(); return &s }
func (opener) Claims(s binding.Settings) bool {
	hs, ok := s.(*Settings)
	return ok && hs.URL != ""
}
func (opener) Open(s binding.Settings, opts binding.Options) (*port.Port, error) {
	hs, ok := s.(*Settings)
	if !ok {
		return nil, fmt.Errorf("http opener: settings of type %T", s)
	}
	cfg := NewConfig("").WithSettings(*hs).WithLogger(opts.Logger).WithTracerProvider(opts.TracerProvider)
	return New(cfg, opts.PortOptions()...)
}
