package shell

import "testing"

func TestBashQuote(t *testing.T) {
	// As bash 5.2's printf %q in C.UTF-8.
	for in, want := range map[string]string{
		"":          "''",
		"plain":     "plain",
		"a b":       `a\ b`,
		"it's":      `it\'s`,
		"a$b":       `a\$b`,
		"~x":        `\~x`,
		"x~":        "x~",
		"a=~b":      `a=\~b`,
		"a:~b":      `a:\~b`,
		"#a":        `\#a`,
		"a#b":       "a#b",
		"a,b":       `a\,b`,
		"é":         "é",
		"a\tb":      `$'a\tb'`,
		"a\nb":      `$'a\nb'`,
		"\x01":      `$'\001'`,
		"\x7f":      `$'\177'`,
		"a\x1bb":    `$'a\Eb'`,
		"a'b\t":     `$'a\'b\t'`,
		"a\\b\n":    `$'a\\b\n'`,
		"\xc3":      `$'\303'`,
		"x*?[]":     `x\*\?\[\]`,
		"{}^!":      `\{\}\^\!`,
		"+-./_=%@:": "+-./_=%@:",
	} {
		if got := bashQuote(in); got != want {
			t.Errorf("bashQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
