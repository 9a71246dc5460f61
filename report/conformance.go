package report

import (
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"

	"github.com/relaybench/relaybench/results"
)

// Conformance checks (results.Check) in every format: a table of check ×
// relay with each check's status, then a finding per check that did not
// pass (fail, named, unknown, not run), with the NIP sentence it rests on,
// what was seen and the evidence (the frames sent and received). Every
// string a check holds beside its ID, NIP and level comes from the relay
// or quotes it, and is escaped for the format like any other relay string.

// conformanceNote explains the statuses, under every conformance table.
const conformanceNote = "pass: the relay did what the sentence asks. FAIL: a MUST was violated (wrong answers, exit 3). " +
	"named: the relay differs from a SHOULD or MAY (named with its sentence, not a failure). " +
	"not announced: the relay does not announce the NIP in NIP-11 supported_nips (nothing sent). " +
	"not run: the check could not be made (the relay refused what it needs). " +
	"unknown: no decisive answer (a wait ran out). Not run and unknown are incomplete work (exit 4), never wrong."

// checkLabel is how a status is shown in tables.
func checkLabel(s results.CheckStatus) string {
	switch s {
	case results.CheckFail:
		return "FAIL"
	case results.CheckNotAnnounced:
		return "not announced"
	case results.CheckNotRun:
		return "not run"
	case "":
		return dash
	}
	return string(s)
}

// CheckLabel is how a check's status is shown in tables ("not announced",
// "FAIL"), for lines printed while the checks run.
func CheckLabel(s results.CheckStatus) string { return checkLabel(s) }

// checkDecl is a check's declaration as results files hold it.
type checkDecl struct {
	id, level, sentence string
	nip                 int
}

// checkIDs lists the checks of groups' runs in order of first appearance.
func checkIDs(groups []*relayRuns) []checkDecl {
	return firstOfEach(groups, func(r *results.Run) []results.Check { return r.Conformance },
		func(c *results.Check) (string, checkDecl) { return c.ID, checkDecl{c.ID, c.Level, c.Sentence, c.NIP} })
}

// nipCell is a table's NIP column for check id, whose sentence and level
// are NIP nip's: "01"; for a check of another NIP's feature that rests on
// it (its ID names that NIP: "nip50.search-and-conditions", NIP-01's
// filter rule applied to a search), that NIP first: "50 (NIP-01 rule)".
func nipCell(id string, nip int) string {
	if rest, ok := strings.CutPrefix(id, "nip"); ok {
		if n, _, ok := strings.Cut(rest, "."); ok {
			if of, err := strconv.Atoi(n); err == nil && of != nip {
				return fmt.Sprintf("%02d (NIP-%02d rule)", of, nip)
			}
		}
	}
	return fmt.Sprintf("%02d", nip)
}

// findCheck is the check called id in r, nil if r did not run it.
func findCheck(r *results.Run, id string) *results.Check {
	for i := range r.Conformance {
		if r.Conformance[i].ID == id {
			return &r.Conformance[i]
		}
	}
	return nil
}

// conformanceTable is one row per check and one column per relay: the
// check's status there (over repeated runs, each status with its share).
// Nil when no run holds conformance checks.
func conformanceTable(groups []*relayRuns) *table {
	ids := checkIDs(groups)
	if len(ids) == 0 {
		return nil
	}
	t := &table{title: "Conformance", head: []string{"Check", "NIP", "Level"}, left: map[int]bool{1: true, 2: true}} // NIP: "01", "50 (NIP-01 rule)"
	var cols []*relayRuns
	for _, g := range groups {
		for _, r := range g.runs {
			if len(r.Conformance) > 0 {
				cols = append(cols, g)
				break
			}
		}
	}
	for _, g := range cols {
		t.left[len(t.head)] = true
		t.head = append(t.head, g.key)
	}
	for _, d := range ids {
		row := []string{d.id, nipCell(d.id, d.nip), d.level}
		for _, g := range cols {
			cell := tally(g.runs, func(r *results.Run) []string {
				if c := findCheck(r, d.id); c != nil {
					return []string{checkLabel(c.Status)}
				}
				return nil
			})
			if cell == "" {
				cell = dash
			}
			row = append(row, cell)
		}
		t.add(row...)
	}
	t.notes = append(t.notes, conformanceNote)
	return t
}

// finding is one check that did not pass on one run.
type finding struct {
	run   string // runLabel
	check *results.Check
}

// findings lists, per run, the checks that did not pass (not announced
// included only when asked: it says nothing about the relay's answers).
func findings(files []*results.File) []finding {
	var out []finding
	for _, f := range files {
		for i := range f.Runs {
			r := &f.Runs[i]
			for j := range r.Conformance {
				c := &r.Conformance[j]
				if c.Status != results.CheckPass && c.Status != results.CheckNotAnnounced {
					out = append(out, finding{runLabel(r), c})
				}
			}
		}
	}
	return out
}

// heading is a finding's one-line title: "strfry: req.limit-zero FAIL (NIP-01 MUST)".
func (fd finding) heading() string {
	return fmt.Sprintf("%s: %s %s (NIP-%02d %s)", fd.run, fd.check.ID, checkLabel(fd.check.Status), fd.check.NIP, fd.check.Level)
}

// evidenceCut says that the evidence was cut, "" when whole.
func evidenceCut(c *results.Check) string {
	if c.EvidenceCut {
		return "(more was exchanged than the evidence keeps)"
	}
	return ""
}

// writeCheckText writes one run's checks in the terminal summary: a
// table, then each finding with its sentence and up to maxLines lines of
// evidence. w is the summary's inert writer.
func writeCheckText(w io.Writer, r *results.Run) {
	if len(r.Conformance) == 0 {
		return
	}
	t := &table{head: []string{"Check", "NIP", "Level", "Status"}, left: map[int]bool{1: true, 2: true, 3: true}}
	for _, c := range r.Conformance {
		t.add(c.ID, nipCell(c.ID, c.NIP), c.Level, checkLabel(c.Status))
	}
	fmt.Fprintln(w, "Conformance:")
	t.text(w, "  ")
	n := map[results.CheckStatus]int{}
	for _, c := range r.Conformance {
		n[c.Status]++
	}
	fmt.Fprintf(w, "  %d checks: %d pass, %d FAIL, %d named, %d not announced, %d not run, %d unknown\n",
		len(r.Conformance), n[results.CheckPass], n[results.CheckFail], n[results.CheckNamed], n[results.CheckNotAnnounced], n[results.CheckNotRun], n[results.CheckUnknown])
	for _, fd := range findings([]*results.File{{Runs: []results.Run{*r}}}) {
		writeFindingText(w, fd)
	}
	fmt.Fprintln(w)
}

// maxLines is how many lines of a finding's evidence the terminal shows
// (the results file and the other formats hold them all).
const maxLines = 12

func writeFindingText(w io.Writer, fd finding) {
	c := fd.check
	fmt.Fprintf(w, "\n  %s %s (NIP-%02d %s)\n", checkLabel(c.Status), c.ID, c.NIP, c.Level)
	if c.Detail != "" {
		fmt.Fprintf(w, "    %s\n", inert(c.Detail))
	}
	fmt.Fprintf(w, "    NIP-%02d: %q\n", c.NIP, c.Sentence)
	for i, l := range c.Evidence {
		if i == maxLines {
			fmt.Fprintf(w, "    … %d more lines in the results file\n", len(c.Evidence)-maxLines)
			break
		}
		fmt.Fprintf(w, "    %s\n", inert(l))
	}
	if s := evidenceCut(c); s != "" {
		fmt.Fprintf(w, "    %s\n", s)
	}
}

// conformanceMarkdown writes the findings of files as Markdown: a heading
// per finding, what was seen, the sentence quoted, the evidence as code.
func conformanceMarkdown(w io.Writer, files []*results.File) {
	fds := findings(files)
	if len(fds) == 0 {
		return
	}
	fmt.Fprintln(w, "## Conformance findings")
	fmt.Fprintln(w)
	for _, fd := range fds {
		c := fd.check
		fmt.Fprintf(w, "### %s\n\n", mdText(fd.heading()))
		if c.Detail != "" {
			fmt.Fprintf(w, "%s\n\n", mdText(c.Detail))
		}
		fmt.Fprintf(w, "> NIP-%02d: %s\n\n", c.NIP, mdText(c.Sentence))
		for _, l := range c.Evidence {
			fmt.Fprintf(w, "- %s\n", mdCode(l))
		}
		if s := evidenceCut(c); s != "" {
			fmt.Fprintf(w, "- %s\n", mdText(s))
		}
		if len(c.Evidence) > 0 {
			fmt.Fprintln(w)
		}
	}
}

// conformanceHTML writes the findings of files as HTML.
func conformanceHTML(w io.Writer, files []*results.File) {
	fds := findings(files)
	if len(fds) == 0 {
		return
	}
	fmt.Fprintln(w, "<h2>Conformance findings</h2>")
	for _, fd := range fds {
		c := fd.check
		fmt.Fprintf(w, "<h3>%s</h3>\n", html.EscapeString(inert(fd.heading())))
		if c.Detail != "" {
			fmt.Fprintf(w, "<p>%s</p>\n", html.EscapeString(inert(c.Detail)))
		}
		fmt.Fprintf(w, "<blockquote>NIP-%02d: %s</blockquote>\n", c.NIP, html.EscapeString(inert(c.Sentence)))
		if len(c.Evidence) > 0 || c.EvidenceCut {
			lines := make([]string, 0, len(c.Evidence)+1)
			for _, l := range c.Evidence {
				lines = append(lines, html.EscapeString(inert(l)))
			}
			if s := evidenceCut(c); s != "" {
				lines = append(lines, s)
			}
			fmt.Fprintf(w, "<pre class=\"evidence\" style=\"white-space:pre-wrap;word-break:break-all;font-size:12px\">%s</pre>\n", strings.Join(lines, "\n"))
		}
	}
}
