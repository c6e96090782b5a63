package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/port"
)

const drainUsage = `Usage: codeport drain --from URL --to URL [--auth-token-file FILE] [--keep-dir DIR]

Moves every session of the node at --from to the node at --to, each under
the id it had, so that clients go on using their ids. Both nodes must share
the snapshot key (--snapshot-key-file). Each session is snapshotted and
destroyed on --from in one step (no call runs on it in between), restored
on --to under its id, and, should that fail, restored on --from again. A
snapshot that neither node took back is kept in --keep-dir and named on
stderr: nothing is lost.

Before draining, stop sending new sessions to --from (take it out of the
router's pool of nodes for POST /sessions); afterwards point its node id at
--to in the router's node map (deploy/nginx/nodes.map) and reload the
router. Until then, calls for a moved session reach --from, which answers
404 session_not_found.

The token (the same on both nodes) may also come from $CODEPORT_AUTH_TOKEN.
With tenants, a tenant's key lists and moves that tenant's sessions only,
and they stay that tenant's on the new node: drain once per tenant key.
Exits 0 when every session moved, 1 otherwise, 2 on a usage error.

Flags:
`

// drainCommand is `codeport drain`.
func drainCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newClientFlags("drain", drainUsage, stdout, stderr)
	from := fs.String("from", "", "base `URL` of the node to drain (required)")
	to := fs.String("to", "", "base `URL` of the node that takes its sessions (required)")
	tokenFile := fs.String("auth-token-file", "", "`file` holding the nodes' bearer token (default $CODEPORT_AUTH_TOKEN)")
	keepDir := fs.String("keep-dir", "", "`directory` for snapshots neither node took back (default: a new temporary directory, made only if needed)")
	busyWait := fs.Duration("busy-wait", 30*time.Second, "how long to wait for a session that is running a call")
	tenant := fs.String("snapshot-tenant", "", "the snapshot tenant `name` the sessions' snapshots are bound to (X-Codeport-Snapshot-Tenant)")
	fail := fs.fail
	if code, done := fs.parse(args); done {
		return code
	}
	for _, u := range []struct{ name, v string }{{"--from", *from}, {"--to", *to}} {
		if _, err := backendURL(u.name, u.v); err != nil {
			return fail("%v", err)
		}
	}
	if *from == *to {
		return fail("--from and --to name the same node")
	}
	if *busyWait < 0 {
		return fail("--busy-wait must not be negative")
	}
	token := os.Getenv("CODEPORT_AUTH_TOKEN")
	if *tokenFile != "" {
		t, warnings, err := readSecretFile("auth-token-file", *tokenFile)
		if err != nil {
			return fail("%v", err)
		}
		for _, w := range warnings {
			fmt.Fprintf(stderr, "codeport drain: warning: %s\n", w)
		}
		token = t
	}
	d := &drainer{token: token, keepDir: *keepDir, busyWait: *busyWait, tenant: *tenant, stderr: stderr}
	var err error
	if d.from, err = httpadapter.New(httpadapter.NewConfig(*from).WithToken(token)); err != nil {
		return fail("--from: %v", err)
	}
	defer d.from.Close()
	if d.to, err = httpadapter.New(httpadapter.NewConfig(*to).WithToken(token)); err != nil {
		return fail("--to: %v", err)
	}
	defer d.to.Close()

	ids, err := listSessions(ctx, *from, token)
	if err != nil {
		fmt.Fprintf(stderr, "codeport drain: listing the sessions of %s: %v\n", *from, err)
		return 1
	}
	moved, failed, nodes := 0, 0, map[string]bool{}
	for _, id := range ids {
		switch err := d.move(ctx, id); {
		case err == nil:
			moved++
			if n, ok := port.NodeOf(id); ok {
				nodes[n] = true
			}
		case errors.Is(err, port.ErrSessionNotFound):
			// Destroyed, or expired, since the listing: nothing to move.
		default:
			failed++
			fmt.Fprintf(stderr, "codeport drain: session %s: %v\n", id, err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	fmt.Fprintf(stdout, "moved %d of %d sessions from %s to %s\n", moved, len(ids), *from, *to)
	for n := range nodes {
		fmt.Fprintf(stdout, "now point node %s at %s in the router's node map and reload it\n", n, *to)
	}
	if failed > 0 || ctx.Err() != nil {
		return 1
	}
	return 0
}

// drainer moves sessions between two nodes.
type drainer struct {
	from, to *port.Port
	token    string
	keepDir  string
	busyWait time.Duration
	tenant   string
	stderr   io.Writer
}

// move moves one session: released from the old node into a local file,
// restored on the new one under its id, else taken back by the old one,
// else kept.
func (d *drainer) move(ctx context.Context, id string) error {
	f, err := os.CreateTemp("", "codeport-drain-")
	if err != nil {
		return err
	}
	keep := false
	defer func() {
		f.Close()
		if !keep {
			os.Remove(f.Name())
		}
	}()
	deadline := time.Now().Add(d.busyWait)
	for {
		err = d.from.SnapshotSession(ctx, id, f, port.SnapshotOptions{Tenant: d.tenant, Release: true})
		if !errors.Is(err, port.ErrSessionBusy) || time.Now().After(deadline) {
			break
		}
		if _, serr := f.Seek(0, io.SeekStart); serr != nil {
			return serr
		}
		if terr := f.Truncate(0); terr != nil {
			return terr
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	if err != nil {
		// Not released (a failed snapshot leaves the session), unless the
		// download broke after the node sent it all: then the file holds
		// it whole, and the restores below take it.
		if !errors.Is(err, port.ErrBackendUnreachable) {
			return err
		}
	}
	restore := func(p *port.Port) error {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		_, err := p.RestoreSession(ctx, f, port.SnapshotOptions{Tenant: d.tenant, SessionID: id})
		return err
	}
	rerr := restore(d.to)
	if rerr == nil {
		return nil
	}
	if err != nil {
		// The snapshot may be incomplete and the session still on the old
		// node: nothing more to do.
		return fmt.Errorf("snapshot: %w (restoring what arrived: %v)", err, rerr)
	}
	if restore(d.from) == nil {
		return fmt.Errorf("not moved, left on the old node: restoring on the new node: %w", rerr)
	}
	keep = true
	dir := d.keepDir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "codeport-drain-kept-"); err != nil {
			return fmt.Errorf("restoring on the new node: %v; on the old node too; and no directory to keep the snapshot in: %w", rerr, err)
		}
		d.keepDir = dir
	}
	kept := filepath.Join(dir, id+".snapshot")
	if err := os.Rename(f.Name(), kept); err != nil {
		return fmt.Errorf("restoring on either node failed (%v), and the snapshot stays at %s: %w", rerr, f.Name(), err)
	}
	return fmt.Errorf("restoring on either node failed (%v); the snapshot is kept at %s (restore it with POST /snapshots/restore and header %s: %s)", rerr, kept, contract.KeepSessionIDHeader, id)
}

// listSessions asks a node for its session ids (GET /sessions).
func listSessions(ctx context.Context, base, token string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	u, err := url.JoinPath(base, "sessions")
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	const maxList = 64 << 20 // about a million ids
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxList+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxList {
		return nil, fmt.Errorf("the session list is over %d bytes", maxList)
	}
	if resp.StatusCode != http.StatusOK {
		var e contract.Error
		if json.Unmarshal(body, &e) == nil && e.Detail != "" {
			return nil, fmt.Errorf("%s: %s", resp.Status, e.Detail)
		}
		return nil, fmt.Errorf("%s", resp.Status)
	}
	var list contract.SessionList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("not a session list: %w", err)
	}
	for _, id := range list.SessionIDs {
		if err := port.CheckMovedID(id); err != nil {
			return nil, fmt.Errorf("the node listed a session id it could not have made: %w", err)
		}
	}
	return list.SessionIDs, nil
}
