package port

import "context"

// tenantKey is the context key of WithTenant.
type tenantKey struct{}

// WithTenant returns ctx carrying the name of the tenant a call is made
// for, as a server authenticated it (server.WithTenants does this for
// every request). The Port passes it to the driver in each call's
// context; a driver that keeps tenants apart reads it with TenantOf (the
// subprocess adapter's tenant workers host one tenant's sessions each).
func WithTenant(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, tenantKey{}, name)
}

// TenantOf is the tenant WithTenant put in ctx; "" when none did (no
// tenants are configured: every call is the same, nameless tenant's).
func TenantOf(ctx context.Context) string {
	name, _ := ctx.Value(tenantKey{}).(string)
	return name
}
