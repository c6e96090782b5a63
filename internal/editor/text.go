package editor

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// span is one line of a text: s[start:end] is its content without the line
// terminator ("\n" or "\r\n"), next is where the following line starts.
type span struct {
	start, end, next int
}

// lineSpans splits s into lines. A final line terminator does not start
// another line: "a\nb" and "a\nb\n" both have two lines, "" has none and
// "\n" has one (empty) line.
func lineSpans(s string) []span {
	var out []span
	for start := 0; start < len(s); {
		i := strings.IndexByte(s[start:], '\n')
		if i < 0 {
			out = append(out, span{start: start, end: len(s), next: len(s)})
			break
		}
		end := start + i
		next := end + 1
		if end > start && s[end-1] == '\r' {
			end--
		}
		out = append(out, span{start: start, end: end, next: next})
		start = next
	}
	return out
}

// eolOf returns the line terminator s uses: that of its first line, "\n"
// when it has none.
func eolOf(s string) string {
	i := strings.IndexByte(s, '\n')
	if i > 0 && s[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// toEOL rewrites the line terminators of s to eol.
func toEOL(s, eol string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if eol == "\n" {
		return s
	}
	return strings.ReplaceAll(s, "\n", eol)
}

// isText reports whether data is UTF-8 text: valid UTF-8 without NUL bytes.
func isText(data []byte) bool {
	return utf8.Valid(data) && bytes.IndexByte(data, 0) < 0
}

// occurrences returns how many times sub occurs in s, overlapping matches
// included, and the byte offsets of the first limit of them.
func occurrences(s, sub string, limit int) (count int, offsets []int) {
	for i := 0; i <= len(s); {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			break
		}
		count++
		if len(offsets) < limit {
			offsets = append(offsets, i+j)
		}
		i += j + 1
	}
	return count, offsets
}

// lineAt returns the 1-based line number of byte offset off in s.
func lineAt(s string, off int) int {
	return strings.Count(s[:off], "\n") + 1
}
