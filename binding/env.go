package binding

import (
	"fmt"
	"slices"
	"strings"
)

// envPrefix begins the name of every setting's environment variable.
const envPrefix = "CODEPORT_"

// configEnv names the YAML file, as --config does.
const configEnv = envPrefix + "CONFIG"

// UnknownEnv warns about the CODEPORT_* variables of environ (NAME=value,
// as os.Environ gives them) that name no setting, so that a misspelt one
// (CODEPORT_MEMORY_LIMT) is not silently ignored. Variables the program
// reads elsewhere are named in also, exactly or, ending in "*", by
// prefix; CODEPORT_CONFIG is known. A warning names the variable and,
// when one is close, the setting it likely meant; never its value, which
// may be a secret. The warnings are sorted by name.
func (b *Binder) UnknownEnv(environ []string, also ...string) []string {
	def := b.Defaults()
	all, _ := def.settings() // checked by New
	known := map[string]bool{configEnv: true}
	for _, s := range all {
		known[s.env()] = true
	}
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, envPrefix) || known[name] || matchesAny(name, also) {
			continue
		}
		w := fmt.Sprintf("environment variable %s names no setting and is ignored", name)
		if s := closest(name, all); s != nil {
			w += fmt.Sprintf("; did you mean %s (--%s)?", s.env(), s.name)
		}
		out = append(out, w)
		known[name] = true // once, should the environment repeat it
	}
	slices.Sort(out)
	return out
}

// matchesAny reports whether name is one of names, or begins with one
// that ends in "*".
func matchesAny(name string, names []string) bool {
	for _, n := range names {
		if p, ok := strings.CutSuffix(n, "*"); (ok && strings.HasPrefix(name, p)) || n == name {
			return true
		}
	}
	return false
}

// closest is the setting whose variable name is nearest to name, if it is
// near enough to be a slip of the keyboard: a character or two wrong,
// missing, extra or swapped (one for a name of under 8 characters).
func closest(name string, all []*setting) *setting {
	got := strings.ToUpper(strings.TrimPrefix(name, envPrefix))
	var best *setting
	bestDist := 0
	for _, s := range all {
		want := strings.TrimPrefix(s.env(), envPrefix)
		limit := 2
		if len(want) < 8 {
			limit = 1
		}
		if d := editDistance(got, want); d <= limit && (best == nil || d < bestDist) {
			best, bestDist = s, d
		}
	}
	return best
}

// editDistance is the number of characters to insert, delete, replace or
// swap with their neighbour to turn a into b (the optimal string alignment
// distance).
func editDistance(a, b string) int {
	// Three rows of the table: two back, the previous one, this one.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
