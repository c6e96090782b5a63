package textclip

import "unicode/utf8"

// Clip returns s when it is at most n bytes long; otherwise its longest
// prefix of at most n bytes that ends on a character boundary, followed
// by "...". A character is never split, so valid UTF-8 stays valid.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
