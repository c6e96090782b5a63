package shell

import (
	"strings"
	"testing"
)

// FuzzExpr checks that expr never panics, and that a value it returns
// is false exactly when it is empty or an integer 0.
func FuzzExpr(f *testing.F) {
	for _, s := range []string{
		"1 + 2 * 3", "( 1 + 2 ) * 3", "length hello", "substr hello 2 3",
		"index hello l", "abc : a\\(b\\)", "match abc .*", "1 / 0", "a | b & 0",
		"( ( (", ") )", "+ +", "- - -", "99999999999999999999 * 99999999999999999999",
		"1 < 2 = 1", "x : \\(", "substr a -1 99999999999999999999", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args := strings.Fields(s)
		if len(args) > 200 {
			args = args[:200]
		}
		v, err := evalExpr(nil, args)
		if err != nil {
			return
		}
		out := v.String()
		null := out == "" || strings.Trim(strings.TrimPrefix(out, "-"), "0") == "" && out != "-"
		if v.null() != null {
			t.Fatalf("expr %q = %q, null() = %v", s, out, v.null())
		}
	})
}
