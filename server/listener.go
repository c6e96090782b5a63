package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"net/http"

	"github.com/codeport/codeport/port"
)

// Guard is what stands before NewHandler's routes, for a listener of
// another protocol that serves the same port, such as `codeport mcp
// --listen`: the host and origin rules (WithAllowedHosts), the bearer
// token (WithBearerToken) or the tenants' keys (WithTenants), and the cap
// on request bodies (WithMaxRequestBytes). Handler applies them to each
// request as the contract's handler does, with the same code and the same
// answers (401, 403 host_not_allowed, 413 request_too_large, each with a
// {"detail", "code"} body); Port keeps each tenant to its own sessions and
// limits in the port calls made for the requests Handler let through.
// So every listener of a deployment answers to the same rules, configured
// once.
//
// Options that only the contract's routes use (WithReady, WithGatherer,
// WithMaxUploadBytes, WithTracerProvider) are ignored.
type Guard struct {
	s *server
}

// NewGuard returns the Guard the options configure, as NewHandler's.
func NewGuard(opts ...Option) *Guard {
	s := &server{cfg: newConfig(opts)}
	if s.cfg.token != "" {
		s.tokenHash = sha256.Sum256([]byte(s.cfg.token))
	}
	return &Guard{s: s}
}

// MaxRequestBytes is the cap on a request body that Handler enforces.
func (g *Guard) MaxRequestBytes() int64 { return g.s.cfg.maxRequestBytes }

// Handler returns next behind the guard. A request that passes reaches
// next with its caller in its context (CallerOf) and its body capped: a
// body that announces more than the cap is refused before a byte of it is
// read, and a read of next's past the cap fails with an
// *http.MaxBytesError (the connection is then closed), so that next never
// holds more than the cap of any request, however the client sends it.
//
// The refusals are logged (WithLogger) with the method, path, status and
// tenant; what passes is next's to log.
func (g *Guard) Handler(next http.Handler) http.Handler {
	s := g.s
	inner := s.authenticated(func(w http.ResponseWriter, r *http.Request) {
		limit := s.cfg.maxRequestBytes
		if r.ContentLength > limit {
			s.writeError(w, r, &http.MaxBytesError{Limit: limit})
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(unwrap(w), r.Body, limit)
		}
		if rec, ok := w.(*recorder); ok {
			// Passed: next's answer is not a refusal of the guard's.
			rec.passed = true
		}
		next.ServeHTTP(w, r)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// next gets the recorder as its writer: its status is the
		// tenant's request count's (codeport_tenant_requests_total).
		rf := &recorder{ResponseWriter: w}
		if err := s.checkOrigin(r); err != nil {
			s.writeError(rf, r, err)
		} else {
			inner(rf, r)
		}
		if rf.status != 0 && !rf.passed {
			attrs := []any{"method", r.Method, "path", r.URL.Path, "status", rf.status}
			if t := tenantOf(r); t != nil {
				attrs = append(attrs, "tenant", t.name)
			}
			s.cfg.logger.InfoContext(context.WithoutCancel(r.Context()), "request refused", attrs...)
		}
	})
}

// Caller is who a request that Guard.Handler let through authenticated
// as: with tenants, its tenant (the auth-token's is TokenTenant); without,
// nobody in particular. It is what a listener carries from the request to
// the port calls made for it, when they run in a context of their own (an
// MCP tool call runs in its protocol session's).
type Caller struct {
	t *tenantState
}

// CallerOf is the caller of a request Guard.Handler let through, from its
// context; false without tenants.
func CallerOf(ctx context.Context) (Caller, bool) {
	t, _ := ctx.Value(tenantCtxKey{}).(*tenantState)
	return Caller{t: t}, t != nil
}

// Tenant names the caller's tenant; "" without tenants.
func (c Caller) Tenant() string {
	if c.t == nil {
		return ""
	}
	return c.t.name
}

// Context returns ctx carrying the caller, for Guard.Port.
func (c Caller) Context(ctx context.Context) context.Context {
	if c.t == nil {
		return ctx
	}
	return port.WithTenant(context.WithValue(ctx, tenantCtxKey{}, c.t), c.t.name)
}

// Port returns p as the caller in each call's context (CallerOf,
// Caller.Context) may use it, with WithTenants: a session made through it
// is the caller's tenant's, counted against its sessions at once; a
// session the caller's tenant does not own answers as an unknown one
// (port.ErrSessionNotFound, or nothing for DestroySession), without p
// being asked; and each Execute takes one of the tenant's executions per
// second, as the contract's handler does for its routes (see Tenants). A
// call whose context carries no caller is refused with
// port.ErrUnauthorized. Without tenants, Port returns p itself.
func (g *Guard) Port(p port.CodeExecutionPort) port.CodeExecutionPort {
	if g.s.cfg.tenants == nil {
		return p
	}
	return &tenantPort{CodeExecutionPort: p, ts: g.s.cfg.tenants}
}

// tenantPort is Guard.Port's port.
type tenantPort struct {
	port.CodeExecutionPort
	ts *Tenants
}

func (tp *tenantPort) tenant(ctx context.Context) (*tenantState, error) {
	t, _ := ctx.Value(tenantCtxKey{}).(*tenantState)
	if t == nil {
		return nil, port.ErrUnauthorized
	}
	return t, nil
}

// call runs f on a session of the caller's, as owned does a route's.
func (tp *tenantPort) call(ctx context.Context, id string, f func(t *tenantState) error) error {
	t, err := tp.tenant(ctx)
	if err != nil {
		return err
	}
	end, ok := tp.ts.begin(t, id)
	if !ok {
		return errNotOwned(id)
	}
	err = f(t)
	if err != nil && codeOf(err) == "session_not_found" {
		// The backend reclaimed it: it no longer counts as the tenant's.
		tp.ts.gone(t, id)
	}
	end(statusFor(err))
	return err
}

// statusFor is the status the contract's handler answers err with, 200
// for none.
func statusFor(err error) int {
	if err == nil {
		return http.StatusOK
	}
	return answers[codeOf(err)].status
}

func (tp *tenantPort) CreateSession(ctx context.Context, req port.CreateSessionRequest) (port.Session, error) {
	t, err := tp.tenant(ctx)
	if err != nil {
		return port.Session{}, err
	}
	if err := tp.ts.admit(ctx, tp.CodeExecutionPort, t); err != nil {
		return port.Session{}, err
	}
	sess, err := tp.CodeExecutionPort.CreateSession(ctx, req)
	tp.ts.settle(t, sessionOrNil(sess, err))
	if err == nil && sess.ID == "" {
		return port.Session{}, errors.New("port returned a session without an id")
	}
	return sess, err
}

func (tp *tenantPort) Execute(ctx context.Context, id string, req port.ExecuteRequest) (port.Result, error) {
	var res port.Result
	err := tp.call(ctx, id, func(t *tenantState) error {
		if err := tp.ts.allowExec(t); err != nil {
			tp.ts.countExec(ctx, t, port.Result{}, err)
			return err
		}
		var err error
		res, err = tp.CodeExecutionPort.Execute(ctx, id, req)
		tp.ts.countExec(ctx, t, res, err)
		if err == nil && res.Outcome == port.OutcomeSessionLost {
			tp.ts.gone(t, id)
		}
		return err
	})
	return res, err
}

func (tp *tenantPort) DestroySession(ctx context.Context, id string) error {
	t, err := tp.tenant(ctx)
	if err != nil {
		return err
	}
	end, ok := tp.ts.begin(t, id)
	if !ok {
		// As for an unknown id; but a misrouted one is no success.
		return elsewhere(tp.CodeExecutionPort, id)
	}
	err = tp.CodeExecutionPort.DestroySession(ctx, id)
	var other *port.OtherNodeError
	if err != nil && (!errors.Is(err, port.ErrSessionNotFound) || errors.As(err, &other)) {
		end(statusFor(err))
		return err
	}
	tp.ts.gone(t, id)
	end(http.StatusNoContent)
	return nil
}

func (tp *tenantPort) ListFiles(ctx context.Context, id, dir string) ([]port.FileInfo, error) {
	var files []port.FileInfo
	err := tp.call(ctx, id, func(*tenantState) error {
		var err error
		files, err = tp.CodeExecutionPort.ListFiles(ctx, id, dir)
		return err
	})
	return files, err
}

func (tp *tenantPort) GetFile(ctx context.Context, id, path string) (io.ReadCloser, port.FileInfo, error) {
	var (
		rc   io.ReadCloser
		info port.FileInfo
	)
	err := tp.call(ctx, id, func(*tenantState) error {
		var err error
		rc, info, err = tp.CodeExecutionPort.GetFile(ctx, id, path)
		return err
	})
	return rc, info, err
}

func (tp *tenantPort) PutFile(ctx context.Context, id, path string, r io.Reader) (port.FileInfo, error) {
	var info port.FileInfo
	err := tp.call(ctx, id, func(*tenantState) error {
		var err error
		info, err = tp.CodeExecutionPort.PutFile(ctx, id, path, r)
		return err
	})
	return info, err
}

func (tp *tenantPort) GetOutputFile(ctx context.Context, id, fileID string) (io.ReadCloser, port.FileInfo, error) {
	var (
		rc   io.ReadCloser
		info port.FileInfo
	)
	err := tp.call(ctx, id, func(*tenantState) error {
		var err error
		rc, info, err = tp.CodeExecutionPort.GetOutputFile(ctx, id, fileID)
		return err
	})
	return rc, info, err
}
