// Package metrictest reads one value out of a Prometheus registry for a
// test's assertion:
//
//	if n := metrictest.Value(t, reg, "codeport_worker_restarts_total", "cause", "killed"); n != 1 {
//		t.Errorf("%v restarts for killed workers, want 1", n)
//	}
package metrictest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Value is the value of the counter or gauge name in reg whose labels
// include every label/value pair given (pairs: label, value, label,
// value...); the first such series if several match, -1 if none does.
func Value(t testing.TB, reg prometheus.Gatherer, name string, pairs ...string) float64 {
	t.Helper()
	if len(pairs)%2 != 0 {
		t.Fatalf("metrictest.Value: labels come in label/value pairs, got %q", pairs)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if !hasLabels(m.GetLabel(), pairs) {
				continue
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return -1
}

func hasLabels(have []*dto.LabelPair, pairs []string) bool {
	for i := 0; i < len(pairs); i += 2 {
		found := false
		for _, lp := range have {
			if lp.GetName() == pairs[i] && lp.GetValue() == pairs[i+1] {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
