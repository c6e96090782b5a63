package binding_test

import (
	"slices"
	"strings"
	"testing"
)

// TestUnknownEnv: a CODEPORT_* variable that names no setting is warned
// about, with the setting it likely meant; settings, CODEPORT_CONFIG and
// the names the program says it reads itself are not, and no warning
// quotes a value.
func TestUnknownEnv(t *testing.T) {
	b := binder(t)
	environ := []string{
		"CODEPORT_MEMORY_LIMT=512MiB",   // a letter missing
		"CODEPORT_MAX_SESISONS=4",       // two swapped
		"CODEPORT_LISTNE=:8080",         // short: one slip is close
		"CODEPORT_FROBNICATE=secret-42", // close to nothing
		"CODEPORT_MEMORY_LIMIT=256MiB",
		"CODEPORT_AUTH_TOKEN=secret-42",
		"CODEPORT_CONFIG=/etc/codeport.yaml",
		"CODEPORT_WORKER_SPEC={}",
		"CODEPORT_BENCH_SCALE=2",
		"CODEPORT_BENCHMARK=1", // not the prefix CODEPORT_BENCH_
		"HOME=/root",
		"codeport_timeout=1s", // not the prefix: environment names are case-sensitive
		"CODEPORT_MEMORY_LIMT=again",
	}
	got := b.UnknownEnv(environ, "CODEPORT_WORKER_SPEC", "CODEPORT_BENCH_*")
	want := []string{
		"environment variable CODEPORT_BENCHMARK names no setting and is ignored",
		"environment variable CODEPORT_FROBNICATE names no setting and is ignored",
		"environment variable CODEPORT_LISTNE names no setting and is ignored; did you mean CODEPORT_LISTEN (--listen)?",
		"environment variable CODEPORT_MAX_SESISONS names no setting and is ignored; did you mean CODEPORT_MAX_SESSIONS (--max-sessions)?",
		"environment variable CODEPORT_MEMORY_LIMT names no setting and is ignored; did you mean CODEPORT_MEMORY_LIMIT (--memory-limit)?",
	}
	if !slices.Equal(got, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, w := range got {
		if strings.Contains(w, "secret-42") || strings.Contains(w, "512MiB") {
			t.Errorf("a warning quotes a value: %s", w)
		}
	}
	if got := b.UnknownEnv([]string{"CODEPORT_TIMEOUT=1s", "CODEPORT_SANDBOX_URL=http://x"}); len(got) != 0 {
		t.Errorf("settings warned about: %q", got)
	}
}
