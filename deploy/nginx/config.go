package nginx

import (
	"bytes"
	"embed"
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	"github.com/codeport/codeport/port"
)

// Files holds the shipped configuration: nginx.conf (a stand-alone main
// configuration), codeport.conf (the router) and nodes.conf (where the
// nodes are; the example of run-local.sh).
//
//go:embed nginx.conf codeport.conf nodes.conf
var Files embed.FS

// Node is one node behind the router: its --node-id and the address
// ("host:port", an IP address) the router reaches it at.
type Node struct {
	Name string
	Addr string
	// ServedBy, when set, names another node of the list that answers
	// for this node's name: its sessions were moved there (codeport
	// drain). The name's map line then points at that node's upstream,
	// and this node gets no new sessions.
	ServedBy string
}

// ExampleNodes are the nodes of the shipped nodes.conf.
var ExampleNodes = []Node{
	{Name: "node-a", Addr: "127.0.0.1:8081"},
	{Name: "node-b", Addr: "127.0.0.1:8082"},
	{Name: "node-c", Addr: "127.0.0.1:8083"},
}

// The three parts of nodes.conf's form: its head (the comments), one
// upstream per node, then the upstream for new sessions and the map.
const (
	nodeUpstream = "upstream codeport-%s {\n    server %s;\n    keepalive 16;\n}\n\n"
	anyServer    = "    server %s max_fails=1 fail_timeout=10s;\n"
	mapLine      = "    %s codeport-%s;\n"
)

// NodesConf is nodes.conf for nodes, in the form of the shipped file (its
// comments included): the shipped file is NodesConf(ExampleNodes). It
// refuses a name that is not a node id, an address that is not an IP
// address and port, and a name given twice.
func NodesConf(nodes []Node) ([]byte, error) {
	if len(nodes) == 0 {
		return nil, fmt.Errorf("nginx: no nodes")
	}
	seen := map[string]bool{}
	for _, n := range nodes {
		if err := port.CheckNodeID(n.Name); err != nil {
			return nil, fmt.Errorf("nginx: %w", err)
		}
		if seen[n.Name] {
			return nil, fmt.Errorf("nginx: node %q given twice", n.Name)
		}
		seen[n.Name] = true
		if _, err := netip.ParseAddrPort(n.Addr); err != nil {
			return nil, fmt.Errorf("nginx: node %q: address: %w", n.Name, err)
		}
	}
	for _, n := range nodes {
		if n.ServedBy != "" && (n.ServedBy == n.Name || !seen[n.ServedBy]) {
			return nil, fmt.Errorf("nginx: node %q: served by %q, which is not another node of the list", n.Name, n.ServedBy)
		}
	}
	shipped, err := Files.ReadFile("nodes.conf")
	if err != nil {
		return nil, err
	}
	head, _, ok := bytes.Cut(shipped, []byte("\nupstream codeport-"))
	if !ok {
		return nil, fmt.Errorf("nginx: nodes.conf has no node upstream")
	}
	var b bytes.Buffer
	b.Write(head)
	b.WriteByte('\n')
	for _, n := range nodes {
		fmt.Fprintf(&b, nodeUpstream, n.Name, n.Addr)
	}
	b.WriteString("# New sessions (and the routes of no session) go to the node with the\n" +
		"# fewest requests in flight. A node that refused a connection or timed\n" +
		"# out is left alone for fail_timeout, then tried again.\n" +
		"upstream codeport-any {\n" +
		"    # Shared by nginx's worker processes: one count of requests in flight\n" +
		"    # and one view of which node failed.\n" +
		"    zone codeport-any 64k;\n" +
		"    least_conn;\n")
	for _, n := range nodes {
		if n.ServedBy == "" {
			fmt.Fprintf(&b, anyServer, n.Addr)
		}
	}
	b.WriteString("    keepalive 32;\n}\n\n" +
		"# The node named by a session id ($node, captured by\n" +
		"# codeport.conf's session location) -> the upstream that serves it.\n" +
		"map $node $codeport_node_upstream {\n" +
		"    default \"\";\n")
	for _, n := range nodes {
		served := n.Name
		if n.ServedBy != "" {
			served = n.ServedBy
		}
		fmt.Fprintf(&b, mapLine, n.Name, served)
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// listenLine is codeport.conf's listen directive.
var listenLine = regexp.MustCompile(`(?m)^    listen [^;\n]+;$`)

// RouterConf is codeport.conf listening on addr (an IP address and port)
// instead of the shipped 127.0.0.1:8080.
func RouterConf(addr string) ([]byte, error) {
	if _, err := netip.ParseAddrPort(addr); err != nil {
		return nil, fmt.Errorf("nginx: listen address: %w", err)
	}
	b, err := Files.ReadFile("codeport.conf")
	if err != nil {
		return nil, err
	}
	if n := len(listenLine.FindAll(b, -1)); n != 1 {
		return nil, fmt.Errorf("nginx: codeport.conf has %d listen lines, want 1", n)
	}
	return listenLine.ReplaceAll(b, []byte("    listen "+addr+";")), nil
}

// regexLocation finds the regular-expression locations in codeport.conf.
var regexLocation = regexp.MustCompile(`(?m)^    location ~ "([^"]+)" \{$`)

// SessionPattern is the regular expression codeport.conf routes sessions
// with, in Go's syntax (nginx's PCRE "(?<name>" written "(?P<name>"): the
// same as server.SessionRoutePattern, as a test checks.
func SessionPattern() (string, error) { return locationPattern("^/sessions/") }

// ContainerPattern is the regular expression codeport.conf routes the
// Containers API's routes of a container with, in Go's syntax: the same
// as containers.PathPattern, as a test checks.
func ContainerPattern() (string, error) { return locationPattern("^/v1/containers/") }

// locationPattern is the one regular-expression location of codeport.conf
// that starts with prefix.
func locationPattern(prefix string) (string, error) {
	b, err := Files.ReadFile("codeport.conf")
	if err != nil {
		return "", err
	}
	var found []string
	for _, m := range regexLocation.FindAllSubmatch(b, -1) {
		if strings.HasPrefix(string(m[1]), prefix) {
			found = append(found, strings.ReplaceAll(string(m[1]), "(?<", "(?P<"))
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("nginx: codeport.conf has %d regular-expression locations for %s, want 1", len(found), prefix)
	}
	return found[0], nil
}
