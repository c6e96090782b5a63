// Package nginx is the router that puts several `codeport serve` nodes
// behind Debian's nginx (1.22), shipped as configuration in this directory
// (README.md explains the files), and the Go code that runs it: the
// multi-node test here and the benchmarks in bench/ start real nodes and a
// real nginx with the shipped files, changed only where they name
// addresses.
//
// The files are embedded (Files). Only two things in them differ from one
// deployment to another, both addresses: the router's listen line in
// codeport.conf (RouterConf puts another) and nodes.conf, which says where
// each node lives (NodesConf writes it, in the shipped file's exact form,
// for any set of nodes; a test holds the shipped file to that form).
//
// StartCluster starts nodes and the router on loopback ports of this
// machine, for tests and benchmarks:
//
//	bin, err := nginx.BuildCodeport(ctx, dir) // go build ./cmd/codeport
//	c, err := nginx.StartCluster(ctx, nginx.ClusterConfig{
//		Codeport: bin,
//		Nodes:    []string{"node-a", "node-b", "node-c"},
//		Dir:      dir,
//	})
//	defer c.Close()
//	client, err := httpadapter.New(httpadapter.NewConfig(c.URL()))
//	// ... sessions created through client land on all three nodes;
//	c.Kill("node-b") // its sessions answer 503 backend_unreachable
//
// nginx must be installed (FindNginx looks for it); the tests skip without
// it, and fail under CI=true.
package nginx
