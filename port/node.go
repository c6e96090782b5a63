package port

import (
	"fmt"
	"regexp"
	"strings"
)

// A node id names one process among several that serve the same clients
// behind a router. With WithNodeID, every session id the Port hands out
// carries it, as "<node>.<driver's id>", so that a proxy can send each
// call to the node that holds the session by matching the id with one
// regular expression (SessionRoutePattern), with no table of sessions of
// its own. The driver never sees the prefix: its ids, and whatever it
// keeps under them (hibernated sessions, say), are the same with or
// without a node id.
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

// SessionRoutePattern matches the path of every session route of a
// node's session and captures the node id as "node". Proxies use it to
// route (deploy/nginx holds the same expression).
const SessionRoutePattern = `^/sessions/(?P<node>` + NodeIDPattern + `)\.[^/]+`

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
	case !ok || !nodeIDRE.MatchString(node):
		return "", fmt.Errorf("%w: %q names no node (this is node %q, whose ids are %q)", ErrSessionNotFound, shortID(sessionID), p.nodeID, p.nodeID+".<id>")
	case node != p.nodeID:
		return "", &OtherNodeError{Node: node, This: p.nodeID}
	case !usableID(rest):
		return "", unknownSession(sessionID)
	}
	return rest, nil
}
