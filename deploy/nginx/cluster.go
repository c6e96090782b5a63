package nginx

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/codeport/codeport/internal/testkit/measure"
)

// ErrNoNginx is FindNginx's error when nginx is not installed.
var ErrNoNginx = errors.New("nginx is not installed (Debian: apt-get install nginx)")

// FindNginx returns the path of the nginx binary: the one on PATH, else
// Debian's /usr/sbin/nginx (not on a normal user's PATH).
func FindNginx() (string, error) {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, nil
	}
	const debian = "/usr/sbin/nginx"
	if fi, err := os.Stat(debian); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
		return debian, nil
	}
	return "", ErrNoNginx
}

// BuildCodeport builds the codeport command into dir and returns its path.
// It needs the go command and this module's sources (it is for tests and
// benchmarks, run from the module).
func BuildCodeport(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "codeport")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/codeport/codeport/cmd/codeport")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build codeport: %w\n%s", err, out)
	}
	return bin, nil
}

// ClusterConfig is what StartCluster starts.
type ClusterConfig struct {
	// Codeport is the codeport binary the nodes run (BuildCodeport).
	Codeport string
	// Nginx is the nginx binary; empty: FindNginx's.
	Nginx string
	// Nodes are the nodes' ids, at least one.
	Nodes []string
	// Dir holds everything the cluster writes: the nodes' logs, nginx's
	// prefix (configuration, logs, pid). It must exist; the caller
	// removes it.
	Dir string
	// NodeArgs are more `codeport serve` flags, for every node.
	NodeArgs []string
	// CompileCacheDir is the nodes' --compile-cache-dir: shared, so that
	// the runtime is compiled once (by the first node) rather than by
	// each. Empty: codeport's default, under the user's cache directory.
	CompileCacheDir string
}

// Cluster is nodes and an nginx router in front of them, each a process
// of this machine listening on a loopback port. Close stops them.
type Cluster struct {
	nodes  []*process
	router *process
	url    string
	// servedBy is each drained node's name's new home (Repoint).
	servedBy map[string]string
}

// process is a started child process. Its goroutine, started by start,
// waits for it to end and then closes done; whoever holds the process
// ends it with stop or kill, which wait for done.
type process struct {
	name string
	addr string // host:port it listens on
	log  string // its stdout and stderr
	cmd  *exec.Cmd
	done chan struct{}
	err  error // cmd.Wait's; read only after done is closed
}

func start(name, log string, cmd *exec.Cmd) (*process, error) {
	f, err := os.Create(log)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = f, f
	// Its own process group, so that nginx's workers can be ended with
	// their master should it not stop them; and killed with this process
	// (Linux) should it die without Close.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, log: log, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends sig and waits up to grace for the process to end, then
// kills its process group.
func (p *process) stop(sig syscall.Signal, grace time.Duration) {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	// A master that ended without its workers (it was killed): end them.
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}

// tail is the end of the process's log, for an error message.
func (p *process) tail() string {
	b, _ := os.ReadFile(p.log)
	const max = 2000
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}

// StartCluster starts cfg.Nodes as `codeport serve --node-id NAME` on
// loopback ports, then nginx with the shipped configuration in front of
// them on another, and returns once every node and the router answer
// /healthz. The first node starts alone, so that it fills the compile
// cache the others then read. On error, whatever was started is stopped.
func StartCluster(ctx context.Context, cfg ClusterConfig) (_ *Cluster, err error) {
	if cfg.Codeport == "" || cfg.Dir == "" || len(cfg.Nodes) == 0 {
		return nil, errors.New("nginx: ClusterConfig needs Codeport, Dir and Nodes")
	}
	if cfg.Nginx == "" {
		if cfg.Nginx, err = FindNginx(); err != nil {
			return nil, err
		}
	}
	if cfg.CompileCacheDir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("nginx: no compile cache directory: %w", err)
		}
		cfg.CompileCacheDir = filepath.Join(cache, "codeport", "wazero")
	}
	c := &Cluster{}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	for i, name := range cfg.Nodes {
		p, err := startNode(cfg, name)
		if err != nil {
			return nil, err
		}
		c.nodes = append(c.nodes, p)
		if i == 0 {
			if err := waitNode(ctx, p); err != nil {
				return nil, err
			}
		}
	}
	for _, p := range c.nodes[1:] {
		if err := waitNode(ctx, p); err != nil {
			return nil, err
		}
	}
	nodes := make([]Node, len(c.nodes))
	for i, p := range c.nodes {
		nodes[i] = Node{Name: p.name, Addr: p.addr}
	}
	// The port is chosen here and bound by nginx a moment later: another
	// process may take it in between, so a failure to bind is retried.
	for attempt := 1; ; attempt++ {
		c.router, err = startRouter(ctx, cfg, nodes)
		if err == nil || !errors.Is(err, errAddrInUse) || attempt == 5 {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	c.url = "http://" + c.router.addr
	return c, nil
}

// servingLine is the line of `codeport serve`'s log that says where it
// listens.
var servingLine = regexp.MustCompile(`msg="serving contract v1" addr=(\S+)`)

func startNode(cfg ClusterConfig, name string) (*process, error) {
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--node-id", name,
		"--compile-cache-dir", cfg.CompileCacheDir}, cfg.NodeArgs...)
	cmd := exec.Command(cfg.Codeport, args...)
	// The nodes' settings are the flags, whatever the environment says.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CODEPORT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	return start(name, filepath.Join(cfg.Dir, name+".log"), cmd)
}

// waitNode waits for the node's address in its log, then for its
// /healthz to answer 200 (the runtime is ready).
func waitNode(ctx context.Context, p *process) error {
	for p.addr == "" {
		if m := servingLine.FindSubmatch(readFile(p.log)); m != nil {
			p.addr = string(m[1])
			break
		}
		if err := pause(ctx, p); err != nil {
			return err
		}
	}
	return waitHealthy(ctx, p)
}

func readFile(name string) []byte {
	b, _ := os.ReadFile(name)
	return b
}

// pause waits a moment, and fails when the process ended or ctx is done.
func pause(ctx context.Context, p *process) error {
	select {
	case <-ctx.Done():
		return fmt.Errorf("waiting for %s: %w; its log ends:\n%s", p.name, ctx.Err(), p.tail())
	case <-p.done:
		return fmt.Errorf("%s exited: %v; its log ends:\n%s", p.name, p.err, p.tail())
	case <-time.After(20 * time.Millisecond):
		return nil
	}
}

func waitHealthy(ctx context.Context, p *process) error {
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.addr+"/healthz", nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if err := pause(ctx, p); err != nil {
			return err
		}
	}
}

var errAddrInUse = errors.New("address in use")

// startRouter writes nginx's prefix directory (the shipped files, with
// the router's listen address and nodes.conf for nodes) and starts nginx
// in the foreground.
func startRouter(ctx context.Context, cfg ClusterConfig, nodes []Node) (*process, error) {
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	prefix, err := os.MkdirTemp(cfg.Dir, "nginx-")
	if err != nil {
		return nil, err
	}
	main, err := Files.ReadFile("nginx.conf")
	if err != nil {
		return nil, err
	}
	router, err := RouterConf(addr)
	if err != nil {
		return nil, err
	}
	nodesConf, err := NodesConf(nodes)
	if err != nil {
		return nil, err
	}
	for name, b := range map[string][]byte{"nginx.conf": main, "codeport.conf": router, "nodes.conf": nodesConf} {
		if err := os.WriteFile(filepath.Join(prefix, name), b, 0o644); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(cfg.Nginx, "-p", prefix, "-c", filepath.Join(prefix, "nginx.conf"),
		"-e", filepath.Join(prefix, "error.log"), "-g", "daemon off;")
	p, err := start("nginx", filepath.Join(prefix, "stderr.log"), cmd)
	if err != nil {
		return nil, err
	}
	p.addr = addr
	if err := waitHealthy(ctx, p); err != nil {
		p.stop(syscall.SIGTERM, 5*time.Second)
		if bytes.Contains(readFile(filepath.Join(prefix, "error.log")), []byte("Address already in use")) {
			return nil, fmt.Errorf("nginx on %s: %w", addr, errAddrInUse)
		}
		return nil, fmt.Errorf("nginx: %w; its error log ends:\n%s", err, tailOf(filepath.Join(prefix, "error.log")))
	}
	return p, nil
}

func tailOf(name string) string {
	return (&process{log: name}).tail()
}

// freePort is a loopback address no socket is bound to right now.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

// URL is the router's base URL.
func (c *Cluster) URL() string { return c.url }

// Nodes are the nodes as the router knows them: names and addresses.
func (c *Cluster) Nodes() []Node {
	out := make([]Node, len(c.nodes))
	for i, p := range c.nodes {
		out[i] = Node{Name: p.name, Addr: p.addr}
	}
	return out
}

// NodeURL is a node's own base URL (past the router), or "" for a name
// that is not one of the cluster's.
func (c *Cluster) NodeURL(name string) string {
	if p := c.node(name); p != nil {
		return "http://" + p.addr
	}
	return ""
}

func (c *Cluster) node(name string) *process {
	for _, p := range c.nodes {
		if p.name == name {
			return p
		}
	}
	return nil
}

// Repoint tells the router that node name's sessions now live on node to
// (they were moved there by codeport drain): nodes.conf is rewritten with
// name's map line pointing at to's upstream and name out of the pool for
// new sessions, and nginx is told to reload it (SIGHUP). The reload is
// asynchronous: the old configuration may answer for a moment.
func (c *Cluster) Repoint(name, to string) error {
	if c.node(name) == nil || c.node(to) == nil {
		return fmt.Errorf("nginx: no node %q or %q", name, to)
	}
	if c.servedBy == nil {
		c.servedBy = map[string]string{}
	}
	c.servedBy[name] = to
	nodes := c.Nodes()
	for i := range nodes {
		nodes[i].ServedBy = c.servedBy[nodes[i].Name]
	}
	conf, err := NodesConf(nodes)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(c.router.log), "nodes.conf"), conf, 0o644); err != nil {
		return err
	}
	return c.router.cmd.Process.Signal(syscall.SIGHUP)
}

// Kill ends a node with SIGKILL, as a crash would, and waits until it is
// gone. The router is not told.
func (c *Cluster) Kill(name string) error {
	p := c.node(name)
	if p == nil {
		return fmt.Errorf("nginx: no node %q", name)
	}
	if p.exited() {
		return fmt.Errorf("nginx: node %q already exited: %v", name, p.err)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		return err
	}
	<-p.done
	return nil
}

// Logs are the paths of the nodes' logs and nginx's error log, by name
// ("nginx" for the router's).
func (c *Cluster) Logs() map[string]string {
	out := map[string]string{}
	for _, p := range c.nodes {
		out[p.name] = p.log
	}
	if c.router != nil {
		out["nginx"] = filepath.Join(filepath.Dir(c.router.log), "error.log")
	}
	return out
}

// CPU is the processor time (user and system) the cluster's processes
// have used so far: the nodes, nginx's master and its workers. It reads
// /proc (Linux); a process that is gone counts nothing.
func (c *Cluster) CPU() time.Duration {
	var pids []int
	for _, p := range c.nodes {
		if !p.exited() {
			pids = append(pids, p.cmd.Process.Pid)
		}
	}
	if c.router != nil && !c.router.exited() {
		master := c.router.cmd.Process.Pid
		pids = append(pids, master)
		pids = append(pids, childrenOf(master)...)
	}
	return measure.CPU(pids...)
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, err := os.Open(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "PPid:"); ok {
				if pp, err := strconv.Atoi(strings.TrimSpace(rest)); err == nil && pp == pid {
					out = append(out, child)
				}
				break
			}
		}
		f.Close()
	}
	return out
}

// Close stops the router (SIGTERM: nginx's fast shutdown) and the nodes
// (SIGTERM: codeport's graceful shutdown), killing what has not ended
// within a few seconds.
func (c *Cluster) Close() {
	if c.router != nil {
		c.router.stop(syscall.SIGTERM, 5*time.Second)
	}
	done := make(chan struct{})
	for _, p := range c.nodes {
		go func() {
			p.stop(syscall.SIGTERM, 15*time.Second)
			done <- struct{}{}
		}()
	}
	for range c.nodes {
		<-done
	}
}
