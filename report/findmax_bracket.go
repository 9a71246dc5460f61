package report

import (
	"strconv"
	"strings"

	"github.com/relaybench/relaybench/results"
)

// maxRateBracket is, for a find-max search --max-steps ended before it
// bisected to --precision, the bracket its answer lies in ("between 8,000
// and 16,000") and why ("--max-steps ended the search before it reached
// --precision 5%"), as the search's own answer line words it; "" when the
// search reached its precision or stopped otherwise (the client, the
// machine, the relay stalling, an interrupt: its work cancelled).
func maxRateBracket(p *results.Phase) (between, why string) {
	lo, hi := p.Rates[results.RateMaxRate], p.Rates["first_failing_rate"]
	prec, _ := p.Params["precision"].(float64)
	if p.Workload != "find-max" || p.ClientLimited || p.Aborted != "" || p.Counts["cancelled"] > 0 ||
		lo <= 0 || hi <= lo || prec <= 0 || (hi-lo)/lo <= prec || hasNote(p, "interrupted during") {
		return "", ""
	}
	return "between " + fmtRate(lo) + " and " + fmtRate(hi),
		"--max-steps ended the search before it reached --precision " + strconv.FormatFloat(prec*100, 'g', 3, 64) + "%"
}

// hasNote says whether one of p's notes begins with prefix.
func hasNote(p *results.Phase, prefix string) bool {
	for _, n := range p.Notes {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}

// bracketOf is maxRateBracket's bracket alone.
func bracketOf(p *results.Phase) string {
	b, _ := maxRateBracket(p)
	return b
}
