package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
)

// skippedCompare is a comparison in which orly did not run (no binary),
// judged as the commands judge it.
func skippedCompare() *results.File {
	f := compareFile(0, 1)
	f.Runs = append(f.Runs, results.Run{Relay: results.Relay{Name: "orly"},
		Skipped: "orly needs a binary you supply, and no package registry has ORLY: build it from its source, then pass --bin orly=PATH"})
	v := judge.Judge(f, false)
	f.Verdict = &v
	return f
}

// TestSkipToldOnce: why a relay was skipped is one long sentence, said
// once in each output: the verdict of the summary, the Markdown and the
// HTML reports lists it (judge's reason), and the header's Relay line and
// the run's block point there. A summary on the output whose first lines
// told it (SaidSkips: compare's "orly will be skipped: …") tells it
// nowhere and names the skip.
func TestSkipToldOnce(t *testing.T) {
	const why = "needs a binary you supply"
	f := skippedCompare()
	for _, o := range []SummaryOptions{{}, {Brief: true}} {
		s := summaryText(t, f, o)
		if n := strings.Count(s, why); n != 1 || !strings.Contains(s, "  - not run: orly "+why) {
			t.Errorf("brief %v: why orly was skipped said %d times, want once, in the verdict:\n%s", o.Brief, n, s)
		}
		if !strings.Contains(s, "  Relay:    orly: skipped (the verdict says why)\n") || !strings.Contains(s, "\nSKIPPED (the verdict says why)\n") {
			t.Errorf("brief %v: the Relay line or the run's block does not point to the verdict:\n%s", o.Brief, s)
		}
		s = summaryText(t, f, SummaryOptions{Brief: o.Brief, SaidSkips: map[string]bool{"orly": true}})
		for _, want := range []string{"  Relay:    orly: skipped, as said at the start\n", "\nSKIPPED, as said at the start\n", "\n  - not run: orly (skipped, as said at the start)\n"} {
			if strings.Contains(s, why) || !strings.Contains(s, want) {
				t.Errorf("brief %v, told at the start: want %q and no why:\n%s", o.Brief, want, s)
			}
		}
	}
	var md, page bytes.Buffer
	if err := Markdown(&md, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&page, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"Markdown": md.String(), "HTML": page.String()} {
		if n := strings.Count(out, why); n != 1 || !strings.Contains(out, "orly: skipped (the verdict says why)") {
			t.Errorf("%s: why orly was skipped said %d times, want once, the Relay line pointing to the verdict:\n%s", name, n, out)
		}
	}
	if got := ReasonsTold(f, map[string]bool{"orly": true}); len(got) != len(f.Verdict.Reasons) || strings.Contains(strings.Join(got, "\n"), why) {
		t.Errorf("ReasonsTold %q", got)
	}
}

// TestSkipToldInRelayLineWithoutVerdict: where the verdict does not list
// the skip (a file without a verdict; an interrupted run's, which lists
// what was cancelled), the Relay line says why, once.
func TestSkipToldInRelayLineWithoutVerdict(t *testing.T) {
	f := skippedCompare()
	f.Verdict = nil
	s := summaryText(t, f, SummaryOptions{Brief: true})
	if strings.Count(s, "needs a binary you supply") != 1 || !strings.Contains(s, "  Relay:    orly: skipped: it needs a binary you supply") ||
		!strings.Contains(s, "\nSKIPPED (the Relay line at the top says why)\n") {
		t.Errorf("without a verdict:\n%s", s)
	}
}
