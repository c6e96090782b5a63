package nginx

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/codeport/codeport/gateway/containers"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/server"
)

// routeCase is a path and the node a router must read from it ("" for
// none).
type routeCase struct{ path, node string }

// checkRoutePattern holds the expression codeport.conf routes by (got,
// err) to want, and checks that it reads from each path the node that
// nodeOf reads from the id after prefix.
func checkRoutePattern(t *testing.T, got string, err error, want, prefix string, nodeOf func(string) (string, bool), cases []routeCase) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("codeport.conf routes %s with\n  %s\nwant\n  %s", prefix, got, want)
	}
	re := regexp.MustCompile(got)
	for _, tc := range cases {
		m := re.FindStringSubmatch(tc.path)
		got := ""
		if m != nil {
			got = m[re.SubexpIndex("node")]
		}
		id := strings.Split(strings.TrimPrefix(tc.path, prefix), "/")[0]
		want, _ := nodeOf(id)
		if got != tc.node || got != want {
			t.Errorf("%s: router reads node %q, the id's package %q, want %q", tc.path, got, want, tc.node)
		}
	}
}

// The router matches session routes with the same expression as the
// port (server.SessionRoutePattern): a change to the id format that the
// router missed would send calls to the wrong node or to none. And the
// expression captures what port.NodeOf reads from an id.
func TestSessionPatternIsThePorts(t *testing.T) {
	got, err := SessionPattern()
	checkRoutePattern(t, got, err, server.SessionRoutePattern, "/sessions/", port.NodeOf, []routeCase{
		{"/sessions/node-a.6f1c0e62-6bd2-4a38-9b43-2e1c5e9a1f00/exec", "node-a"},
		{"/sessions/n.x", "n"},
		{"/sessions/" + strings.Repeat("a", 63) + ".x/files", strings.Repeat("a", 63)},
		{"/sessions/6f1c0e62-6bd2-4a38-9b43-2e1c5e9a1f00", ""}, // no node
		{"/sessions/Node-A.x", ""},                             // not a DNS label
		{"/sessions/-a.x", ""},
		{"/sessions/" + strings.Repeat("a", 64) + ".x", ""},
	})
}

// The router matches a container's Containers API routes with the same
// expression as the containers package (containers.PathPattern), and
// reads the node its ids carry as containers.NodeOf does.
func TestContainerPatternIsTheStores(t *testing.T) {
	got, err := ContainerPattern()
	hex := strings.Repeat("0f", 16)
	checkRoutePattern(t, got, err, containers.PathPattern, "/v1/containers/", containers.NodeOf, []routeCase{
		{"/v1/containers/cntr_node-a_" + hex, "node-a"},
		{"/v1/containers/cntr_n_" + hex + "/files/cfile_1/content", "n"},
		{"/v1/containers/cntr_" + hex, ""},         // no node
		{"/v1/containers/cntr_Node_" + hex, ""},    // not a DNS label
		{"/v1/containers/cntr_n_" + hex + "0", ""}, // not an id
		{"/v1/containers", ""},
	})
}

// The shipped nodes.conf is what NodesConf writes for its three nodes, so
// the test's and the benchmarks' routers differ from it only in addresses
// (and in how many nodes there are).
func TestShippedNodesConfIsNodesConf(t *testing.T) {
	shipped, err := Files.ReadFile("nodes.conf")
	if err != nil {
		t.Fatal(err)
	}
	got, err := NodesConf(ExampleNodes)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, shipped) {
		t.Fatalf("NodesConf(ExampleNodes) differs from nodes.conf:\n%s", got)
	}
	other, err := NodesConf([]Node{{Name: "n1", Addr: "10.0.0.7:9000"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"upstream codeport-n1 {\n    server 10.0.0.7:9000;", "    server 10.0.0.7:9000 max_fails=1", "    n1 codeport-n1;\n"} {
		if !bytes.Contains(other, []byte(want)) {
			t.Errorf("nodes.conf for one node lacks %q:\n%s", want, other)
		}
	}
	if bytes.Contains(other, []byte("127.0.0.1:808")) || bytes.Contains(other, []byte("node-a codeport")) {
		t.Errorf("nodes.conf for one node keeps the example's nodes:\n%s", other)
	}
}

// A drained node's name is served by the node its sessions moved to, and
// it gets no new sessions.
func TestNodesConfServedBy(t *testing.T) {
	b, err := NodesConf([]Node{{Name: "a", Addr: "127.0.0.1:1", ServedBy: "b"}, {Name: "b", Addr: "127.0.0.1:2"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"    a codeport-b;\n", "    b codeport-b;\n", "    server 127.0.0.1:2 max_fails"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("nodes.conf lacks %q:\n%s", want, b)
		}
	}
	if bytes.Contains(b, []byte("server 127.0.0.1:1 max_fails")) {
		t.Errorf("the drained node still gets new sessions:\n%s", b)
	}
}

func TestNodesConfRefusesBadNodes(t *testing.T) {
	for _, nodes := range [][]Node{
		nil,
		{{Name: "Node-A", Addr: "127.0.0.1:1"}},
		{{Name: "a;b", Addr: "127.0.0.1:1"}},
		{{Name: "a", Addr: "127.0.0.1"}},
		{{Name: "a", Addr: "127.0.0.1:1; include /etc/passwd"}},
		{{Name: "a", Addr: "localhost:80"}},
		{{Name: "a", Addr: "127.0.0.1:1"}, {Name: "a", Addr: "127.0.0.1:2"}},
		{{Name: "a", Addr: "127.0.0.1:1", ServedBy: "a"}},
		{{Name: "a", Addr: "127.0.0.1:1", ServedBy: "b"}},
	} {
		if b, err := NodesConf(nodes); err == nil {
			t.Errorf("NodesConf(%v) = nil error:\n%s", nodes, b)
		}
	}
}

func TestRouterConfReplacesOnlyTheListenAddress(t *testing.T) {
	shipped, err := Files.ReadFile("codeport.conf")
	if err != nil {
		t.Fatal(err)
	}
	got, err := RouterConf("127.0.0.1:39999")
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Replace(shipped, []byte("listen 127.0.0.1:8080;"), []byte("listen 127.0.0.1:39999;"), 1)
	if !bytes.Equal(got, want) {
		t.Fatalf("RouterConf changed more than the listen line:\n%s", got)
	}
	for _, bad := range []string{"", "8080", "127.0.0.1:1; include x", "[::1]"} {
		if _, err := RouterConf(bad); err == nil {
			t.Errorf("RouterConf(%q) = nil error", bad)
		}
	}
}

// nginx accepts the shipped files as they are (nginx -t).
func TestShippedConfigIsValid(t *testing.T) {
	bin := needNginx(t)
	dir := t.TempDir()
	for _, name := range []string{"nginx.conf", "codeport.conf", "nodes.conf"} {
		b, err := Files.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(bin, "-t", "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-e", filepath.Join(dir, "error.log")).CombinedOutput()
	if err != nil {
		t.Fatalf("nginx -t: %v\n%s", err, out)
	}
}

// needNginx returns nginx's path, or ends the test: skipped outside CI,
// failed under CI=true (where .ci/run installs nginx), so that the
// multi-node test never silently stops running.
func needNginx(t *testing.T) string {
	t.Helper()
	bin, err := FindNginx()
	if err == nil {
		return bin
	}
	switch strings.ToLower(os.Getenv("CI")) {
	case "true", "1", "yes":
		t.Fatalf("cannot run: %v (failing because CI=true)", err)
	}
	t.Skipf("skipped: %v (it fails instead when CI=true)", err)
	return ""
}
