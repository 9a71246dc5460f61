package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/relaybench/relaybench/internal/safe"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/threshold"
)

// thresholdsTable is the table of a file's thresholds: value, limit and
// result per threshold and relay.
func thresholdsTable(ts []results.ThresholdResult) *table {
	t := &table{title: "Thresholds", head: []string{"Threshold", "Relay", "Value", "Limit", "Result"}, left: map[int]bool{1: true, 4: true}}
	for _, r := range ts {
		res := "pass"
		switch {
		case r.Error != "":
			// Its first clause: what exists is listed once, in the verdict's reasons.
			e, _, _ := strings.Cut(r.Error, "; ")
			res = "ERROR: " + e
		case !r.Passed:
			res = "FAIL"
		}
		val := dash
		if r.Error == "" {
			val = threshold.FormatValue(r)
			switch {
			case r.Runs > 1 && r.Unit == threshold.UnitVerdict:
				val += fmt.Sprintf(" (worst of %d)", r.Runs)
			case r.Runs > 1:
				val += fmt.Sprintf(" (median of %d)", r.Runs)
			}
		}
		lim := r.Op + " " + threshold.Format(r.Limit, r.Unit)
		t.add(r.Threshold, safe.Line(r.Relay), val, lim, res)
	}
	return t
}

// thresholdTables are the thresholds tables of the Markdown and HTML
// reports: one per file that has thresholds.
func thresholdTables(files []*results.File) []*table {
	var out []*table
	for i, f := range files {
		if len(f.Thresholds) == 0 {
			continue
		}
		t := thresholdsTable(f.Thresholds)
		if len(files) > 1 {
			t.title = fmt.Sprintf("Thresholds (file %d)", i+1)
		}
		out = append(out, t)
	}
	return out
}

// writeThresholds prints the thresholds table of f in the terminal summary.
func writeThresholds(w io.Writer, f *results.File) {
	if len(f.Thresholds) == 0 {
		return
	}
	blankLine(w) // after a run's block, which ends with one already
	fmt.Fprintln(w, "Thresholds:")
	thresholdsTable(f.Thresholds).text(w, "  ")
}

// JUnit test report (the Ant/Jenkins schema CI systems read: GitHub
// Actions test reporters, GitLab, Jenkins).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []JUnitCase `xml:"testcase"`
}

// JUnitCase is one test case of a JUnit report. Failure (a check not met)
// or Error (it could not be checked) holds the message; Skipped says why
// it was not checked.
type JUnitCase struct {
	Suite     string        `xml:"-"`
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	Output    string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// Fail, Err and Skip make a case's outcome.
func (c *JUnitCase) Fail(msg string) {
	msg = inert(msg)
	c.Failure = &junitMessage{Message: msg, Type: "failure", Text: msg}
}
func (c *JUnitCase) Err(msg string) {
	msg = inert(msg)
	c.Error = &junitMessage{Message: msg, Type: "error", Text: msg}
}
func (c *JUnitCase) Skip(msg string) { c.Skipped = &junitMessage{Message: inert(msg)} }

// WriteJUnit writes cases as a JUnit XML report, one testsuite per Suite
// in order of first appearance.
func WriteJUnit(w io.Writer, name string, cases []JUnitCase) error {
	out := junitSuites{Name: name}
	idx := map[string]int{}
	for _, c := range cases {
		c.Name, c.Classname = clean(c.Name), clean(c.Classname)
		i, ok := idx[c.Suite]
		if !ok {
			i = len(out.Suites)
			idx[c.Suite] = i
			out.Suites = append(out.Suites, junitSuite{Name: clean(c.Suite)})
		}
		s := &out.Suites[i]
		s.Tests++
		out.Tests++
		switch {
		case c.Failure != nil:
			s.Failures++
			out.Failures++
		case c.Error != nil:
			s.Errors++
			out.Errors++
		case c.Skipped != nil:
			s.Skipped++
		}
		s.Cases = append(s.Cases, c)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", " ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// clean makes relay-supplied text printable (and valid in XML).
func clean(s string) string { return safe.Line(s) }

// JUnitCases are the checks of a results file as JUnit test cases: one per
// threshold and relay (suite "thresholds"), one per verified phase and
// group (suite "verification"), one per conformance check and relay (suite
// "conformance", see junitCheck), and the verdict (suite "verdict").
func JUnitCases(f *results.File) []JUnitCase {
	var cases []JUnitCase
	for _, t := range f.Thresholds {
		c := JUnitCase{Suite: "thresholds", Name: t.Threshold, Classname: "relaybench.thresholds." + t.Relay}
		switch {
		case t.Error != "":
			c.Err(t.Error)
		case !t.Passed:
			c.Fail(fmt.Sprintf("%s = %s, limit %s %s", t.Figure, threshold.FormatValue(t), t.Op, threshold.Format(t.Limit, t.Unit)))
		default:
			c.Output = fmt.Sprintf("%s = %s, limit %s %s", t.Figure, threshold.FormatValue(t), t.Op, threshold.Format(t.Limit, t.Unit))
		}
		cases = append(cases, c)
	}
	multi := len(f.Runs) > 1
	for i := range f.Runs {
		r := &f.Runs[i]
		who := relayKey(&r.Relay)
		if multi && r.Repeat > 0 {
			who += fmt.Sprintf(" (repeat %d)", r.Repeat)
		}
		if r.Skipped != "" {
			c := JUnitCase{Suite: "verification", Name: "run", Classname: "relaybench.verification." + who}
			c.Skip(r.Skipped)
			cases = append(cases, c)
			continue
		}
		check := func(name string, v *results.Verification) {
			if v == nil {
				return
			}
			c := JUnitCase{Suite: "verification", Name: name, Classname: "relaybench.verification." + who}
			switch {
			case v.Status() == results.VerificationNotVerified:
				// Zero answers checked is no pass: the requested
				// verification did not happen.
				c.Fail(strings.Join(append([]string{"not verified: no answer was checked"}, v.Notes...), "; "))
			case v.Status() == results.VerificationFailed:
				c.Fail(fmt.Sprintf("verification failed: %d checked, %d expected, %d returned; %s", v.Checked, v.Expected, v.Returned, v.Faults()))
			case !v.Verified:
				c.Skip("partly verified (validity and filter match only): " + strings.Join(v.Notes, "; "))
			default:
				c.Output = fmt.Sprintf("%d answers checked, %d events expected, %d returned", v.Checked, v.Expected, v.Returned)
			}
			cases = append(cases, c)
		}
		for j := range r.Phases {
			p := &r.Phases[j]
			check(p.Name, p.Verification)
			for _, g := range p.Groups {
				check(p.Name+"/"+g.Name, g.Verification)
			}
		}
		for j := range r.Conformance {
			cases = append(cases, junitCheck(who, &r.Conformance[j]))
		}
	}
	if v := f.Verdict; v != nil {
		c := JUnitCase{Suite: "verdict", Name: "verdict", Classname: "relaybench.verdict"}
		if v.Status != 0 {
			c.Fail(fmt.Sprintf("%s (exit %d): %s", strings.ToUpper(v.Outcome), v.Status, strings.Join(v.Reasons, "; ")))
		}
		cases = append(cases, c)
	}
	return cases
}

// junitCheck is a conformance check as a JUnit case (suite
// "conformance"): a failure when it failed (a MUST), an error when it is
// unknown or not run (incomplete work), skipped when the relay does not
// announce its NIP; a pass or a named difference from a SHOULD or MAY
// passes, the difference in the case's output. The message is what was
// seen; the text adds the NIP sentence and the evidence.
func junitCheck(who string, c *results.Check) JUnitCase {
	jc := JUnitCase{Suite: "conformance", Name: c.ID, Classname: "relaybench.conformance." + who}
	msg := fmt.Sprintf("%s (NIP-%02d %s)", checkLabel(c.Status), c.NIP, c.Level)
	if c.Detail != "" {
		msg += ": " + c.Detail
	}
	text := inert(msg) + "\nNIP-" + fmt.Sprintf("%02d", c.NIP) + ": " + inert(c.Sentence)
	for _, l := range c.Evidence {
		text += "\n" + inert(l)
	}
	switch c.Status {
	case results.CheckFail:
		jc.Failure = &junitMessage{Message: inert(msg), Type: "failure", Text: text}
	case results.CheckUnknown, results.CheckNotRun:
		jc.Error = &junitMessage{Message: inert(msg), Type: "error", Text: text}
	case results.CheckNotAnnounced:
		jc.Skip(msg)
	default:
		jc.Output = text
	}
	return jc
}

// JUnit writes the checks of f (see JUnitCases) as a JUnit XML report.
func JUnit(w io.Writer, f *results.File) error {
	return WriteJUnit(w, "relaybench", JUnitCases(f))
}
