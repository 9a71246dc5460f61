package report

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/relaybench/relaybench/internal/safe"
)

// Strings a relay sends (NIP-11 fields, OK, CLOSED and NOTICE reasons in
// notes and errors) and strings read back from a results file are
// untrusted: whatever they hold, every output shows them as plain text.
// inert escapes control and invisible format characters (one line, nothing
// a terminal acts on); md adds the escapes Markdown needs; csvCell keeps a
// spreadsheet from reading a cell as a formula.

// inert returns s on one line with every control character (C0, DEL, C1),
// bidi control and other invisible format character written as an escape
// (\n, \x1b, \u202e), and invalid UTF-8 as U+FFFD. Unlike safe.Line it
// keeps s whole: relaybench's own notes may be long.
func inert(s string) string { return safe.Inert(s) }

// mdText returns s as inert Markdown text for a table cell or a list item: on
// one line (inert), with HTML's < and & as entities (no tag, comment,
// autolink or entity survives), and Markdown's specials backslash-escaped: | (a table
// column), ` (code), [ ] (links and images), * _ ~ (emphasis), \ itself.
func mdText(s string) string {
	s = inert(s)
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '&':
			b.WriteString("&amp;")
		case '|', '`', '[', ']', '*', '_', '~', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdCode returns s as an inert Markdown code span: a code span shows its
// text as is (no HTML, no emphasis), fenced by more backticks than s holds
// in a row.
func mdCode(s string) string {
	s = inert(s)
	run, longest := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if longest > 0 || strings.HasPrefix(s, " ") || strings.HasSuffix(s, " ") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// csvCell returns s fit for a CSV cell a spreadsheet will open: inert, and
// a text starting with = + - @ (a formula to a spreadsheet) prefixed with '
// unless it is a number (-5, +1.5). encoding/csv quotes what needs quoting.
func csvCell(s string) string {
	s = inert(s)
	if s == "" || !strings.ContainsRune("=+-@", rune(s[0])) {
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return s
	}
	return "'" + s
}

// inertWriter passes text to w with every control character but newline
// escaped (see inert), so that no string in a terminal summary (a relay's
// words, a hand-edited results file) can move the cursor, recolour or
// clear the terminal. Runes split across writes are held until whole.
type inertWriter struct {
	w    io.Writer
	hold []byte
}

func (iw *inertWriter) Write(p []byte) (int, error) {
	buf := p
	if len(iw.hold) > 0 {
		buf = append(iw.hold, p...)
		iw.hold = nil
	}
	var b strings.Builder
	for i := 0; i < len(buf); {
		c := buf[i]
		if c >= 0x20 && c < 0x7f || c == '\n' {
			b.WriteByte(c)
			i++
			continue
		}
		if !utf8.FullRune(buf[i:]) {
			iw.hold = append(iw.hold, buf[i:]...)
			break
		}
		r, size := utf8.DecodeRune(buf[i:])
		i += size
		safe.WriteRune(&b, r, size)
	}
	if _, err := io.WriteString(iw.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}
