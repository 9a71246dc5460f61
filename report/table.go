package report

import (
	"fmt"
	"html"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// table is a titled grid of already formatted cells, rendered as aligned
// text, Markdown or HTML. Column 0 is left-aligned; the others are numbers
// (right-aligned) unless left[i] is set.
type table struct {
	title string
	head  []string
	left  map[int]bool
	rows  [][]string
	lead  []string // shown above the table, under its title
	notes []string // shown under the table
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) isLeft(i int) bool { return i == 0 || t.left[i] }

// dropColumn removes column i (nothing when i is out of range).
func (t *table) dropColumn(i int) {
	if i < 0 || i >= len(t.head) {
		return
	}
	left := map[int]bool{}
	for c, l := range t.left {
		switch {
		case c < i:
			left[c] = l
		case c > i:
			left[c-1] = l
		}
	}
	t.head, t.left = slices.Delete(t.head, i, i+1), left
	for r := range t.rows {
		if i < len(t.rows[r]) {
			t.rows[r] = slices.Delete(t.rows[r], i, i+1)
		}
	}
}

// foldZeroColumns moves the number columns in which no row has a figure
// other than 0 (or –, not recorded) out of t into one note under it, so
// that a wide phase table fits a page: "0 throughout (– where not recorded):
// Cancelled, Failed".
// Nothing when t fits the page already, has fewer than two such columns or
// no row.
func (t *table) foldZeroColumns() {
	if t.width() <= pageChars {
		return
	}
	var zero []int
	for i := range t.head {
		if t.isLeft(i) || len(t.rows) == 0 {
			continue
		}
		if !slices.ContainsFunc(t.rows, func(r []string) bool { c := cell(r, i); return c != "0" && c != dash }) {
			zero = append(zero, i)
		}
	}
	if len(zero) < 2 {
		return
	}
	var names []string
	for _, i := range slices.Backward(zero) {
		names = append(names, t.head[i])
		t.dropColumn(i)
	}
	slices.Reverse(names)
	t.notes = append(t.notes, "0 throughout (– where not recorded): "+strings.Join(names, ", ")+".")
}

// pageChars is about how many characters of width() fit the HTML page's
// main column, 1300 px, with room to spare: Chromium lays a character of
// width() out in about 8.2 px (13 px tabular digits, bold wrapped headers,
// 16 px cell padding counted as two characters; a compare's burst table of
// 151 is 1,244 px at its narrowest), so 158 fill the column to its edge,
// and a figure or relay name a few characters longer than the ones
// measured would push the table past it.
const pageChars = 145

// width estimates t's width in characters on the HTML page: each column
// as wide as its widest cell or the longest word of its header (headers
// wrap), plus its padding. A text cell's characters count four fifths of
// a figure's: proportional letters are narrower than tabular digits
// (Chromium at 1400 px lays out a Relays table of 153 full characters,
// its software a 52-character sentence and its version a 40-character
// pseudo-version, in 1,142 px of the column's 1,356), and one longer than
// longCell wraps at about that length.
func (t *table) width() int {
	n := 0
	for i, h := range t.head {
		w := 0
		for _, word := range strings.Fields(h) {
			w = max(w, utf8.RuneCountInString(word))
		}
		for _, r := range t.rows {
			c := utf8.RuneCountInString(cell(r, i))
			if t.isLeft(i) {
				c = min(c, longCell) * 4 / 5
			}
			w = max(w, c)
		}
		n += w + 2
	}
	return n
}

// fitPage turns t, when it is wider than the HTML page and has at most 12
// rows, into its transpose: one row per figure, one column per row of t
// (named by as many of its leading text cells as tell the rows apart:
// relay, then group or payload), so that a phase with many figures reads
// down the page instead of scrolling sideways. The leading text cells
// that are not needed to tell the rows apart (a relay's URL, software)
// become rows of their own, not words of a column's name.
func (t *table) fitPage() {
	if t.width() <= pageChars || len(t.rows) == 0 || len(t.rows) > 12 {
		return
	}
	keys := t.keyColumns()
	head := []string{strings.Join(t.head[:keys], ", ")}
	for _, r := range t.rows {
		head = append(head, t.rowKey(r, keys))
	}
	var rows [][]string
	for i := keys; i < len(t.head); i++ {
		row := []string{t.head[i]}
		for _, r := range t.rows {
			row = append(row, cell(r, i))
		}
		rows = append(rows, row)
	}
	t.head, t.rows, t.left = head, rows, nil
}

// keyColumns is how many leading text columns (at most 3) name t's rows
// in its transpose: the fewest whose cells tell every row apart, else
// all of them.
func (t *table) keyColumns() int {
	lead := 1
	for lead < len(t.head) && t.left[lead] && lead < 3 {
		lead++
	}
	for keys := 1; keys < lead; keys++ {
		seen := map[string]bool{}
		for _, r := range t.rows {
			seen[t.rowKey(r, keys)] = true
		}
		if len(seen) == len(t.rows) {
			return keys
		}
	}
	return lead
}

// rowKey is the name of row r in the transpose: its first keys cells,
// one space apart, a cell equal to the one before it said once.
func (t *table) rowKey(r []string, keys int) string {
	var k []string
	for i := range keys {
		if c := cell(r, i); i == 0 || c != cell(r, i-1) {
			k = append(k, c)
		}
	}
	return strings.Join(k, " ")
}

// text renders t as aligned columns with an indent.
func (t *table) text(w io.Writer, indent string) {
	width := make([]int, len(t.head))
	for i, h := range t.head {
		width[i] = utf8.RuneCountInString(h)
	}
	for _, r := range t.rows {
		for i, c := range r {
			if i < len(width) {
				width[i] = max(width[i], utf8.RuneCountInString(c))
			}
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString(indent)
		for i := range t.head {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if t.isLeft(i) {
				b.WriteString(c)
				if i < len(t.head)-1 {
					b.WriteString(pad)
				}
			} else {
				b.WriteString(pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	for _, n := range t.lead {
		fmt.Fprintf(w, "%s%s\n", indent, n)
	}
	line(t.head)
	for _, r := range t.rows {
		line(r)
	}
	for _, n := range t.notes {
		fmt.Fprintf(w, "%s%s\n", indent, n)
	}
}

// markdown renders t as a GitHub-flavoured Markdown table under a ### title.
// Every cell is inert text (mdText): a relay's name or reason cannot add a
// tag, a link or a column.
func (t *table) markdown(w io.Writer) {
	if t.title != "" {
		fmt.Fprintf(w, "### %s\n\n", mdText(t.title))
	}
	for _, n := range t.lead {
		fmt.Fprintf(w, "%s\n\n", mdText(n))
	}
	esc := mdText
	fmt.Fprint(w, "|")
	for _, h := range t.head {
		fmt.Fprintf(w, " %s |", esc(h))
	}
	fmt.Fprint(w, "\n|")
	for i := range t.head {
		if t.isLeft(i) {
			fmt.Fprint(w, "---|")
		} else {
			fmt.Fprint(w, "---:|")
		}
	}
	fmt.Fprintln(w)
	for _, r := range t.rows {
		fmt.Fprint(w, "|")
		for i := range t.head {
			fmt.Fprintf(w, " %s |", esc(cell(r, i)))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
	for _, n := range t.notes {
		fmt.Fprintf(w, "%s\n\n", mdText(n))
	}
}

// longCell is the length past which a text cell wraps in HTML.
const longCell = 60

// cell is column i of row r, "" past the row's end.
func cell(r []string, i int) string {
	if i < len(r) {
		return r[i]
	}
	return ""
}

// html renders t as an HTML table under an <h3> title.
func (t *table) html(w io.Writer) {
	if t.title != "" {
		fmt.Fprintf(w, "<h3>%s</h3>\n", html.EscapeString(t.title))
	}
	for _, n := range t.lead {
		fmt.Fprintf(w, "<p class=\"note\">%s</p>\n", html.EscapeString(n))
	}
	fmt.Fprint(w, "<table>\n<thead><tr>")
	for i, h := range t.head {
		fmt.Fprintf(w, "<th%s>%s</th>", t.align(i), html.EscapeString(h))
	}
	fmt.Fprint(w, "</tr></thead>\n<tbody>\n")
	for _, r := range t.rows {
		fmt.Fprint(w, "<tr>")
		for i := range t.head {
			c := cell(r, i)
			var cls []string
			if !t.isLeft(i) {
				cls = append(cls, "num")
			}
			if warnCell(c) {
				cls = append(cls, "warn")
			}
			if t.isLeft(i) && utf8.RuneCountInString(c) > longCell {
				cls = append(cls, "long") // a sentence (a step's verdict) wraps instead of running past the page
			}
			attr := ""
			if len(cls) > 0 {
				attr = ` class="` + strings.Join(cls, " ") + `"`
			}
			fmt.Fprintf(w, "<td%s>%s</td>", attr, htmlCell(c))
		}
		fmt.Fprint(w, "</tr>\n")
	}
	fmt.Fprint(w, "</tbody>\n</table>\n")
	for _, n := range t.notes {
		fmt.Fprintf(w, "<p class=\"note\">%s</p>\n", html.EscapeString(n))
	}
}

func (t *table) align(i int) string {
	if t.isLeft(i) {
		return ""
	}
	return ` class="num"`
}

// warnCell reports whether a cell carries a warning a reader must see.
func warnCell(c string) bool {
	if c == "FAIL" || strings.HasPrefix(c, "FAIL (") { // a conformance check
		return true
	}
	for _, w := range []string{"FAILED", "client-limited", "NOT VERIFIED", "not verified", "error"} {
		if strings.Contains(c, w) {
			return true
		}
	}
	return false
}

// htmlCell escapes a cell; the spread of repeated runs, "median (min–max)",
// goes on a second, smaller line.
func htmlCell(c string) string {
	if i := strings.LastIndex(c, " ("); i > 0 && strings.HasSuffix(c, ")") && strings.Contains(c[i:], "–") {
		return html.EscapeString(c[:i]) + `<br><small class="spread">` + html.EscapeString(c[i+1:]) + "</small>"
	}
	return html.EscapeString(c)
}
