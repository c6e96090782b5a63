// Package telemetry turns the calls a port serves into Prometheus
// metrics, the same way whichever adapter serves them: it is a
// port.Observer, so it sees every call at the portable layer, the remote
// adapter's included. Adapters register only what is theirs alone (the
// wasm runtime's warm pool, the subprocess adapter's workers).
//
//	reg := prometheus.NewRegistry()
//	obs, err := telemetry.NewObserver(reg)
//	if err != nil {
//		return err
//	}
//	p, err := wasm.New(wasm.NewConfig().WithMetrics(reg), port.WithObserver(obs))
package telemetry
