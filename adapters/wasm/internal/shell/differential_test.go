package shell

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

// The differential test runs the command lines of
// testdata/differential/cases.txt through this shell and through the host's
// GNU bash and coreutils, the behaviour models expect, and compares what
// they print. The format of the files is described in
// testdata/differential/README.md.
//
// Running GNU bash with os/exec is allowed here only: it is the reference
// peer, never part of the product.

var updateKnown = flag.Bool("differential.update", false,
	"rewrite testdata/differential/known.txt from the current differences, keeping existing reasons")

var verboseDiff = flag.Bool("differential.verbose", false,
	"log what both shells printed for every case, identical or not")

const (
	diffDir      = "testdata/differential"
	diffParallel = 4 // cases run at once: each runs a shell and a bash process
	// diffTimeout bounds the GNU side of a case, which runs for
	// milliseconds: it only ends a case that would hang, and is far
	// above what any load makes of one that runs (20 s was not, with
	// four cases at once beside other work). e.run has none of its own.
	diffTimeout = 5 * time.Minute
	// diffShortEvery: with -short, only every diffShortEvery-th case runs
	// (the others count as not run).
	diffShortEvery = 5
)

// diffMtime is the modification time of every fixture file and directory,
// far enough in the past that find -mtime and -newer see anything a case
// creates as newer.
var diffMtime = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// diffFile is a file (or, with dir set, a directory) a case starts with.
type diffFile struct {
	name    string
	content string
	dir     bool
}

// diffCase is one case of cases.txt.
type diffCase struct {
	name   string
	line   int // line of its "## name" header
	files  []diffFile
	script string
}

// diffSide is what one shell did with a case.
type diffSide struct {
	stdout string
	stderr string
	code   int
}

var caseName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)

// parseCases reads cases.txt: the fixture files before the first case, then
// the cases.
func parseCases(data string) (fixture []diffFile, cases []diffCase, err error) {
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	seen := map[string]bool{}
	var cur *diffCase
	var script []string
	finish := func() {
		if cur == nil {
			return
		}
		for len(script) > 0 && strings.TrimSpace(script[len(script)-1]) == "" {
			script = script[:len(script)-1]
		}
		for len(script) > 0 && strings.TrimSpace(script[0]) == "" {
			script = script[1:]
		}
		cur.script = strings.Join(script, "\n")
		cases = append(cases, *cur)
		cur, script = nil, nil
	}
	for i := 0; i < len(lines); i++ {
		line, n := lines[i], i+1
		switch {
		case strings.HasPrefix(line, "###"):
			// A section comment.
		case strings.HasPrefix(line, "## "):
			finish()
			name := strings.TrimSpace(line[3:])
			if !caseName.MatchString(name) {
				return nil, nil, fmt.Errorf("line %d: bad case name %q (letters, digits, _ . + - only)", n, name)
			}
			if seen[name] {
				return nil, nil, fmt.Errorf("line %d: case %q is defined twice", n, name)
			}
			seen[name] = true
			cur = &diffCase{name: name, line: n}
		case strings.HasPrefix(line, "@dir "):
			f := diffFile{name: strings.TrimSpace(line[5:]), dir: true}
			if cur == nil {
				fixture = append(fixture, f)
			} else {
				cur.files = append(cur.files, f)
			}
		case strings.HasPrefix(line, "@file ") || strings.HasPrefix(line, "@file-noeol "):
			noeol := strings.HasPrefix(line, "@file-noeol ")
			name := strings.TrimSpace(line[strings.IndexByte(line, ' ')+1:])
			var body []string
			j := i + 1
			for ; j < len(lines) && lines[j] != "@end"; j++ {
				body = append(body, lines[j])
			}
			if j == len(lines) {
				return nil, nil, fmt.Errorf("line %d: @file %s has no @end", n, name)
			}
			content := strings.Join(body, "\n")
			if !noeol && len(body) > 0 {
				content += "\n"
			}
			f := diffFile{name: name, content: content}
			if cur == nil {
				fixture = append(fixture, f)
			} else {
				cur.files = append(cur.files, f)
			}
			i = j
		case cur == nil:
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
				return nil, nil, fmt.Errorf("line %d: text before the first case: %q", n, line)
			}
		default:
			script = append(script, line)
		}
	}
	finish()
	for _, c := range cases {
		if strings.TrimSpace(c.script) == "" {
			return nil, nil, fmt.Errorf("line %d: case %s has no script", c.line, c.name)
		}
	}
	return fixture, cases, nil
}

// knownEntry is a line of known.txt: a case that differs on purpose.
type knownEntry struct {
	name, reason string
}

func parseKnown(data string) ([]knownEntry, error) {
	var out []knownEntry
	seen := map[string]bool{}
	for i, line := range strings.Split(data, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name := line
		if i := strings.IndexAny(line, " \t"); i >= 0 {
			name = line[:i]
		}
		reason := strings.TrimSpace(line[len(name):])
		if reason == "" {
			return nil, fmt.Errorf("known.txt line %d: %s has no reason", i+1, name)
		}
		if seen[name] {
			return nil, fmt.Errorf("known.txt line %d: %s is listed twice", i+1, name)
		}
		seen[name] = true
		out = append(out, knownEntry{name, reason})
	}
	return out, nil
}

const knownHeader = `# Cases of cases.txt whose output differs from GNU bash + coreutils on
# purpose, one a line: the case name, then why the difference is intended.
# TestDifferential fails when a listed case matches GNU again (remove it
# then) and when an unlisted case differs. "go test -run TestDifferential
# ./adapters/wasm/internal/shell/ -differential.update" rewrites this file
# from the current differences, keeping the reasons given here and marking
# new entries "TODO: reason". See README.md.
`

// gnuTools are commands whose GNU implementation a case needs on the host;
// a case that uses one the host lacks (or has in another flavour, such as
// mawk for awk) is skipped. Coreutils are checked once for the whole test.
var gnuTools = []struct {
	name    string
	args    []string // a command printing a version, or nil: presence is enough
	mention string   // what its output must hold
}{
	{"awk", []string{"awk", "--version"}, "GNU Awk"},
	{"sed", []string{"sed", "--version"}, "GNU sed"},
	{"grep", []string{"grep", "--version"}, "GNU grep"},
	{"find", []string{"find", "--version"}, "GNU findutils"},
	{"xargs", []string{"xargs", "--version"}, "GNU findutils"},
	{"tar", []string{"tar", "--version"}, "GNU tar"},
	{"gzip", []string{"gzip", "--version"}, "gzip"},
	{"diff", []string{"diff", "--version"}, "GNU diffutils"},
	{"cmp", []string{"cmp", "--version"}, "GNU diffutils"},
	{"bc", []string{"bc", "--version"}, "bc"},
	{"tree", []string{"tree", "--version"}, "tree"},
}

// hostEnv is the environment of the GNU side: nothing from the test
// process.
func hostEnv(dir string) []string {
	return []string{
		"PATH=/usr/bin:/bin",
		"LANG=C.UTF-8",
		"LC_ALL=C.UTF-8",
		"HOME=" + dir,
		"TZ=UTC",
	}
}

// hostOutput runs argv on the host with the clean environment and returns
// its combined output, "" if it cannot run.
func hostOutput(argv ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), diffTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = hostEnv(os.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil && len(out) == 0 {
		return ""
	}
	return string(out)
}

// toolsUsed returns the names of gnuTools that script mentions as a word.
func toolsUsed(script string) []string {
	var out []string
	for _, tool := range gnuTools {
		re := regexp.MustCompile(`(^|[^A-Za-z0-9_./-])` + tool.name + `($|[^A-Za-z0-9_-])`)
		if re.MatchString(script) {
			out = append(out, tool.name)
		}
	}
	return out
}

// writeTree creates files below root with the fixture's modification time.
func writeTree(root string, files []diffFile) error {
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f.name))
		if f.dir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(f.content), 0o644); err != nil {
			return err
		}
		// Whatever the umask: stat -c %a must not depend on it.
		if err := os.Chmod(p, 0o644); err != nil {
			return err
		}
	}
	return setTimes(root)
}

// setTimes gives everything below root, and root, the fixture's time.
func setTimes(root string) error {
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return err
	}
	// Deepest first, so a directory's time is set after its entries.
	slices.Reverse(paths)
	for _, p := range paths {
		if err := os.Chtimes(p, diffMtime, diffMtime); err != nil {
			return err
		}
	}
	return nil
}

// runGNU runs a case with the host's bash in a fresh directory named
// workspace holding the fixture; the directory's path in stdout becomes
// /workspace.
func runGNU(t *testing.T, files []diffFile, script string) (diffSide, error) {
	dir := filepath.Join(t.TempDir(), "workspace")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return diffSide{}, err
	}
	if err := writeTree(dir, files); err != nil {
		return diffSide{}, err
	}
	ctx, cancel := context.WithTimeout(t.Context(), diffTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/bash", "--noprofile", "--norc", "-c", script)
	cmd.Dir = dir
	cmd.Env = hostEnv(dir)
	// A background job left running keeps the output pipes open: stop
	// waiting for them soon after bash has ended or been killed.
	cmd.WaitDelay = 2 * time.Second
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	// cmd.Stdin nil reads from the null device.
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && ctx.Err() == nil:
		code = exit.ExitCode()
	case err != nil:
		return diffSide{}, fmt.Errorf("GNU bash: %v (stderr %q)", err, e.String())
	}
	stdout := o.String()
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		stdout = strings.ReplaceAll(stdout, real, "/workspace")
	}
	stdout = strings.ReplaceAll(stdout, dir, "/workspace")
	return diffSide{stdout: stdout, stderr: e.String(), code: code}, nil
}

// runCodeport runs a case through this shell with the fixture put into
// the workspace.
func runCodeport(t *testing.T, files []diffFile, script string) diffSide {
	e := newEnv(t, 0, 0, nil)
	put := map[string]string{}
	for _, f := range files {
		if f.dir {
			put[strings.TrimSuffix(f.name, "/")+"/"] = ""
		} else {
			put[f.name] = f.content
		}
	}
	e.put(put)
	if err := setTimes(e.root); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := e.run(script)
	return diffSide{stdout: stdout, stderr: stderr, code: code}
}

// differences describes how the two sides differ, "" if they agree.
func differences(gnu, ours diffSide) string {
	var b strings.Builder
	if gnu.stdout != ours.stdout {
		b.WriteString("stdout differs (- GNU, + codeport):\n")
		b.WriteString(lineDiff(gnu.stdout, ours.stdout))
	}
	if (gnu.stderr == "") != (ours.stderr == "") {
		fmt.Fprintf(&b, "stderr differs: GNU %s, codeport %s\n", quoteCapped(gnu.stderr), quoteCapped(ours.stderr))
	}
	if gnu.code != ours.code {
		fmt.Fprintf(&b, "exit status differs: GNU %d, codeport %d\n", gnu.code, ours.code)
	}
	if b.Len() > 0 && (gnu.stderr == "") == (ours.stderr == "") && gnu.stderr != "" {
		// Both wrote to stderr: show it, it often explains the rest.
		fmt.Fprintf(&b, "stderr: GNU %s, codeport %s\n", quoteCapped(gnu.stderr), quoteCapped(ours.stderr))
	}
	return b.String()
}

func quoteCapped(s string) string {
	if s == "" {
		return "empty"
	}
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// lineDiff is a small line diff of a and b (a longest common subsequence,
// enough for the few lines a case prints), at most 60 lines of it.
func lineDiff(a, b string) string {
	al := splitLines(a)
	bl := splitLines(b)
	if len(al)*len(bl) > 4_000_000 {
		return fmt.Sprintf("- %d lines (%d bytes)\n+ %d lines (%d bytes)\n", len(al), len(a), len(bl), len(b))
	}
	// lcs[i][j] is the length of the common subsequence of al[i:], bl[j:].
	lcs := make([][]int, len(al)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(bl)+1)
	}
	for i := len(al) - 1; i >= 0; i-- {
		for j := len(bl) - 1; j >= 0; j-- {
			if al[i] == bl[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(al) || j < len(bl) {
		switch {
		case i < len(al) && j < len(bl) && al[i] == bl[j]:
			out = append(out, "  "+al[i])
			i++
			j++
		case i < len(al) && (j == len(bl) || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, "- "+al[i])
			i++
		default:
			out = append(out, "+ "+bl[j])
			j++
		}
	}
	if len(out) > 60 {
		out = append(out[:60], fmt.Sprintf("... %d more lines", len(out)-60))
	}
	return strings.Join(out, "\n") + "\n"
}

// splitLines splits s into lines shown quoted where they hold something
// invisible, the last one marked when it has no newline.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	noeol := !strings.HasSuffix(s, "\n")
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		if strings.ContainsFunc(l, invisible) || strings.HasSuffix(l, " ") {
			lines[i] = fmt.Sprintf("%q", l)
		}
	}
	if noeol {
		lines[len(lines)-1] += " (no newline at end)"
	}
	return lines
}

// invisible reports a rune that would not show in a diff as itself: a
// control character, a space other than U+0020 (tree draws with
// U+00A0), a format character, an invalid byte.
func invisible(r rune) bool {
	if r < 0x80 {
		return r < ' ' || r == 0x7f
	}
	return r == utf8.RuneError || unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) || !unicode.IsPrint(r)
}

// TestDifferential compares this shell with GNU bash + coreutils on the
// command lines models type, as listed in testdata/differential/cases.txt.
func TestDifferential(t *testing.T) {
	if _, err := os.Stat("/bin/bash"); err != nil {
		t.Skip("differential: /bin/bash is missing, no reference to compare with")
	}
	if v := hostOutput("sort", "--version"); !strings.Contains(v, "GNU") {
		t.Skip("differential: GNU coreutils are missing (sort --version does not mention GNU)")
	}
	missing := map[string]string{}
	for _, tool := range gnuTools {
		if v := hostOutput(tool.args...); !strings.Contains(v, tool.mention) {
			missing[tool.name] = fmt.Sprintf("%s --version does not mention %q", tool.name, tool.mention)
		}
	}

	data, err := os.ReadFile(filepath.Join(diffDir, "cases.txt"))
	if err != nil {
		t.Fatal(err)
	}
	fixture, cases, err := parseCases(string(data))
	if err != nil {
		t.Fatalf("cases.txt: %v", err)
	}
	knownPath := filepath.Join(diffDir, "known.txt")
	knownData, err := os.ReadFile(knownPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	known, err := parseKnown(string(knownData))
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, k := range known {
		reasons[k.name] = k.reason
	}
	names := map[string]bool{}
	for _, c := range cases {
		names[c.name] = true
	}
	if !*updateKnown {
		for _, k := range known {
			if !names[k.name] {
				t.Errorf("known.txt lists %s, which is not a case of cases.txt: remove it from known.txt", k.name)
			}
		}
	}

	var (
		mu       sync.Mutex
		differ   = map[string]bool{} // cases that differ from GNU
		outcomes = map[string]string{}
	)
	sem := make(chan struct{}, diffParallel)
	t.Run("case", func(t *testing.T) {
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				if testing.Short() && i%diffShortEvery != 0 {
					t.Skipf("-short runs every %dth case only", diffShortEvery)
				}
				for _, tool := range toolsUsed(c.script) {
					if why, ok := missing[tool]; ok {
						mu.Lock()
						outcomes[c.name] = "skipped"
						mu.Unlock()
						t.Skipf("needs GNU %s: %s", tool, why)
					}
				}
				t.Parallel()
				sem <- struct{}{}
				defer func() { <-sem }()
				outcome := "error"
				defer func() {
					mu.Lock()
					outcomes[c.name] = outcome
					if outcome == "differ" {
						differ[c.name] = true
					}
					mu.Unlock()
				}()
				files := append(slices.Clip(fixture), c.files...)
				gnu, err := runGNU(t, files, c.script)
				if err != nil {
					t.Fatalf("cases.txt:%d: %v", c.line, err)
				}
				ours := runCodeport(t, files, c.script)
				diff := differences(gnu, ours)
				if *verboseDiff {
					t.Logf("GNU: status %d, stdout %q, stderr %q", gnu.code, gnu.stdout, gnu.stderr)
					t.Logf("codeport: status %d, stdout %q, stderr %q", ours.code, ours.stdout, ours.stderr)
				}
				_, isKnown := reasons[c.name]
				switch {
				case diff == "" && isKnown:
					outcome = "same"
					if !*updateKnown {
						t.Errorf("cases.txt:%d: %s now matches GNU: remove it from known.txt", c.line, c.name)
					}
				case diff == "":
					outcome = "same"
				case isKnown:
					outcome = "differ"
					t.Logf("known difference (%s):\n%s", reasons[c.name], diff)
				default:
					outcome = "differ"
					if !*updateKnown {
						t.Errorf("cases.txt:%d: %s differs from GNU\nscript:\n%s\n%s", c.line, c.name, indent(c.script), diff)
					}
				}
			})
		}
	})

	same, knownDiff, skipped, ran := 0, 0, 0, 0
	for _, c := range cases {
		switch outcomes[c.name] {
		case "":
			continue // not selected by -run
		case "same":
			same++
		case "skipped":
			skipped++
			continue
		}
		ran++
		if differ[c.name] && reasons[c.name] != "" {
			knownDiff++
		}
	}
	pct := 0.0
	if ran > 0 {
		pct = 100 * float64(same) / float64(ran)
	}
	t.Logf("differential: %d/%d cases identical to GNU (%.1f%%), %d known differences, %d skipped", same, ran, pct, knownDiff, skipped)

	if *updateKnown {
		var b strings.Builder
		b.WriteString(knownHeader)
		for _, c := range cases {
			if outcomes[c.name] == "same" {
				continue
			}
			if !differ[c.name] {
				// Not run (-run), skipped or broken here: keep what was
				// said about it.
				if r, ok := reasons[c.name]; ok {
					fmt.Fprintf(&b, "%s %s\n", c.name, r)
				}
				continue
			}
			r, ok := reasons[c.name]
			if !ok {
				r = "TODO: reason"
			}
			fmt.Fprintf(&b, "%s %s\n", c.name, r)
		}
		if err := os.WriteFile(knownPath, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("differential: rewrote %s", knownPath)
	}
}

func indent(s string) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		b.WriteString("    ")
		b.WriteString(sc.Text())
		b.WriteString("\n")
	}
	return b.String()
}

// TestDifferentialParse checks the reading of cases.txt and known.txt.
func TestDifferentialParse(t *testing.T) {
	src := "# header\n@file a b.txt\nx\n@end\n@dir d\n### section\n## one\n\necho 1\n\n## two\n@file-noeol n\nno\neol\n@end\ncat n\necho\n"
	fixture, cases, err := parseCases(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(fixture) != 2 || fixture[0] != (diffFile{name: "a b.txt", content: "x\n"}) || fixture[1] != (diffFile{name: "d", dir: true}) {
		t.Errorf("fixture = %+v", fixture)
	}
	if len(cases) != 2 || cases[0].script != "echo 1" || cases[1].script != "cat n\necho" ||
		len(cases[1].files) != 1 || cases[1].files[0].content != "no\neol" || cases[1].line != 11 {
		t.Errorf("cases = %+v", cases)
	}
	for _, bad := range []string{"## a\n## a\necho\n", "## a b\necho\n", "stray\n## a\necho\n", "## a\n@file x\n", "## a\n"} {
		if _, _, err := parseCases(bad); err == nil {
			t.Errorf("parseCases(%q) succeeded", bad)
		}
	}
	k, err := parseKnown("# c\n\nx.y  links are refused\nz\tTODO: reason\n")
	if err != nil || len(k) != 2 || k[0] != (knownEntry{"x.y", "links are refused"}) || k[1] != (knownEntry{"z", "TODO: reason"}) {
		t.Errorf("parseKnown = %+v, %v", k, err)
	}
	for _, bad := range []string{"a\n", "a r\na s\n"} {
		if _, err := parseKnown(bad); err == nil {
			t.Errorf("parseKnown(%q) succeeded", bad)
		}
	}
	if got := toolsUsed("cat f | awk '{print}' | sed-like x; gawk"); !slices.Equal(got, []string{"awk"}) {
		t.Errorf("toolsUsed = %v", got)
	}
	if d := lineDiff("a\nb\nc\n", "a\nc\nd"); d != "  a\n- b\n  c\n+ d (no newline at end)\n" {
		t.Errorf("lineDiff = %q", d)
	}
	if d := lineDiff("\u2502\u00a0x\n", "\u2502 x\n"); d != "- \"\u2502\\u00a0x\"\n+ \u2502 x\n" {
		t.Errorf("lineDiff = %q", d)
	}
}
