package port

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// A node id names one process among several that serve the same clients
// behind a router. With WithNodeID, every session id the Port hands out
// carries it, as "<node>.<driver's id>", so that a proxy can send each
// call to the node that holds the session by matching the id with one
// regular expression (server.SessionRoutePattern, for the HTTP routes),
// with no table of sessions of its own. The driver never sees the prefix:
// its ids, and whatever it keeps under them (hibernated sessions, say),
// are the same with or without a node id.
//
// A node answers only for its own ids. An id that names another node is
// refused with an *OtherNodeError (ErrSessionNotFound, so 404 on the
// wire) without being looked up, so a misrouted call is reported as such
// rather than answered from the wrong place; that holds for
// DestroySession too, which otherwise succeeds for an unknown id, because
// a destroy that reached the wrong node would leave the session alive.

// NodeIDPattern is what a node id must match: an RFC 1123 DNS label, so
// that a node id can be a host name (a Kubernetes StatefulSet's pod name,
// resolved as "<node>.<service>").
const NodeIDPattern = `[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?`

var nodeIDRE = regexp.MustCompile(`^` + NodeIDPattern + `$`)

// CheckNodeID reports why name cannot be a node id, or nil.
func CheckNodeID(name string) error {
	if !nodeIDRE.MatchString(name) {
		return fmt.Errorf("%w: node id %q must be 1 to 63 lower-case letters, digits and '-', starting and ending with a letter or digit (a DNS label)", ErrInvalidRequest, shortID(name))
	}
	return nil
}

// WithNodeID makes the Port's session ids "<name>.<driver's id>" and
// refuses ids that name another node (see NodeIDPattern). An invalid name
// makes New panic: check it with CheckNodeID first. The empty name leaves
// ids as the driver makes them.
func WithNodeID(name string) Option {
	return func(o *options) { o.nodeID = name }
}

// OtherNodeError is the error of a call whose session id names another
// node. It matches ErrSessionNotFound with errors.Is.
type OtherNodeError struct {
	// Node is the node the id names; This is the node that refused it.
	Node, This string
}

func (e *OtherNodeError) Error() string {
	return fmt.Sprintf("session not found: the id names node %q; this is node %q (the call was routed to the wrong node)", e.Node, e.This)
}

// Is makes errors.Is(err, ErrSessionNotFound) hold.
func (e *OtherNodeError) Is(target error) bool { return target == ErrSessionNotFound }

// NodeOf returns the node id a session id names, and false when it names
// none (an id of a Port without a node id).
func NodeOf(sessionID string) (string, bool) {
	node, _, ok := strings.Cut(sessionID, ".")
	if !ok || !nodeIDRE.MatchString(node) {
		return "", false
	}
	return node, true
}

// NodeID is the Port's node id (WithNodeID), or "".
func (p *Port) NodeID() string { return p.nodeID }

// publicID is the id the Port hands out for a driver's session id.
func (p *Port) publicID(driverID string) string {
	if p.nodeID == "" || driverID == "" {
		return driverID
	}
	return p.nodeID + "." + driverID
}

// driverID is the driver's id for a session id the Port was given: the
// same id without a node id; with one, the id less its node prefix, or
// an error for an id that names another node or none.
func (p *Port) driverID(sessionID string) (string, error) {
	if !usableID(sessionID) {
		return "", unknownSession(sessionID)
	}
	if p.nodeID == "" {
		return sessionID, nil
	}
	node, rest, ok := strings.Cut(sessionID, ".")
	switch {
	case ok && node == p.nodeID:
		// The node's own id, on every call: no pattern to match. Its rest
		// is a driver id of the node's own, which has no node part: a
		// session moved here keeps its whole id ("a.<uuid>"), and
		// "<node>.a.<uuid>" must not reach it as well.
		if !usableID(rest) || strings.Contains(rest, ".") {
			return "", unknownSession(sessionID)
		}
		return rest, nil
	case !ok || !nodeIDRE.MatchString(node):
		return "", fmt.Errorf("%w: %q names no node (this is node %q, whose ids are %q)", ErrSessionNotFound, shortID(sessionID), p.nodeID, p.nodeID+".<id>")
	}
	// Another node's id: refused unless it is a session moved here under it.
	if m, ok := p.d.(SessionMover); ok && m.HasSession(sessionID) {
		return sessionID, nil
	}
	return "", &OtherNodeError{Node: node, This: p.nodeID}
}

// Moving sessions between nodes. A session keeps its id when it moves: a
// client that holds "a.<uuid>" goes on using it after node a was drained
// into node b. The snapshot of the session is restored on b with
// SnapshotOptions.SessionID set to its id; b's driver then holds it under
// that whole id, which no session of b's own can have (b's driver ids have
// no node part), and b answers for it although the id names a. The router
// learns the new home by name: the line of its node map that says where
// node a lives is pointed at b (deploy/nginx). Ids of node a that were not
// moved to b stay refused there as another node's.
//
// Every session has exactly one id that reaches it: "b.a.<uuid>" does not
// reach the session moved to b as "a.<uuid>", nor "<uuid>" the session b
// holds for "b.<uuid>". A restore keeps an id only in that one spelling:
// on a node with a node id, an id naming a node (its own, or the one the
// session moved from); on a node without one, a bare "<uuid>" (see
// keptID). And it keeps only the id of the session the snapshot was
// taken of, which the seal binds (SnapshotOptions.SessionID).

// SessionMover is implemented by a driver that can restore a snapshot under
// an id it is given and list its sessions: what moving sessions between
// nodes needs of it (see SnapshotOptions.SessionID and Port.SessionIDs).
type SessionMover interface {
	// RestoreSessionAs is Snapshotter.RestoreSession under id, which
	// CheckMovedID accepts; an id a session of the driver has already is
	// ErrInvalidRequest.
	RestoreSessionAs(ctx context.Context, r io.Reader, size int64, id string) (Session, error)
	// HasSession reports whether the driver holds a session (live, or
	// hibernated) under id.
	HasSession(id string) bool
	// SessionIDs lists the ids of the driver's sessions, live and
	// hibernated, in no order.
	SessionIDs() []string
	// ReleaseSession is Snapshotter.SnapshotSession followed by
	// DestroySession with no call on the session in between, so that
	// nothing done to the session after its snapshot is lost when it
	// moves. Once the snapshot is written to w, it calls commit (which
	// seals it and hands it on) and destroys the session only if commit
	// succeeds; a session whose snapshot or commit fails stays as it was.
	ReleaseSession(ctx context.Context, sessionID string, w io.Writer, commit func() error) error
}

var movedIDRE = regexp.MustCompile(`^(?:` + NodeIDPattern + `\.)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// CheckMovedID reports why id cannot be kept by a moved session: it must
// be a session id as codeport makes them, a lower-case UUID with or
// without a node id before it ("node-a.<uuid>"). An id of that form is
// also safe as a file name, which a driver that hibernates sessions needs.
func CheckMovedID(id string) error {
	if !movedIDRE.MatchString(id) {
		return fmt.Errorf("%w: session id %q cannot be kept: it must be a UUID, with or without a node id and '.' before it", ErrInvalidRequest, shortID(id))
	}
	return nil
}

// SessionIDs lists the sessions the Port's driver holds, live and
// hibernated, by the ids clients use, so that an operator can drain a
// node. It is ErrUnsupported for a driver that cannot say.
func (p *Port) SessionIDs(ctx context.Context) ([]string, error) {
	m, ok := p.d.(SessionMover)
	if !ok {
		return nil, fmt.Errorf("%w: the %s adapter cannot list its sessions", ErrUnsupported, p.info.Name)
	}
	k, err := p.begin(ctx, OpListSessions, "")
	if err != nil {
		return nil, err
	}
	k.observe()
	ids := m.SessionIDs()
	for i, id := range ids {
		if !strings.Contains(id, ".") {
			// One of the node's own: moved sessions have their whole id.
			ids[i] = p.publicID(id)
		}
	}
	k.done(nil)
	return ids, nil
}

// keptID checks the id a restore is asked to keep, and returns the
// driver's id for it. The rule is the same with a node id and without
// one: a session keeps an id only in the one spelling by which this
// Port's calls reach it, so that no session answers to two ids.
//
//   - With a node id, every id this node answers to names a node: its
//     own ("<this>.<uuid>", a session coming home, which the driver
//     holds as "<uuid>") or another's ("<other>.<uuid>", a session moved
//     here, held whole). A bare "<uuid>" is refused: no call could reach
//     it.
//   - Without a node id, the node's ids are bare: "<uuid>" is kept, and
//     an id naming a node ("z.<uuid>") is refused. A node without a node
//     id is not behind a router that sends it another node's ids, so
//     such a session would answer to an id no client of this node was
//     ever given.
func (p *Port) keptID(id string) (string, error) {
	if err := CheckMovedID(id); err != nil {
		return "", err
	}
	node, rest, ok := strings.Cut(id, ".")
	switch {
	case p.nodeID == "" && ok:
		return "", fmt.Errorf("%w: session id %q names node %q, but this server has no node id: it keeps only ids of the form <uuid> (give it a node id to take sessions moved from other nodes)", ErrInvalidRequest, shortID(id), node)
	case p.nodeID == "":
		return id, nil
	case !ok:
		return "", fmt.Errorf("%w: session id %q names no node; this node (%q) keeps only ids of the form <node>.<uuid>", ErrInvalidRequest, shortID(id), p.nodeID)
	case node == p.nodeID:
		// A session coming home.
		return rest, nil
	}
	return id, nil
}
