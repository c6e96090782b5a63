package httpadapter

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/port"
)

// Session snapshots are codeport's extension of contract v1 (POST
// /sessions/{id}/snapshot and POST /snapshots/restore). The remote server
// seals them with its own key, so this adapter passes them through
// (port.SealedSnapshotter) and needs none. The snapshot's tenant is sent
// (contract.SnapshotTenantHeader): the server binds a snapshot to its
// credential and to that name, so a gateway can keep its own users'
// snapshots apart.

// SealsSnapshots reports whether the remote backend offers snapshots, as
// its capabilities say (described at most once a minute, within ctx and
// the request timeout).
func (a *adapter) SealsSnapshots(ctx context.Context) (bool, error) {
	caps, err := a.Describe(ctx)
	if err != nil {
		return false, err
	}
	return caps.Snapshots, nil
}

// SnapshotSealed implements port.SealedSnapshotter: the remote's sealed
// snapshot, copied to w as it arrives. A body shorter than its
// Content-Length is an error (and what w got, a snapshot no restore
// accepts).
func (a *adapter) SnapshotSealed(ctx context.Context, id string, w io.Writer, opt port.SnapshotOptions) error {
	c := &call{op: opSnapshot, method: http.MethodPost, path: sessionPath(id, "/snapshot"),
		route: "POST /sessions/{id}/snapshot", session: id, wall: a.snapshotWall()}
	callCtx, cancel := context.WithTimeoutCause(ctx, c.wall, errWallClock)
	defer cancel()
	query := ""
	if opt.Release {
		// The remote destroys the session once it has sent the snapshot.
		query = "release=true"
	}
	req, err := a.newRequest(callCtx, c, query, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", contract.SnapshotMediaType+", application/json")
	if err := setTenant(req, opt); err != nil {
		return err
	}
	resp, err := a.do(ctx, callCtx, c, req)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		_, _, err := a.readAnswer(ctx, callCtx, c, resp)
		if err == nil {
			err = violation(c, resp.StatusCode, "a success other than 200")
		}
		return err
	}
	defer a.finish(resp)
	limit := int64(port.DefaultMaxSnapshotBytes)
	n, err := io.Copy(w, io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return transportError(ctx, callCtx, c, err)
	}
	if n > limit {
		return violation(c, resp.StatusCode, fmt.Sprintf("a snapshot over %d bytes", limit))
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return violation(c, resp.StatusCode, fmt.Sprintf("body of %d bytes, Content-Length %d", n, resp.ContentLength))
	}
	if opt.Release && opt.Commit != nil {
		return opt.Commit()
	}
	return nil
}

// RestoreSealed implements port.SealedSnapshotter: the snapshot is
// streamed to the remote, which checks its seal.
func (a *adapter) RestoreSealed(ctx context.Context, r io.Reader, opt port.SnapshotOptions) (port.Session, error) {
	c := &call{op: opRestore, method: http.MethodPost, path: "/snapshots/restore",
		route: "POST /snapshots/restore", wall: a.snapshotWall()}
	callCtx, cancel := context.WithTimeoutCause(ctx, c.wall, errWallClock)
	defer cancel()
	req, err := a.newRequest(callCtx, c, "", io.NopCloser(r))
	if err != nil {
		return port.Session{}, err
	}
	if err := setTenant(req, opt); err != nil {
		return port.Session{}, err
	}
	if opt.SessionID != "" {
		// Checked by the Port (port.CheckMovedID): safe in a header.
		req.Header.Set(contract.KeepSessionIDHeader, opt.SessionID)
	}
	req.Header.Set("Content-Type", contract.SnapshotMediaType)
	req.Header.Set("Accept", "application/json")
	resp, err := a.do(ctx, callCtx, c, req)
	if err != nil {
		return port.Session{}, err
	}
	status, b, err := a.readAnswer(ctx, callCtx, c, resp)
	if err != nil {
		return port.Session{}, err
	}
	return decodeSession(c, status, b)
}

// snapshotWall bounds a snapshot's transfer: a large session's snapshot
// takes longer than an ordinary request.
func (a *adapter) snapshotWall() time.Duration {
	return max(a.cfg.settings.RequestTimeout, 10*time.Minute)
}

// setTenant names the snapshot's tenant in the request, percent-encoded
// (a header value cannot hold every byte of a name).
func setTenant(req *http.Request, opt port.SnapshotOptions) error {
	v := url.PathEscape(opt.Tenant)
	if len(v) > contract.MaxSnapshotTenantBytes {
		return fmt.Errorf("httpadapter: %w: a snapshot tenant over %d bytes once percent-encoded", port.ErrInvalidRequest, contract.MaxSnapshotTenantBytes)
	}
	if v != "" {
		req.Header.Set(contract.SnapshotTenantHeader, v)
	}
	return nil
}
