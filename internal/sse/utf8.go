package sse

import "unicode/utf8"

// validUTF8 is b decoded as the Encoding standard's UTF-8 decoder does
// and encoded again: b itself when it is valid UTF-8, otherwise a copy in
// which each maximal subpart of an invalid sequence is one U+FFFD.
// Decoding the values of a stream's fields one by one is decoding the
// stream: what separates them (':', ' ', CR, LF) is ASCII, and an ASCII
// byte ends any sequence it follows.
func validUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		if r, n := utf8.DecodeRune(b); r != utf8.RuneError || n > 1 {
			out = append(out, b[:n]...)
			b = b[n:]
			continue
		}
		out = utf8.AppendRune(out, utf8.RuneError)
		b = b[maximalSubpart(b):]
	}
	return out
}

// maximalSubpart is the length of the maximal subpart at the start of b,
// which does not start with a valid sequence: the lead byte and the
// continuation bytes after it that could still begin a valid sequence (1
// for a byte that cannot lead one).
func maximalSubpart(b []byte) int {
	lo, hi := byte(0x80), byte(0xBF) // the bounds of the next byte
	need := 0                        // continuation bytes the lead byte needs
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for n <= need && n < len(b) && b[n] >= lo && b[n] <= hi {
		n++
		lo, hi = 0x80, 0xBF
	}
	return n
}
