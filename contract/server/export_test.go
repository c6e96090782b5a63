package server

import "time"

// SetTenantsClock makes ts read the time from now, so that tests move the
// clock instead of waiting.
func SetTenantsClock(ts *Tenants, now func() time.Time) { ts.now = now }
