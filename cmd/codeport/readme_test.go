package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codeport/codeport/internal/testkit/logtest"
	"github.com/codeport/codeport/internal/testkit/pyvenv"
	"github.com/codeport/codeport/internal/testkit/testcache"
)

// The README's quickstart is the first thing a new user runs, so it is run
// here as written: its curl commands with curl against `codeport serve`,
// its Go program built and run, and its MCP configurations handed to an
// MCP client. A change to a route, a body, a flag or the library that
// breaks a quickstart block fails this test instead of the user.

const (
	readmeFile     = "../../README.md"
	makefile       = "../../Makefile"
	quickstartFile = "../../examples/quickstart/main.go"
)

// quickstartMarker names the fenced block that follows it.
var quickstartMarker = regexp.MustCompile(`^<!-- quickstart:([a-z-]+) -->$`)

// quickstartBlocks returns the README's marked blocks by name: each
// `<!-- quickstart:NAME -->` line is followed by a fenced block, whose
// text (without the fences) is the block's.
func quickstartBlocks(t *testing.T) map[string]string {
	t.Helper()
	readme, err := os.ReadFile(readmeFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(readme), "\n")
	blocks := map[string]string{}
	for i := 0; i < len(lines); i++ {
		m := quickstartMarker.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
			t.Fatalf("README line %d: %s is not followed by a fenced block", i+1, lines[i])
		}
		var body []string
		j := i + 2
		for ; j < len(lines) && lines[j] != "```"; j++ {
			body = append(body, lines[j])
		}
		if j == len(lines) {
			t.Fatalf("README line %d: the block of %s never ends", i+2, m[1])
		}
		if _, dup := blocks[m[1]]; dup {
			t.Fatalf("README: two blocks named quickstart:%s", m[1])
		}
		blocks[m[1]] = strings.Join(body, "\n") + "\n"
		i = j
	}
	for _, name := range []string{"run", "curl", "go", "mcp-stdio", "mcp-http", "mcp-http-config"} {
		if _, ok := blocks[name]; !ok {
			t.Fatalf("README has no block marked <!-- quickstart:%s -->", name)
		}
	}
	return blocks
}

// readmeAddr is where the quickstart says `make run` serves: the
// Makefile's LISTEN, which must also be serve's default (the go run form
// names no address).
func readmeAddr(t *testing.T) string {
	t.Helper()
	mk, err := os.ReadFile(makefile)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^LISTEN\s*\?=\s*(\S+)$`).FindSubmatch(mk)
	if m == nil || !regexp.MustCompile(`(?m)^run: build\n\tbin/codeport serve --listen \$\(LISTEN\)$`).Match(mk) {
		t.Fatal("the Makefile's run target is not `bin/codeport serve --listen $(LISTEN)` with a LISTEN default")
	}
	addr := string(m[1])
	if def := newBinder(nil).Defaults().Listen; def != addr {
		t.Fatalf("make run serves on %s, go run ./cmd/codeport serve on %s: the quickstart cannot name both", addr, def)
	}
	return addr
}

// withFlags puts flags after the command name of args (the test's own
// directories and port), leaving the rest as the README gives them.
func withFlags(args []string, flags ...string) []string {
	out := append([]string{args[0]}, flags...)
	return append(out, args[1:]...)
}

// started is a command run in process by startCommand.
type started struct {
	log  *logtest.Buffer
	done chan struct{} // closed when it returns
	code int           // its exit code, once done is closed
	stop context.CancelFunc
}

// startCommand runs the codeport command args in process until the test
// ends (or stop is called).
func startCommand(t *testing.T, stdin io.Reader, stdout io.Writer, args ...string) *started {
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	s := &started{log: &logtest.Buffer{}, done: make(chan struct{}), stop: cancel}
	go func() {
		defer close(s.done)
		s.code = run(ctx, args, stdin, stdout, s.log)
	}()
	t.Cleanup(func() {
		cancel()
		<-s.done
	})
	return s
}

var serveAddr = regexp.MustCompile(`msg="serving contract v1" addr=(\S+)`)

// mcpConfig is the part of a Claude Desktop or Cursor configuration the
// quickstart gives: unknown fields are refused, so that a misspelt key
// fails here rather than being ignored by the client.
type mcpConfig struct {
	MCPServers map[string]struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
		URL     string   `json:"url"`
	} `json:"mcpServers"`
}

func parseMCPConfig(t *testing.T, block string) (command string, args []string, url string) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(block))
	dec.DisallowUnknownFields()
	var c mcpConfig
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("the MCP configuration is not what clients read: %v\n%s", err, block)
	}
	e, ok := c.MCPServers["codeport"]
	if !ok || len(c.MCPServers) != 1 {
		t.Fatalf("the MCP configuration names no server codeport alone: %s", block)
	}
	return e.Command, e.Args, e.URL
}

// runPython calls run_python with print(1+1) and checks its result.
func runPython(t *testing.T, ctx context.Context, cs *mcp.ClientSession) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_python", Arguments: map[string]any{"code": "print(1+1)"}})
	if err != nil {
		t.Fatalf("run_python: %v", err)
	}
	if stdout, _ := res.StructuredContent.(map[string]any)["stdout"].(string); res.IsError || stdout != "2\n" {
		t.Fatalf("run_python print(1+1): %s", resultText(res))
	}
}

// TestREADMEQuickstart runs the quickstart's blocks as the README gives
// them; only the address, the sessions directory and the compile cache
// are the test's own.
func TestREADMEQuickstart(t *testing.T) {
	blocks := quickstartBlocks(t)
	addr := readmeAddr(t)
	cache := testcache.Dir()

	t.Run("go", func(t *testing.T) {
		t.Parallel()
		src, err := os.ReadFile(quickstartFile)
		if err != nil {
			t.Fatal(err)
		}
		if blocks["go"] != string(src) {
			t.Fatalf("the README's Go block is not examples/quickstart/main.go: make them the same\nREADME:\n%s\nfile:\n%s", blocks["go"], src)
		}
		bin := filepath.Join(t.TempDir(), "quickstart")
		build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/codeport/codeport/examples/quickstart")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build examples/quickstart: %v\n%s", err, out)
		}
		// As a user runs it: its compile cache is the default one.
		cmd := exec.CommandContext(t.Context(), bin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || string(out) != "2\n" {
			t.Fatalf("examples/quickstart: %v, stdout %q, stderr %s", err, out, stderr.String())
		}
	})

	// The commands run one after the other: wazero v1.12.0 records its
	// version in a global without synchronisation at the first compilation
	// cache a process opens, so two adapters opened at once in one process
	// race (the Go program is a process of its own).
	t.Run("in-process", func(t *testing.T) {
		t.Parallel()
		t.Run("curl", func(t *testing.T) {
			if _, err := exec.LookPath("curl"); err != nil {
				if pyvenv.InCI() {
					t.Fatalf("cannot run: curl is not installed (failing because CI=true)")
				}
				t.Skip("skipped: curl is not installed (it fails instead when CI=true)")
			}
			// The run block's second form names the command line; make run's
			// is checked against the Makefile by readmeAddr.
			run := blocks["run"]
			if !strings.Contains(run, "make run") {
				t.Fatalf("the run block has no make run:\n%s", run)
			}
			m := regexp.MustCompile(`go run \./cmd/codeport ([a-z]+)`).FindStringSubmatch(run)
			if m == nil {
				t.Fatalf("the run block has no go run ./cmd/codeport COMMAND:\n%s", run)
			}
			srv := startCommand(t, strings.NewReader(""), io.Discard,
				withFlags([]string{m[1]}, "--listen", "127.0.0.1:0", "--sessions-dir", t.TempDir(), "--compile-cache-dir", cache)...)
			got := srv.log.Await(t, serveAddr, srv.done)

			script := blocks["curl"]
			if !strings.Contains(script, addr) {
				t.Fatalf("the curl block does not call %s, where make run serves:\n%s", addr, script)
			}
			cmd := exec.CommandContext(t.Context(), "sh", "-eu", "-c", strings.ReplaceAll(script, addr, got))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("the curl block: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
			}
			// The output the block shows, as comments: each part between
			// ellipses appears, in order.
			shown := 0
			for line := range strings.Lines(script) {
				want, ok := strings.CutPrefix(strings.TrimSpace(line), "# {")
				if !ok {
					continue
				}
				shown++
				rest := string(out)
				for part := range strings.SplitSeq("{"+want, "…") {
					i := strings.Index(rest, part)
					if i < 0 {
						t.Fatalf("the curl block's output lacks %q where the README shows %s\noutput: %s", part, line, out)
					}
					rest = rest[i+len(part):]
				}
			}
			if shown == 0 {
				t.Fatal("the curl block shows no output (a comment line starting with {)")
			}
			// And the session was destroyed: the server holds none.
			resp, err := http.Get("http://" + got + "/sessions")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var list struct {
				SessionIDs []string `json:"session_ids"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != http.StatusOK || len(list.SessionIDs) != 0 {
				t.Fatalf("after the curl block: %d %v %q", resp.StatusCode, err, list.SessionIDs)
			}
		})

		t.Run("mcp-stdio", func(t *testing.T) {
			command, args, _ := parseMCPConfig(t, blocks["mcp-stdio"])
			if !filepath.IsAbs(command) || filepath.Base(command) != "codeport" || len(args) == 0 {
				t.Fatalf("the stdio configuration does not start an absolute path to codeport with a command: %q %q", command, args)
			}
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			cmd := startCommand(t, inR, outW, withFlags(args, "--sessions-dir", t.TempDir(), "--compile-cache-dir", cache)...)
			go func() {
				<-cmd.done
				outW.Close()
			}()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "readme-stdio"}, nil).Connect(t.Context(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
			if err != nil {
				t.Fatalf("connect: %v\n%s", err, cmd.log.String())
			}
			runPython(t, t.Context(), cs)
			cs.Close() // closes stdin, which ends the command
			<-cmd.done
			if cmd.code != 0 {
				t.Fatalf("codeport %s exited %d:\n%s", strings.Join(args, " "), cmd.code, cmd.log.String())
			}
		})

		t.Run("mcp-http", func(t *testing.T) {
			fields := strings.Fields(blocks["mcp-http"])
			if len(fields) < 2 || filepath.Base(fields[0]) != "codeport" {
				t.Fatalf("the HTTP block is not a codeport command line: %q", blocks["mcp-http"])
			}
			args := fields[1:]
			listen := -1
			for i, a := range args[:len(args)-1] {
				if a == "--listen" {
					listen = i + 1
				}
			}
			if listen < 0 {
				t.Fatalf("the HTTP block gives no --listen ADDR: %q", args)
			}
			readmeListen := args[listen]
			_, _, rawURL := parseMCPConfig(t, blocks["mcp-http-config"])
			u, err := url.Parse(rawURL)
			if err != nil || u.Scheme != "http" || u.Host != readmeListen || u.Path != "/mcp" {
				t.Fatalf("the configuration's url %q is not http://%s/mcp, where the command serves", rawURL, readmeListen)
			}
			args[listen] = "127.0.0.1:0"
			cmd := startCommand(t, strings.NewReader(""), io.Discard, withFlags(args, "--sessions-dir", t.TempDir(), "--compile-cache-dir", cache)...)
			got := cmd.log.Await(t, servingAddr, cmd.done)
			u.Host = got
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "readme-http"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: u.String()}, nil)
			if err != nil {
				t.Fatalf("connect to %s: %v\n%s", u, err, cmd.log.String())
			}
			runPython(t, t.Context(), cs)
			cs.Close()
			cmd.stop()
			<-cmd.done
			if cmd.code != 0 {
				t.Fatalf("codeport %s exited %d:\n%s", strings.Join(args, " "), cmd.code, cmd.log.String())
			}
		})
	})
}

var (
	mdFence   = regexp.MustCompile("(?ms)^```.*?^```[ \t]*$")
	mdCode    = regexp.MustCompile("`[^`]*`")
	mdLink    = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6}[ \t]+(.+?)[ \t]*$`)
)

// mdAnchors are the anchors GitHub gives a Markdown file's headings:
// lower case, punctuation dropped, spaces as hyphens, a repeat numbered.
func mdAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, m := range mdHeading.FindAllStringSubmatch(mdFence.ReplaceAllString(text, ""), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// TestDocLinks: every relative link of the README and of docs/ names a
// file of the repository, and an anchor one of its headings; every page
// of docs/ is linked from the README. The pages were split out of the
// README, and a link that a move broke is found here, not by a reader.
func TestDocLinks(t *testing.T) {
	const root = "../.."
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	files := append([]string{filepath.Join(root, "README.md")}, pages...)
	linked := map[string]bool{}
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, file)
		prose := mdCode.ReplaceAllString(mdFence.ReplaceAllString(string(text), ""), "")
		for _, m := range mdLink.FindAllStringSubmatch(prose, -1) {
			target := m[1]
			if u, err := url.Parse(target); err != nil || u.Scheme != "" {
				continue // an absolute URL: not ours to check
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
			}
			if rel, err := filepath.Rel(root, dest); err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s: %s leaves the repository", name, target)
				continue
			}
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s: %s: %v", name, target, err)
				continue
			}
			if file == files[0] {
				linked[filepath.Clean(dest)] = true
			}
			if anchor == "" {
				continue
			}
			destText, err := os.ReadFile(dest)
			if err != nil || !strings.HasSuffix(dest, ".md") || !mdAnchors(string(destText))[anchor] {
				t.Errorf("%s: %s: no heading has the anchor #%s", name, target, anchor)
			}
		}
	}
	for _, p := range pages {
		if !linked[filepath.Clean(p)] {
			rel, _ := filepath.Rel(root, p)
			t.Errorf("the README links to no %s", rel)
		}
	}
}
