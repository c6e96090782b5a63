package shell

import (
	"unicode"
	"unicode/utf8"
)

// displayWidth is the number of columns s takes on a terminal.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

// runeWidth approximates wcwidth: 0 for control characters and combining
// marks, 2 for East Asian wide and fullwidth characters (and emoji), 1
// otherwise.
func runeWidth(r rune) int {
	switch {
	case r < 0x20 || r >= 0x7f && r < 0xa0:
		return 0
	case r < 0x300:
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 0
	case r >= 0x1100 && r <= 0x115f, r >= 0x2e80 && r <= 0x303e, r >= 0x3041 && r <= 0x33ff,
		r >= 0x3400 && r <= 0x4dbf, r >= 0x4e00 && r <= 0x9fff, r >= 0xa000 && r <= 0xa4cf,
		r >= 0xac00 && r <= 0xd7a3, r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f,
		r >= 0xff00 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6, r >= 0x1f300 && r <= 0x1f64f,
		r >= 0x1f900 && r <= 0x1f9ff, r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}

// lineWidth tracks wc -L: the widest line seen, in columns (a tab moves to
// the next multiple of 8; a carriage return or form feed starts over).
type lineWidth struct {
	pos, max int
	pend     []byte // an incomplete UTF-8 sequence
}

func (l *lineWidth) add(p []byte) {
	for _, b := range p {
		if len(l.pend) == 0 && b < utf8.RuneSelf {
			switch b {
			case '\n', '\r', '\f':
				l.max = max(l.max, l.pos)
				l.pos = 0
			case '\t':
				l.pos += 8 - l.pos%8
			default:
				if b >= 0x20 && b < 0x7f {
					l.pos++
				}
			}
			continue
		}
		l.pend = append(l.pend, b)
		if utf8.FullRune(l.pend) || len(l.pend) >= utf8.UTFMax {
			r, n := utf8.DecodeRune(l.pend)
			if r != utf8.RuneError || n > 1 {
				l.pos += runeWidth(r)
			}
			rest := append([]byte(nil), l.pend[n:]...)
			l.pend = l.pend[:0]
			l.add(rest)
		}
	}
}

// longest returns the widest line, the last one included.
func (l *lineWidth) longest() int { return max(l.max, l.pos) }
