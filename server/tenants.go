package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/codeport/codeport/port"
)

// Tenants: with WithTenants, every route but /healthz needs a bearer key,
// and the key says which tenant calls. A tenant's sessions are its own:
//
//   - Ownership. A session belongs to the tenant that created (or
//     restored) it. Every session route called with an id the caller does
//     not own, whether another tenant's or no session at all, is answered
//     by the same code path, without asking the port: exactly what an
//     unknown id gets (404 session_not_found with the same body, or 204
//     for DELETE). So a tenant cannot learn whether another's id exists,
//     not even from the timing, and cannot touch it.
//   - Limits. Sessions at once (Tenant.MaxSessions) are admitted by
//     POST /sessions and POST /snapshots/restore; executions per second
//     (Tenant.ExecutionsPerSecond, a token bucket of Tenant.Burst) by the
//     calls that spend the CPU: POST /sessions/{id}/exec, POST
//     /sessions/{id}/snapshot and POST /snapshots/restore (a snapshot
//     runs the session's interpreter and compresses its memory; a restore
//     checks the seal over the whole snapshot and runs the interpreter
//     it brings, whether or not it succeeds), each admitted before it
//     reads its body or touches the session. File calls and listings do
//     not count against the rate: each is bounded by the backend's file
//     and workspace limits and by the sessions at once. Over a limit:
//     429, code rate_limited (port.ErrRateLimited), with Retry-After.
//   - Snapshots are bound to the tenant (see snapshotTenant), so one
//     tenant's snapshot does not restore under another's key.
//   - Metrics are labelled by tenant name, from the configuration only.
//
// The bearer token of WithBearerToken, when both are given, is one more
// tenant, TokenTenant, with no limits: the operator's credential. With
// tenants, /metrics (every tenant's names and counts) is served to it
// alone.
//
// How a session stops counting. The backend reclaims sessions on its own
// (idle timeout, lifetime), without telling the server. The server
// reconciles in three ways: a call that the port answers with
// session_not_found forgets the session; when a tenant is at its limit,
// its sessions past the deadline the server computes from what it saw
// (the bounds the session was created with and its last call through this
// server, which is never earlier than the backend's last activity) are
// destroyed, which a reaped session answers as a no-op; and sessions taken
// over from a previous process and not yet used are probed (a listing of
// the workspace root) to learn whether they survived.
//
// Ownership across restarts. Sessions survive a restart of the server when
// the backend keeps them (the wasm adapter's hibernate-dir, or a remote
// backend). With TenantsConfig.OwnersFile the owners are kept in a file, a
// journal of one JSON line per change, compacted at start and as it grows,
// so that after a restart each session is still its owner's. Ownership
// fails closed: a session whose owner the server does not know (not in the
// file, or owned by a tenant no longer configured) is reachable by nobody,
// and the backend reclaims it in time.

// TokenTenant names the tenant of WithBearerToken's token when tenants are
// configured: the operator's own credential, without limits. No configured
// tenant may take the name.
const TokenTenant = "auth-token"

// MinTenantKeyBytes is the shortest key a deployment should give a tenant:
// a key is a bearer secret, known to the server only by its SHA-256 digest
// (Tenant.Keys), so it must be long and random (32 random bytes in base64,
// say) for that digest not to be worth guessing at.
const MinTenantKeyBytes = 16

// MaxTenants bounds the tenants of one server: metrics carry one series
// set per tenant.
const MaxTenants = 1000

// tenantName is what a tenant may be called: short, lower case, usable
// as a metric label and in a snapshot's binding as it is.
var tenantName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// Tenant is one tenant: its name, the keys that authenticate it, and its
// limits. Zero limits are no limit.
type Tenant struct {
	// Name is 1 to 32 characters of [a-z0-9_-], starting with a letter or
	// a digit; it names the tenant in metrics, logs and ownership records.
	Name string
	// Keys are the SHA-256 digests (KeyDigest) of the bearer keys that
	// authenticate the tenant; more than one lets a key be rotated. A key
	// belongs to one tenant.
	Keys [][sha256.Size]byte
	// MaxSessions bounds the tenant's live sessions.
	MaxSessions int
	// ExecutionsPerSecond bounds the tenant's exec calls, on average, with
	// Burst calls at once beyond it; Burst 0 is ExecutionsPerSecond
	// rounded up.
	ExecutionsPerSecond float64
	Burst               int
}

// KeyDigest is the digest a tenant's key is known by (Tenant.Keys).
func KeyDigest(key string) [sha256.Size]byte { return sha256.Sum256([]byte(key)) }

// TenantsConfig configures NewTenants.
type TenantsConfig struct {
	Tenants []Tenant
	// OwnersFile, when set, keeps session ownership across restarts (see
	// above). It must not be shared by two processes; a server over the
	// wasm adapter keeps it in the adapter's hibernate-dir, which the
	// adapter locks.
	OwnersFile string
	// Registerer, when set, registers the per-tenant metrics:
	// codeport_tenant_requests_total{tenant,status},
	// codeport_tenant_executions_total{tenant,outcome},
	// codeport_tenant_limit_refusals_total{tenant,limit} and
	// codeport_tenant_sessions{tenant}.
	Registerer prometheus.Registerer
	// Logger logs what the ownership file could not do.
	Logger *slog.Logger
}

// Tenants holds the tenants of a handler (WithTenants) and what they own.
// Close it after the server has stopped.
type Tenants struct {
	byName map[string]*tenantState
	token  *tenantState
	// keys are every configured key, for the constant-time lookup.
	keys   []tenantKey
	logger *slog.Logger
	// now is the clock: time.Now, but in tests.
	now func() time.Time

	requests *prometheus.CounterVec
	execs    *prometheus.CounterVec
	refusals *prometheus.CounterVec
	live     *prometheus.Desc

	mu      sync.Mutex
	owners  map[string]*owned
	journal *journal
}

type tenantKey struct {
	digest [sha256.Size]byte
	t      *tenantState
}

// tenantState is a tenant's limits and its sessions. Guarded by
// Tenants.mu, but for the limiter, which is safe for concurrent use.
type tenantState struct {
	name        string
	maxSessions int
	limiter     *rate.Limiter // nil: no rate limit
	sessions    map[string]*owned
	// pending counts admissions whose session is being made.
	pending int
}

// owned is one session's owner and what the server knows of its life.
type owned struct {
	id     string
	tenant string
	// t is nil when the tenant is not configured (any more): then nobody
	// may use the session.
	t              *tenantState
	created        time.Time
	idle, lifetime time.Duration
	lastActive     time.Time
	// inCall counts the requests under way on the session; a session in
	// one is never taken for reclaimed.
	inCall int
	// verified: the session answered through this process (it was made
	// here, or a call succeeded since the restart).
	verified bool
}

// reapMargin is added to the deadline the server computes for a session
// before it takes the session for reclaimed by the backend.
const reapMargin = 5 * time.Second

// deadline is when the backend will have reclaimed the session at the
// latest, zero when it cannot be known.
func (o *owned) deadline() time.Time {
	var d time.Time
	if o.idle > 0 {
		d = o.lastActive.Add(o.idle + reapMargin)
	}
	if o.lifetime > 0 {
		if l := o.created.Add(o.lifetime + reapMargin); d.IsZero() || l.Before(d) {
			d = l
		}
	}
	return d
}

// NewTenants checks the tenants (CheckTenants) and opens the owners file,
// if any.
func NewTenants(cfg TenantsConfig) (*Tenants, error) {
	if err := CheckTenants(cfg.Tenants); err != nil {
		return nil, err
	}
	ts := &Tenants{byName: map[string]*tenantState{}, owners: map[string]*owned{}, logger: cfg.Logger, now: time.Now}
	if ts.logger == nil {
		ts.logger = slog.New(slog.DiscardHandler)
	}
	for _, c := range cfg.Tenants {
		t := &tenantState{name: c.Name, maxSessions: c.MaxSessions, sessions: map[string]*owned{}}
		if c.ExecutionsPerSecond > 0 {
			burst := c.Burst
			if burst == 0 {
				burst = max(1, int(math.Ceil(c.ExecutionsPerSecond)))
			}
			t.limiter = rate.NewLimiter(rate.Limit(c.ExecutionsPerSecond), burst)
		}
		ts.byName[c.Name] = t
		for _, k := range c.Keys {
			ts.keys = append(ts.keys, tenantKey{digest: k, t: t})
		}
	}
	ts.token = &tenantState{name: TokenTenant, sessions: map[string]*owned{}}
	ts.byName[TokenTenant] = ts.token
	if err := ts.initMetrics(cfg.Registerer); err != nil {
		return nil, err
	}
	if cfg.OwnersFile != "" {
		j, records, err := openJournal(cfg.OwnersFile, ts.logger)
		if err != nil {
			return nil, fmt.Errorf("tenants: owners file: %w", err)
		}
		ts.journal = j
		ts.load(records, ts.now())
		if err := ts.compactLocked(); err != nil {
			j.close()
			return nil, fmt.Errorf("tenants: owners file: %w", err)
		}
	}
	return ts, nil
}

// CheckTenants reports every mistake in tenants at once: a name that is
// not allowed or given twice, a tenant without a key, a key shared by two
// tenants, a limit out of range. A deployment learns of them at start-up.
func CheckTenants(tenants []Tenant) error {
	if len(tenants) == 0 {
		return errors.New("tenants: none configured")
	}
	if len(tenants) > MaxTenants {
		return fmt.Errorf("tenants: %d configured; at most %d", len(tenants), MaxTenants)
	}
	names := map[string]bool{}
	keys := map[[sha256.Size]byte]string{}
	var errs []error
	for i, c := range tenants {
		if err := checkTenant(c); err != nil {
			errs = append(errs, fmt.Errorf("tenant %d (%q): %w", i+1, c.Name, err))
		}
		if names[c.Name] {
			errs = append(errs, fmt.Errorf("tenant %q is configured twice", c.Name))
		}
		names[c.Name] = true
		for _, k := range c.Keys {
			if other, dup := keys[k]; dup && other != c.Name {
				errs = append(errs, fmt.Errorf("tenants %q and %q share a key; each key must name one tenant", other, c.Name))
			} else if dup {
				errs = append(errs, fmt.Errorf("tenant %q has the same key twice", c.Name))
			}
			keys[k] = c.Name
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("tenants: %w", err)
	}
	return nil
}

func checkTenant(c Tenant) error {
	var errs []error
	switch {
	case c.Name == TokenTenant:
		errs = append(errs, fmt.Errorf("the name %q is reserved for the auth-token credential", TokenTenant))
	case !tenantName.MatchString(c.Name):
		errs = append(errs, errors.New("the name must be 1 to 32 characters of a-z, 0-9, '_' and '-', starting with a letter or digit"))
	}
	if len(c.Keys) == 0 {
		errs = append(errs, errors.New("no key"))
	}
	for _, k := range c.Keys {
		if k == ([sha256.Size]byte{}) {
			errs = append(errs, errors.New("a key digest is all zeros"))
		}
	}
	if c.MaxSessions < 0 {
		errs = append(errs, fmt.Errorf("max_sessions %d is negative", c.MaxSessions))
	}
	switch eps := c.ExecutionsPerSecond; {
	case math.IsNaN(eps) || math.IsInf(eps, 0) || eps < 0:
		errs = append(errs, fmt.Errorf("executions_per_second %v: want a positive number, or 0 for no limit", eps))
	case c.Burst < 0:
		errs = append(errs, fmt.Errorf("burst %d is negative", c.Burst))
	case c.Burst > 0 && eps == 0:
		errs = append(errs, errors.New("burst needs executions_per_second"))
	}
	return errors.Join(errs...)
}

// Close closes the owners file. The Tenants must not be used after it.
func (ts *Tenants) Close() error {
	if ts == nil {
		return nil
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.journal == nil {
		return nil
	}
	err := ts.journal.close()
	ts.journal = nil
	return err
}

// lookup finds the tenant a bearer credential names, in time that does
// not depend on which key, if any, it matches: the presented credential is
// hashed, and its digest compared with every key's digest (and the
// token's, when tokenSet) without stopping at a match. Digests are unique
// (NewTenants), so at most one matches.
func (ts *Tenants) lookup(cred string, token *[sha256.Size]byte, tokenSet bool) *tenantState {
	got := sha256.Sum256([]byte(cred))
	match := 0 // 1 + the index of the matching key
	for i := range ts.keys {
		eq := subtle.ConstantTimeCompare(got[:], ts.keys[i].digest[:])
		match |= subtle.ConstantTimeSelect(eq, i+1, 0)
	}
	tok := subtle.ConstantTimeCompare(got[:], token[:])
	switch {
	case match > 0:
		return ts.keys[match-1].t
	case tok == 1 && tokenSet:
		return ts.token
	}
	return nil
}

// tenantCtxKey carries the caller's *tenantState in a request's context.
type tenantCtxKey struct{}

// tenantOf is the tenant the request authenticated as, nil without
// tenants.
func tenantOf(r *http.Request) *tenantState {
	t, _ := r.Context().Value(tenantCtxKey{}).(*tenantState)
	return t
}

// errNotOwned answers a session id the caller does not own. It is what an
// unknown id gets from the adapters (the wasm adapter's words), and with
// tenants it is what every unknown id gets, since the port is not asked.
func errNotOwned(id string) error {
	return fmt.Errorf("%w: %q", port.ErrSessionNotFound, id)
}

// begin reports whether t owns the session and, if so, counts a request
// on it under way until the returned function is called with the
// answer's status.
func (ts *Tenants) begin(t *tenantState, id string) (end func(status int), ok bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	o := ts.owners[id]
	if t == nil || o == nil || o.t != t {
		return nil, false
	}
	o.inCall++
	o.lastActive = ts.now()
	return func(status int) {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		o.inCall--
		// The backend counts its idle time from the end of the call at
		// the latest.
		o.lastActive = ts.now()
		if status >= 200 && status < 300 {
			o.verified = true
		}
	}, true
}

// gone forgets a session of t's that the backend no longer has (or that
// t destroyed).
func (ts *Tenants) gone(t *tenantState, id string) {
	if ts == nil || t == nil {
		return
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if o := ts.owners[id]; o != nil && o.t == t {
		ts.dropLocked(o)
	}
}

func (ts *Tenants) dropLocked(o *owned) {
	if ts.owners[o.id] != o {
		return
	}
	delete(ts.owners, o.id)
	if o.t != nil {
		delete(o.t.sessions, o.id)
	}
	ts.appendLocked(ownerRecord{Session: o.id, Gone: true})
}

// admit reserves one of t's sessions at once for a session about to be
// made, or refuses with a rate limit. The caller calls settle with the
// outcome. At the limit, t's sessions that the backend must have
// reclaimed are destroyed and forgotten first, and those taken over at
// start-up are probed; see the comment at the top.
func (ts *Tenants) admit(ctx context.Context, p port.CodeExecutionPort, t *tenantState) error {
	if ts == nil || t == nil {
		return nil
	}
	ts.mu.Lock()
	if t.hasRoom() {
		t.pending++
		ts.mu.Unlock()
		return nil
	}
	now := ts.now()
	var expired, unverified []string
	for _, o := range t.sessions {
		switch d := o.deadline(); {
		case o.inCall > 0:
		case !d.IsZero() && now.After(d):
			expired = append(expired, o.id)
			ts.dropLocked(o)
		case !o.verified:
			unverified = append(unverified, o.id)
		}
	}
	ts.mu.Unlock()

	if len(expired)+len(unverified) > 0 {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		for _, id := range expired {
			// Reclaimed already, as far as the server can tell; destroying
			// makes sure, and is a no-op for a session that is gone.
			_ = p.DestroySession(cctx, id)
		}
		for _, id := range unverified {
			_, err := p.ListFiles(cctx, id, ".")
			switch {
			case errors.Is(err, port.ErrSessionNotFound):
				ts.gone(t, id)
			case err == nil:
				ts.mu.Lock()
				if o := ts.owners[id]; o != nil {
					o.verified = true
				}
				ts.mu.Unlock()
			}
		}
		cancel()
	}

	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t.hasRoom() {
		t.pending++
		return nil
	}
	// A session is freed when its owner destroys it, which the server
	// cannot foresee, or when the backend reclaims it: the earliest such
	// deadline is the hint, within [1 s, 1 min].
	wait := time.Minute
	for _, o := range t.sessions {
		if d := o.deadline(); !d.IsZero() && o.inCall == 0 {
			wait = min(wait, d.Sub(ts.now()))
		}
	}
	ts.refused(t, "sessions")
	return &port.CapacityError{Resource: "sessions at once", Limit: t.maxSessions, RetryAfter: max(wait, time.Second), RateLimited: true,
		Detail: fmt.Sprintf("rate limited: tenant %s has %d sessions at once, its limit; destroy one or retry later", t.name, t.maxSessions)}
}

func (t *tenantState) hasRoom() bool {
	return t.maxSessions == 0 || len(t.sessions)+t.pending < t.maxSessions
}

// settle ends an admission: the session made (sess non-nil) becomes t's.
func (ts *Tenants) settle(t *tenantState, sess *port.Session) {
	if ts == nil || t == nil {
		return
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t.pending--
	if sess == nil || sess.ID == "" {
		return
	}
	if prev := ts.owners[sess.ID]; prev != nil {
		// The backend reused an id the server still held for a session it
		// reclaimed: the new session is the one that exists.
		ts.dropLocked(prev)
	}
	now := ts.now()
	o := &owned{id: sess.ID, tenant: t.name, t: t, created: now, idle: sess.IdleTimeout, lifetime: sess.MaxLifetime,
		lastActive: now, verified: true}
	ts.owners[o.id] = o
	t.sessions[o.id] = o
	ts.appendLocked(ownerRecord{Session: o.id, Tenant: t.name, Created: now, Idle: o.idle, Lifetime: o.lifetime})
}

// allowExec takes one of t's executions, or refuses with a rate limit
// whose hint is when the next one is free.
func (ts *Tenants) allowExec(t *tenantState) error {
	if ts == nil || t == nil || t.limiter == nil {
		return nil
	}
	now := ts.now()
	r := t.limiter.ReserveN(now, 1)
	if !r.OK() {
		ts.refused(t, "executions")
		return &port.CapacityError{Resource: "executions per second", RateLimited: true, RetryAfter: time.Second}
	}
	wait := r.DelayFrom(now)
	if wait == 0 {
		return nil
	}
	r.CancelAt(now)
	ts.refused(t, "executions")
	return &port.CapacityError{Resource: "executions", RetryAfter: wait, RateLimited: true,
		Detail: fmt.Sprintf("rate limited: tenant %s is over %g executions per second (burst %d); retry after %s",
			t.name, float64(t.limiter.Limit()), t.limiter.Burst(), wait.Round(time.Millisecond))}
}

// load takes over the ownership records a previous process wrote. A
// session's last activity is taken to be now: what the previous process
// saw is not recorded, and a later deadline than the backend's only
// delays a reconciliation, never cuts a live session short.
func (ts *Tenants) load(records map[string]ownerRecord, now time.Time) {
	for id, rec := range records {
		o := &owned{id: id, tenant: rec.Tenant, t: ts.byName[rec.Tenant], created: rec.Created,
			idle: rec.Idle, lifetime: rec.Lifetime, lastActive: now}
		if o.lifetime > 0 && now.After(o.created.Add(o.lifetime+reapMargin)) {
			continue // past its lifetime: the backend has reclaimed it
		}
		ts.owners[id] = o
		if o.t != nil {
			o.t.sessions[id] = o
		} else {
			ts.logger.Warn("a session's owner is not a configured tenant; nobody can reach the session", "session", id, "tenant", rec.Tenant)
		}
	}
}

// appendLocked records a change of ownership; a failure is logged (the
// change holds in memory, and after a restart a session without a record
// is reachable by nobody).
func (ts *Tenants) appendLocked(rec ownerRecord) {
	if ts.journal == nil {
		return
	}
	if err := ts.journal.append(rec); err != nil {
		ts.logger.Warn("owners file: recording a change failed", "session", rec.Session, "error", err)
		return
	}
	if ts.journal.lines > 2*len(ts.owners)+1024 {
		if err := ts.compactLocked(); err != nil {
			ts.logger.Warn("owners file: compaction failed", "error", err)
		}
	}
}

func (ts *Tenants) compactLocked() error {
	if ts.journal == nil {
		return nil
	}
	live := make([]ownerRecord, 0, len(ts.owners))
	for _, o := range ts.owners {
		live = append(live, ownerRecord{Session: o.id, Tenant: o.tenant, Created: o.created, Idle: o.idle, Lifetime: o.lifetime})
	}
	return ts.journal.rewrite(live)
}

// refused counts a refusal by a limit.
func (ts *Tenants) refused(t *tenantState, limit string) {
	if ts.refusals != nil {
		ts.refusals.WithLabelValues(t.name, limit).Inc()
	}
}

func (ts *Tenants) initMetrics(reg prometheus.Registerer) error {
	if reg == nil {
		return nil
	}
	ts.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "codeport_tenant_requests_total",
		Help: "Authenticated requests by tenant and HTTP status.",
	}, []string{"tenant", "status"})
	ts.execs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "codeport_tenant_executions_total",
		Help: "Exec calls by tenant and outcome: the result's outcome, or the error code of a call that did not run (rate_limited among them).",
	}, []string{"tenant", "outcome"})
	ts.refusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "codeport_tenant_limit_refusals_total",
		Help: "Requests refused with 429 by tenant and limit (sessions, executions).",
	}, []string{"tenant", "limit"})
	ts.live = prometheus.NewDesc("codeport_tenant_sessions",
		"Live sessions by tenant, as the server counts them against max_sessions.", []string{"tenant"}, nil)
	for _, t := range ts.byName {
		// Every series a tenant can have a limit refusal in starts at 0,
		// so that a rate over it is defined before the first refusal.
		for _, limit := range []string{"sessions", "executions"} {
			ts.refusals.WithLabelValues(t.name, limit)
		}
	}
	for _, c := range []prometheus.Collector{ts.requests, ts.execs, ts.refusals, (*liveSessions)(ts)} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("tenants: metrics: %w", err)
		}
	}
	return nil
}

// liveSessions collects codeport_tenant_sessions when scraped.
type liveSessions Tenants

func (l *liveSessions) Describe(ch chan<- *prometheus.Desc) { ch <- l.live }

func (l *liveSessions) Collect(ch chan<- prometheus.Metric) {
	ts := (*Tenants)(l)
	ts.mu.Lock()
	counts := make(map[string]int, len(ts.byName))
	for name, t := range ts.byName {
		counts[name] = len(t.sessions)
	}
	ts.mu.Unlock()
	for name, n := range counts {
		ch <- prometheus.MustNewConstMetric(ts.live, prometheus.GaugeValue, float64(n), name)
	}
}

// countRequest counts an answered request of t's.
func (ts *Tenants) countRequest(t *tenantState, status int) {
	if ts == nil || t == nil || ts.requests == nil {
		return
	}
	ts.requests.WithLabelValues(t.name, strconv.Itoa(status)).Inc()
}

var knownOutcomes = []port.Outcome{port.OutcomeCompleted, port.OutcomeProgramError, port.OutcomeTimedOut,
	port.OutcomeCancelled, port.OutcomeMemoryLimit, port.OutcomeSessionLost}

// countExec counts an exec call of t's by its outcome, or by the error
// code of a call that did not run.
func (ts *Tenants) countExec(ctx context.Context, t *tenantState, res port.Result, err error) {
	if ts == nil || t == nil || ts.execs == nil {
		return
	}
	// Only values from fixed sets: a remote backend's outcome could be
	// any string.
	outcome := "other"
	switch {
	case err != nil && ctx.Err() != nil:
		outcome = "client_closed"
	case err != nil:
		outcome = codeOf(err)
	case res.Outcome == "" && res.ReturnCode == 0:
		outcome = string(port.OutcomeCompleted)
	case res.Outcome == "":
		outcome = string(port.OutcomeProgramError)
	case slices.Contains(knownOutcomes, res.Outcome):
		outcome = string(res.Outcome)
	}
	ts.execs.WithLabelValues(t.name, outcome).Inc()
}

// tenantAuthenticated wraps h with the tenants' bearer check: the caller's
// tenant goes into the request's context, and its request is counted.
func (s *server) tenantAuthenticated(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var t *tenantState
		scheme, cred, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			t = s.cfg.tenants.lookup(strings.TrimSpace(cred), &s.tokenHash, s.cfg.token != "")
		}
		if t == nil {
			s.writeError(w, r, port.ErrUnauthorized)
			return
		}
		if rec, ok := w.(*recorder); ok {
			rec.tenant = t.name
		}
		r = r.WithContext(port.WithTenant(context.WithValue(r.Context(), tenantCtxKey{}, t), t.name))
		h(w, r)
		s.cfg.tenants.countRequest(t, statusOf(w))
	}
}

// owned wraps a route of one session so that it runs only for the
// session's owner. Any other id, another tenant's or none at all, gets
// what an unknown id gets, from this one code path and without the port
// being asked: 204 for DELETE (releasing an unknown id is no error), 404
// session_not_found for the rest.
func (s *server) owned(h http.HandlerFunc, destroy bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ts := s.cfg.tenants
		if ts == nil {
			h(w, r)
			return
		}
		id := r.PathValue("id")
		end, ok := ts.begin(tenantOf(r), id)
		if !ok {
			if destroy {
				if err := s.elsewhere(id); err != nil {
					// Misrouted: a 204 would say the session is gone.
					s.writeError(w, r, err)
					return
				}
				w.WriteHeader(http.StatusNoContent)
				return
			}
			s.writeError(w, r, errNotOwned(id))
			return
		}
		defer func() { end(statusOf(w)) }()
		h(w, r)
	}
}

// elsewhere is the port's error for an id that names another node than
// the port's (port.WithNodeID), or nil.
func (s *server) elsewhere(id string) error { return elsewhere(s.port, id) }

// elsewhere is p's error for an id that names another node than p's, or
// nil.
func elsewhere(p port.CodeExecutionPort, id string) error {
	n, ok := p.(interface{ NodeID() string })
	if !ok || n.NodeID() == "" {
		return nil
	}
	if node, ok := port.NodeOf(id); ok && node != n.NodeID() {
		return &port.OtherNodeError{Node: node, This: n.NodeID()}
	}
	return nil
}

// mine is the ids of those given that the request's tenant owns; all of
// them without tenants.
func (ts *Tenants) mine(t *tenantState, ids []string) []string {
	if ts == nil {
		return ids
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	out := ids[:0]
	for _, id := range ids {
		if o := ts.owners[id]; t != nil && o != nil && o.t == t {
			out = append(out, id)
		}
	}
	return out
}

// executed counts an exec call for its tenant, and forgets a session the
// call lost (later calls on it are session_not_found).
func (s *server) executed(r *http.Request, res port.Result, err error) {
	t := tenantOf(r)
	s.cfg.tenants.countExec(r.Context(), t, res, err)
	if err == nil && res.Outcome == port.OutcomeSessionLost {
		s.cfg.tenants.gone(t, r.PathValue("id"))
	}
}

// sessionOrNil is the session a create or restore made, nil if it failed.
func sessionOrNil(sess port.Session, err error) *port.Session {
	if err != nil {
		return nil
	}
	return &sess
}

// statusOf is the status the handler answered with, as the recorder saw it.
func statusOf(w http.ResponseWriter) int {
	if rec, ok := w.(*recorder); ok && rec.status != 0 {
		return rec.status
	}
	return http.StatusOK
}
