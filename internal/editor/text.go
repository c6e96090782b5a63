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

// byteOrderMark is UTF-8's byte order mark, which some editors write at
// the start of a text file.
const byteOrderMark = "\ufeff"

// lineCount is how many lines s has. A final line terminator does not
// start another line: "a\nb" and "a\nb\n" both have two lines, "" has none
// and "\n" has one (empty) line.
func lineCount(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// lineOffset is where line k of s starts, for 1 <= k <= lineCount(s).
// Lines are found by scanning, not kept in a slice: a file of newlines
// would need 24 bytes of spans for each byte of its text.
func lineOffset(s string, k int) int {
	off := 0
	for ; k > 1; k-- {
		off += strings.IndexByte(s[off:], '\n') + 1
	}
	return off
}

// lineAtOffset is the line of s that starts at offset start < len(s).
func lineAtOffset(s string, start int) span {
	i := strings.IndexByte(s[start:], '\n')
	if i < 0 {
		return span{start: start, end: len(s), next: len(s)}
	}
	end := start + i
	next := end + 1
	if end > start && s[end-1] == '\r' {
		end--
	}
	return span{start: start, end: end, next: next}
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
// included, up to limit+1 (more are not counted), and the byte offsets of
// the first limit of them. The count stops because each match costs a
// comparison of sub: a long sub in a text of one repeated character
// matches at nearly every byte, and counting them all took minutes.
func occurrences(s, sub string, limit int) (count int, offsets []int) {
	for i := 0; i <= len(s) && count <= limit; {
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
