package report

import (
	"slices"

	"github.com/relaybench/relaybench/results"
)

// Why a relay was skipped (its binary is not here, a store this
// relaybench lacks) is one long sentence, and each output says it once.
// The verdict lists it (judge's reason "not run: strfry needs a binary you
// supply, …"), so the header's Relay line and the run's block point there;
// where the verdict does not list it (none recorded, an interrupted run's,
// past the reasons shown) the Relay line says it. A summary printed in the
// output whose first lines said it (compare's "strfry will be skipped: …",
// SummaryOptions.SaidSkips) says it nowhere: it names the relay skipped
// "as said at the start".

// skipTold is where an output says why a run was skipped.
type skipTold int

const (
	toldInRelayLine skipTold = iota // the header's Relay line (or the run's block, when it ran phases)
	toldInVerdict                   // the verdict's reasons
	toldAtStart                     // the command's first lines, in the same output
)

// skipTeller says where an output of f tells why each skipped run of f was
// skipped; said names the relays the command told at the start.
type skipTeller struct {
	f    *results.File
	said map[string]bool
}

// skipReason is the verdict's reason for skipped run r, as judge.Judge
// gives it.
func skipReason(r *results.Run) string { return "not run: " + r.Skipped }

// where is where the output tells why r was skipped.
func (t skipTeller) where(r *results.Run) skipTold {
	switch {
	case t.said[r.Relay.Name]:
		return toldAtStart
	case t.f == nil:
		return toldInRelayLine
	}
	rs, _ := verdictReasons(t.f)
	if slices.Contains(rs, skipReason(r)) {
		return toldInVerdict
	}
	return toldInRelayLine
}

// relayLine is the header's Relay line of r, skipped before anything ran.
func (t skipTeller) relayLine(r *results.Run) string {
	switch t.where(r) {
	case toldAtStart:
		return relayKey(&r.Relay) + ": skipped, as said at the start"
	case toldInVerdict:
		return relayKey(&r.Relay) + ": skipped (the verdict says why)"
	}
	return relayKey(&r.Relay) + ": skipped: " + skipWhy(r)
}

// runLine is the first line of skipped run r's block in the summary.
func (t skipTeller) runLine(r *results.Run) string {
	switch t.where(r) {
	case toldAtStart:
		return "SKIPPED, as said at the start"
	case toldInVerdict:
		return "SKIPPED (the verdict says why)"
	}
	if len(r.Phases) == 0 && len(r.Conformance) == 0 {
		return "SKIPPED (the Relay line at the top says why)"
	}
	return "SKIPPED: " + skipWhy(r)
}

// reason is the verdict's reason s as the output lists it: the skip of a
// relay told at the start is named, not told again.
func (t skipTeller) reason(s string) string {
	if len(t.said) == 0 || t.f == nil {
		return s
	}
	for i := range t.f.Runs {
		r := &t.f.Runs[i]
		if r.Skipped != "" && t.said[r.Relay.Name] && s == skipReason(r) {
			return "not run: " + relayKey(&r.Relay) + " (skipped, as said at the start)"
		}
	}
	return s
}

// ReasonsTold are the reasons of f's verdict as an output whose first
// lines told why the relays in said were skipped lists them: those skips
// named, not told again ("not run: strfry (skipped, as said at the
// start)").
func ReasonsTold(f *results.File, said map[string]bool) []string {
	if f.Verdict == nil {
		return nil
	}
	t := skipTeller{f: f, said: said}
	rs := make([]string, len(f.Verdict.Reasons))
	for i, r := range f.Verdict.Reasons {
		rs[i] = t.reason(r)
	}
	return rs
}
