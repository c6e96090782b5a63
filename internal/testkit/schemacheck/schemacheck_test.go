package schemacheck

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/internal/testkit/pyvenv"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/server"
)

// schemathesisVersion is the pinned schemathesis, the newest released when
// the test was written. Its checks and flags change between releases, so a
// new version is a deliberate change: read `schemathesis run --help` and
// this file's flags again. Changing it builds a new cached environment.
const schemathesisVersion = "4.32.5"

// checks are the schemathesis checks that must hold for every response; see
// doc.go for what each means. Two of schemathesis' checks are left out
// because they cannot apply here: object_level_authorization compares
// what two identities may see, and the server has one token; ignored_auth
// only tests operations whose security the document makes mandatory, and
// it makes the bearer token optional (security: [{}, bearerAuth]), since
// a deployment need not configure one. package server's tests check the
// 401s.
var checks = []string{
	"not_a_server_error",
	"status_code_conformance",
	"content_type_conformance",
	"response_headers_conformance",
	"response_schema_conformance",
	"negative_data_rejection",
	"positive_data_acceptance",
	"missing_required_header",
	"unsupported_method",
	"allow_header_conformance",
	"use_after_free",
	"ensure_resource_availability",
}

// The server's limits. The cap is small so that a run cannot hold much
// memory; the hooks keep one slot free. Timeouts are short because
// generated code and shell commands may loop, and a timed-out call is a
// 200 like any other.
const (
	maxSessions  = 4
	keepSessions = maxSessions - 1
	execTimeout  = 2 * time.Second
)

// The run's budget: a fixed seed, so that a failure is reproduced by
// running the test again, and a bounded number of cases per operation and
// phase. On 2 cores under -race the run takes well under a minute, and
// several times that beside other work: it has no deadline but the test
// binary's, and a request none but requestTimeout, which only stops a hung
// one.
const (
	seed           = 13
	maxExamples    = 50
	requestTimeout = 10 * time.Minute
)

func TestServerConformsToItsOpenAPIDocument(t *testing.T) {
	if testing.Short() {
		t.Skip("fuzzing a live server takes tens of seconds; skipped with -short")
	}
	python := pyvenv.Python(t, "schemacheck", "schemathesis=="+schemathesisVersion)
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}

	reg := prometheus.NewRegistry()
	a := wasmtest.New(t, func(c wasm.Config) wasm.Config {
		return c.WithMaxSessions(maxSessions).
			WithTimeouts(execTimeout, execTimeout).
			// Backstops: the hooks and the test release every session.
			WithSessionLifetimes(30*time.Second, 30*time.Second, 2*time.Minute).
			WithRetryAfter(time.Second).
			WithMetrics(reg)
	}, port.WithSnapshotKey([]byte("schemacheck: a snapshot key of 32 bytes or more")))
	token := randomToken(t)
	// httptest serves on 127.0.0.1. Registered after wasmtest.New, so the
	// server is closed (and its requests finished) before the adapter.
	srv := httptest.NewServer(server.NewHandler(a,
		server.WithBearerToken(token),
		server.WithReady(a.Ready),
		server.WithGatherer(reg)))
	t.Cleanup(srv.Close)

	work := t.TempDir() // schemathesis writes .hypothesis and .schemathesis into its working directory
	sessionLog := filepath.Join(work, "sessions.txt")
	droppedLog := filepath.Join(work, "dropped.txt")
	args := []string{
		// The CLI as a module: pyvenv's console scripts do not run (see
		// pyvenv.Python).
		"-m", "schemathesis.cli",
		// Per-operation settings the command line cannot express.
		"--config-file", filepath.Join(testdata, "schemathesis.toml"),
		"run", srv.URL + "/openapi.yaml", // the document the server serves
		"--url", srv.URL,
		"--header", "Authorization: Bearer " + token,
		"--checks", strings.Join(checks, ","),
		"--phases", "examples,coverage,fuzzing,stateful",
		"--mode", "all", // schema-valid and schema-violating requests
		"--max-examples", strconv.Itoa(maxExamples),
		"--seed", strconv.Itoa(seed),
		// One request at a time: reproducible, and the hooks' session
		// bookkeeping needs no locking.
		"--workers", "1",
		"--continue-on-failure",
		"--generation-database", "none", // nothing carried over between runs
		"--request-timeout", strconv.Itoa(int(requestTimeout.Seconds())),
		"--output-truncate", "false",
		"--no-color",
	}
	ctx, cancel := testwait.Context(t)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, args...)
	cmd.Dir = work
	cmd.Env = append(os.Environ(),
		"SCHEMATHESIS_HOOKS=schemacheck_hooks",
		"PYTHONPATH="+testdata,
		"PYTHONDONTWRITEBYTECODE=1", // no __pycache__ in testdata
		"NO_COLOR=1",
		// Loopback must not go through a proxy the environment names.
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
		"CODEPORT_SCHEMACHECK_URL="+srv.URL,
		"CODEPORT_SCHEMACHECK_TOKEN="+token,
		"CODEPORT_SCHEMACHECK_KEEP_SESSIONS="+strconv.Itoa(keepSessions),
		"CODEPORT_SCHEMACHECK_SESSION_LOG="+sessionLog,
		"CODEPORT_SCHEMACHECK_DROPPED_LOG="+droppedLog,
	)
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	elapsed := time.Since(start).Round(100 * time.Millisecond)
	report := string(out)
	shown := strings.ReplaceAll(strings.Join(append([]string{"python"}, args...), " "), token, "<token>")
	t.Logf("%s\n(SCHEMATHESIS_HOOKS=schemacheck_hooks from testdata; ran %s)", shown, elapsed)

	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Errorf("schemathesis did not finish before the test binary's deadline:\n%s", report)
	case errors.As(err, &exit):
		// 1 is "checks failed"; anything else is an error of the run
		// itself (a hook, the schema, the command line), reported the same
		// way: the output says which.
		t.Errorf("schemathesis found disagreements between the server and contract/openapi.yaml "+
			"(exit status %d); each failure below names the request, the check and the answer:\n%s",
			exit.ExitCode(), failures(report))
	case err != nil:
		t.Fatalf("running schemathesis: %v\n%s", err, report)
	default:
		t.Logf("schemathesis passed:\n%s", summary(report))
	}

	if b, err := os.ReadFile(droppedLog); err == nil {
		t.Logf("false positives the hooks dropped (see filter_failure in testdata/schemacheck_hooks.py):\n%s", dropped(string(b)))
	}
	releaseAll(t, srv, token, sessionLog)
	if n := liveSessions(t, reg); n != 0 {
		t.Errorf("%v sessions still alive after releasing every session handed out", n)
	}
}

// failures is schemathesis' report from its first section that explains
// what went wrong (errors of the run, failures, warnings), or all of it
// when it has none (a run that could not start).
func failures(report string) string {
	first := -1
	for _, marker := range []string{"= ERRORS =", "= FAILURES =", "= WARNINGS =", "= SUMMARY ="} {
		if i := strings.Index(report, marker); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	if first < 0 {
		return report
	}
	return report[strings.LastIndex(report[:first], "\n")+1:]
}

// summary is the report from its summary on.
func summary(report string) string {
	if i := strings.Index(report, "= SUMMARY ="); i >= 0 {
		return report[strings.LastIndex(report[:i], "\n")+1:]
	}
	return report
}

// dropped summarises the hooks' log of dropped failures: how many each
// rule dropped, with its first.
func dropped(log string) string {
	type rule struct {
		n     int
		first string
	}
	var order []string
	rules := map[string]*rule{}
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		name := line
		if i, j := strings.Index(line, "["), strings.Index(line, "]"); i >= 0 && j > i {
			name = line[i+1 : j]
		}
		r := rules[name]
		if r == nil {
			r = &rule{first: line}
			rules[name] = r
			order = append(order, name)
		}
		r.n++
	}
	var sb strings.Builder
	for _, name := range order {
		fmt.Fprintf(&sb, "%s: %d, the first: %s\n", name, rules[name].n, rules[name].first)
	}
	return sb.String()
}

// releaseAll destroys every session the hooks saw handed out. The contract
// answers 204 for a session that is already gone.
func releaseAll(t *testing.T, srv *httptest.Server, token, sessionLog string) {
	t.Helper()
	f, err := os.Open(sessionLog)
	if errors.Is(err, os.ErrNotExist) {
		t.Error("no session was created: the hooks did not run, or POST /sessions never answered 201")
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		id := strings.TrimSpace(sc.Text())
		if id == "" {
			continue
		}
		req, err := http.NewRequest(http.MethodDelete, srv.URL+"/sessions/"+url.PathEscape(id), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatalf("releasing session %s: %v", id, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			t.Errorf("releasing session %s: status %d", id, resp.StatusCode)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d sessions were created during the run", n)
}

// liveSessions reads the adapter's codeport_sessions_live gauge.
func liveSessions(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "codeport_sessions_live" && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("the adapter exports no codeport_sessions_live gauge")
	return 0
}

func randomToken(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
