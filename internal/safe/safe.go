// Package safe makes strings that come from a relay (NIP-11 fields, OK and
// CLOSED reasons, NOTICEs) fit to print: every string a relay sends is
// untrusted and may hold newlines, terminal escape sequences, bidi overrides
// or invalid UTF-8 that would break a table, a report or a terminal.
package safe

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxRunes is the longest string Line returns (longer ones end in "…").
const MaxRunes = 300

// Line returns s on one printable line: surrounding space trimmed; control
// characters shown as escapes (\n, \r, \t, \x1b, \u0085 …); bidi controls and
// other invisible format characters escaped; invalid UTF-8 as U+FFFD; at
// most MaxRunes runes.
func Line(s string) string {
	s = strings.TrimSpace(s)
	if isPlain(s) && utf8.RuneCountInString(s) <= MaxRunes {
		return s
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if n == MaxRunes {
			b.WriteString("…")
			break
		}
		n++
		WriteRune(&b, r, size)
	}
	return b.String()
}

// Inert returns s whole (no trimming, no length cap) with the escapes of
// Line: nothing in it acts on a terminal or breaks a line.
func Inert(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		WriteRune(&b, r, size)
	}
	return b.String()
}

// WriteRune writes rune r (size bytes in its source) to b, escaped as Line
// escapes it when it is not plainly printable.
func WriteRune(b *strings.Builder, r rune, size int) {
	const hex = "0123456789abcdef"
	switch {
	case r == utf8.RuneError && size == 1:
		b.WriteRune(utf8.RuneError)
	case r == '\n':
		b.WriteString(`\n`)
	case r == '\r':
		b.WriteString(`\r`)
	case r == '\t':
		b.WriteString(`\t`)
	case r < 0x20 || r == 0x7f:
		b.WriteString(`\x`)
		b.WriteByte(hex[r>>4])
		b.WriteByte(hex[r&15])
	case unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029':
		top := 12
		if r > 0xffff {
			b.WriteString(`\U`)
			top = 28
		} else {
			b.WriteString(`\u`)
		}
		for sh := top; sh >= 0; sh -= 4 {
			b.WriteByte(hex[(r>>sh)&15])
		}
	default:
		b.WriteRune(r)
	}
}

func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}
