package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/deploy/nginx"
	"github.com/codeport/codeport/internal/testkit/measure"
	"github.com/codeport/codeport/port"
)

// Several nodes behind nginx (deploy/nginx): real `codeport serve`
// processes (the binary TestMain builds) and Debian's nginx with the
// shipped configuration, all on loopback. The clients are adapters/http
// with keep-alive, as for the http peer. Skipped, with the reason, where
// nginx is not installed.

// clusterNodes names the nodes of a cluster of n.
var clusterNodes = []string{"node-a", "node-b", "node-c"}

// startCluster starts n nodes, each with serve's defaults (a warm pool of
// 2), and nginx in front of them; they are stopped when b ends.
func startCluster(b *testing.B, n int) *nginx.Cluster {
	nginxBin, err := nginx.FindNginx()
	if err != nil {
		b.Skipf("skipped: %v", err)
	}
	if workerBin == "" {
		b.Skip("skipped: no codeport binary (TestMain builds one only for benchmarks)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := nginx.StartCluster(ctx, nginx.ClusterConfig{
		Codeport: workerBin,
		Nginx:    nginxBin,
		Nodes:    clusterNodes[:n],
		Dir:      b.TempDir(),
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c
}

// clusterClient is an adapters/http port over url.
func clusterClient(b *testing.B, url string) port.CodeExecutionPort {
	p, err := httpadapter.New(httpadapter.NewConfig(url))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })
	return p
}

// clusterTarget is the direct and the routed way to a cluster: straight
// to its first node, or through nginx.
func clusterTargets(c *nginx.Cluster) []struct{ name, url string } {
	return []struct{ name, url string }{
		{"direct", c.NodeURL(clusterNodes[0])},
		{"nginx", c.URL()},
	}
}

// BenchmarkNginxW2LiveCall is W2 (print(1) in a live session) on a node of
// a three-node cluster, directly and through nginx: the cost of the hop.
func BenchmarkNginxW2LiveCall(b *testing.B) {
	c := startCluster(b, 3)
	for _, t := range clusterTargets(c) {
		b.Run(t.name, func(b *testing.B) {
			p := clusterClient(b, t.url)
			ctx := context.Background()
			id := newSession(b, p)
			if err := run(ctx, p, id, liveCode, liveOut); err != nil {
				b.Fatal(err)
			}
			sampled(b, "call", reps(300), func() time.Duration { return timedRun(b, p, id, liveCode, liveOut) })
		})
	}
}

// BenchmarkNginxW3CreateCallDestroy is W3 (create, print(1), destroy)
// directly on a node of a three-node cluster and through nginx (then on
// whichever node nginx picks), each sample starting with every node's
// warm pool full.
func BenchmarkNginxW3CreateCallDestroy(b *testing.B) {
	c := startCluster(b, 3)
	for _, t := range clusterTargets(c) {
		b.Run(t.name, func(b *testing.B) {
			p := clusterClient(b, t.url)
			ctx := context.Background()
			sampled(b, "ccd", reps(15), func() time.Duration {
				waitClusterPools(b, c)
				t0 := time.Now()
				s, err := p.CreateSession(ctx, port.CreateSessionRequest{})
				if err != nil {
					b.Fatal(err)
				}
				if err := run(ctx, p, s.ID, liveCode, liveOut); err != nil {
					b.Fatal(err)
				}
				if err := p.DestroySession(ctx, s.ID); err != nil {
					b.Fatal(err)
				}
				return time.Since(t0)
			})
		})
	}
}

// sessionsClients is how many clients BenchmarkNginxSessions runs at once
// (CODEPORT_BENCH_NGINX_CLIENTS): enough to keep three nodes busy.
const sessionsClients = 6

// BenchmarkNginxSessions is the throughput of whole sessions: clients
// concurrent loops of create, print(1 + 1), destroy, for a few seconds,
// on one node directly, one node behind nginx and three nodes behind
// nginx. Besides sessions/s it reports the CPU time per session of the
// nodes and nginx together: on a machine with fewer cores than nodes the
// nodes share the same cores, so sessions/s is bounded by the CPU a
// session costs, not by how many nodes there are.
func BenchmarkNginxSessions(b *testing.B) {
	clients := envInt("CODEPORT_BENCH_NGINX_CLIENTS", sessionsClients)
	span := time.Duration(float64(5*time.Second) * scale())
	for _, shape := range []struct {
		name   string
		nodes  int
		direct bool
	}{
		{"1node-direct", 1, true},
		{"1node-nginx", 1, false},
		{"3nodes-nginx", 3, false},
	} {
		b.Run(shape.name, func(b *testing.B) {
			c := startCluster(b, shape.nodes)
			url := c.URL()
			if shape.direct {
				url = c.NodeURL(clusterNodes[0])
			}
			p := clusterClient(b, url)
			for b.Loop() {
				waitClusterPools(b, c)
				cpu0 := c.CPU()
				lat, rate, err := curve(p, clients, span)
				cpu := c.CPU() - cpu0
				if err != nil {
					b.Fatal(err)
				}
				measure.Report(b, "first", lat)
				b.ReportMetric(rate, "sessions/s")
				b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(len(lat)), "cpu-ms/session")
				b.ReportMetric(float64(clients), "clients")
			}
		})
	}
}

// waitClusterPools waits until every node's warm pool is full, reading
// the nodes' /metrics as the in-process peers read their registry.
func waitClusterPools(b *testing.B, c *nginx.Cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, n := range c.Nodes() {
		for {
			m, err := scrape(ctx, c.NodeURL(n.Name)+"/metrics")
			if err != nil {
				b.Fatal(err)
			}
			// As in startWasm: interpreters started and not handed out.
			if m["codeport_instance_start_duration_seconds_count"]-m[`codeport_pool_takes_total{result="hit"}`]-m[`codeport_pool_takes_total{result="miss"}`] >= defaultPool {
				break
			}
			select {
			case <-ctx.Done():
				b.Fatalf("waiting for %s's warm pool: %v", n.Name, ctx.Err())
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
}

// scrape reads the samples of a Prometheus text exposition, by series
// ("name" or "name{labels}" as written).
func scrape(ctx context.Context, url string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, errors.Join(fmt.Errorf("GET %s", url), err)
	}
	return out, nil
}
