package verify

import (
	"fmt"
	"slices"
	"strings"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
)

// Answer checks one complete answer to a REQ (the events before EOSE, valid
// ones parsed, invalid ones counted) against the filter and, when model is
// not nil, against the set the relay should have returned: the newest
// `limit` matching live events within relayCap (0: none). Events tied on
// created_at at the cut-off may fill the last places in any order. It uses
// the latest-only reading; Judge picks the reading for a set of answers.
func Answer(f *nostr.Filter, evs []*nostr.Event, invalid int64, model *Model, relayCap int) results.Verification {
	return AnswerAs(f, evs, invalid, model, relayCap, LatestOnly)
}

// AnswerAs is Answer under reading r: with KeepsSuperseded, superseded
// versions are expected like any other accepted event (the newest `limit`
// of every accepted match). Unknown events of the model (see
// NewModelUnknown) returned in this answer count as stored.
func AnswerAs(f *nostr.Filter, evs []*nostr.Event, invalid int64, model *Model, relayCap int, r Reading) results.Verification {
	var b bounds
	if model != nil {
		b = model.bounds([]Reply{{Filter: f, Events: evs}})
	}
	return answer(f, evs, invalid, b, relayCap, r)
}

// bounds are the bounds of the store a set of answers is judged between
// (see unknown.go); lo nil: no model. min is lo without the events an
// unseen unknown event could supersede (lo when none could).
type bounds struct{ lo, min, hi *view }

// bounds of model for the answers of replies.
func (m *Model) bounds(replies []Reply) bounds {
	seen := seenUnknown(replies, m)
	lo := m.with(append(seen, priorIn(replies, m)...)) // earlier data in an answer: stored
	if len(m.Unknown) == len(seen) && !m.Prior {
		return bounds{lo, lo, lo}
	}
	unseen := make([]*nostr.Event, 0, len(m.Unknown)-len(seen))
	for _, e := range m.Unknown {
		if !lo.added(e.ID) {
			unseen = append(unseen, e)
		}
	}
	hi := lo.widen(unseen)
	if m.Prior {
		hi.threatenReplaceable(lo) // prior.go
	}
	return bounds{lo, lo.narrow(hi), hi}
}

// unseen reports whether id is an unknown event no answer returned.
func (b bounds) unseen(id string) bool { return b.hi.added(id) && !b.lo.added(id) }

// answer checks one answer against the bounds b. Every event is checked for
// validity, filter match, duplicates and order; only the newest
// min(limit, cap) of the valid matching events (NIP-01's order) are judged
// against the expected set: more than `limit` is a SHOULD (OverLimit).
// Extra events are judged against b.min (superseded: against b.lo),
// missing ones against b.hi (and at least as many as b.min's expectation
// lacks), so that only answers certainly wrong count.
func answer(f *nostr.Filter, evs []*nostr.Event, invalid int64, b bounds, relayCap int, r Reading) results.Verification {
	v := results.Verification{Invalid: invalid, Checked: 1, Returned: int64(len(evs)) + invalid, Verified: b.lo != nil}
	seen := make(map[string]bool, len(evs))
	var kept []*nostr.Event
	for j, e := range evs {
		if seen[e.ID] {
			v.Duplicated++
			continue
		}
		seen[e.ID] = true
		if !f.Matches(e) {
			v.NotMatching++
			continue
		}
		if j > 0 && e.CreatedAt > evs[j-1].CreatedAt {
			v.Misordered++
		}
		kept = append(kept, e)
	}
	if f.Limit > 0 && len(kept) > f.Limit {
		v.OverLimit = int64(len(kept) - f.Limit)
	}
	if b.lo == nil {
		return v
	}
	if n := keepOf(f, relayCap); n >= 0 && len(kept) > n {
		kept = newestFirst(kept, n)
	}
	expected, all := b.min.expectedCount(f, relayCap, r)
	v.Expected = int64(ownExpected(f, relayCap, kept, expected, b))
	if relayCap > 0 && len(expected) < all && (f.Limit == 0 || relayCap < f.Limit) {
		v.Truncated++
	}
	cut := cutOf(expected, all)
	got := make(map[string]int64, len(kept)) // id → created_at of the events judged right
	for _, e := range kept {
		switch {
		case unowned(&v, e, b, r):
			continue
		case e.CreatedAt < cut:
			v.Extra++
			v.Notes = AppendUnique(v.Notes, "returned events older than the newest ones the limit asked for")
			continue
		}
		got[e.ID] = e.CreatedAt
	}
	v.Missing = int64(owedMissing(f, b, relayCap, r, got, expected, all))
	if short := len(expected) - len(got); int64(short) > v.Missing {
		// Whatever the unknown events did, the answer holds fewer right
		// events than the smallest store owes.
		v.Missing = int64(short)
	}
	if v.Missing > 0 {
		v.Notes = AppendUnique(v.Notes, "accepted events matching the filter were not returned")
	}
	return v
}

// unowned says whether no store could owe e because the relay never
// accepted it, or, read as LatestOnly, a newer accepted version replaced it;
// such an event is counted extra with the reason.
func unowned(v *results.Verification, e *nostr.Event, b bounds, r Reading) bool {
	acc, replaced := b.lo.accepted(e.ID)
	switch {
	case !acc && b.lo.m.Prior:
		v.Extra++
		v.Notes = AppendUnique(v.Notes, "returned events the relay refused when this run sent them")
		return true
	case !acc:
		v.Extra++
		v.Notes = AppendUnique(v.Notes, "returned events this run never published, from a relay that held none when the run began, or events the relay refused")
		return true
	case replaced && r == LatestOnly:
		v.Extra++
		v.Notes = AppendUnique(v.Notes, "returned replaceable events that a newer accepted event had replaced")
		return true
	}
	return false
}

// cutOf is the created_at at which an expectation of expected out of all
// matches was cut by the limit or cap (below every timestamp: not cut).
func cutOf(expected []*nostr.Event, all int) int64 {
	if len(expected) > 0 && len(expected) < all {
		return expected[len(expected)-1].CreatedAt
	}
	return -1 << 62
}

// owedMissing counts the events of b.hi's expectation that are certainly
// owed and were not returned (got): neither unseen unknown events nor
// threats (events an unseen one would supersede), and at the cut-off only
// the places that those, tied there, could not fill or free. Events tied on
// created_at at the cut-off may fill the last places in any order. expected
// and all are b.min's expectation (reused when the bounds are one).
func owedMissing(f *nostr.Filter, b bounds, relayCap int, r Reading, got map[string]int64, expected []*nostr.Event, all int) int {
	ids, short := owedMissingIDs(f, b, relayCap, r, got, expected, all)
	return len(ids) + short
}

// owedMissingIDs is owedMissing as the ids of the certainly owed events not
// returned, off the cut-off, and how many places tied at the cut-off are
// certainly unfilled.
func owedMissingIDs(f *nostr.Filter, b bounds, relayCap int, r Reading, got map[string]int64, expected []*nostr.Event, all int) (missing []string, short int) {
	if b.hi != b.lo {
		expected, all = b.hi.expectedCount(f, relayCap, r)
	}
	cut := cutOf(expected, all)
	places, gotAtCut := 0, 0
	for _, e := range expected {
		if e.CreatedAt == cut {
			places++
			continue
		}
		if _, ok := got[e.ID]; !ok && !b.unseen(e.ID) && !(r == LatestOnly && b.hi.threatID[e.ID]) {
			missing = append(missing, e.ID)
		}
	}
	if places == 0 {
		return missing, 0
	}
	for _, at := range got {
		if at == cut {
			gotAtCut++
		}
	}
	if b.hi != b.lo {
		places -= tiedUnseen(b.lo, b.hi, f, cut, r)
		places -= freeable(b.hi.threat, got, f, cut, r)
	}
	return missing, max(0, places-gotAtCut)
}

// freeable counts the threats (under LatestOnly) tied at the cut-off,
// matching f and not returned: a stored unknown event would supersede them
// and free their places.
func freeable(threat []*nostr.Event, got map[string]int64, f *nostr.Filter, cut int64, r Reading) int {
	if r != LatestOnly {
		return 0
	}
	n := 0
	for _, e := range threat {
		if _, ok := got[e.ID]; !ok && e.CreatedAt == cut && f.Matches(e) {
			n++
		}
	}
	return n
}

// InferCap looks for a per-REQ cap the relay did not announce: if every
// answer that came back short of its expectation has the same size N, and at
// least two did, the relay caps at N. filters[i] was answered by parsed[i].
// Expectations use the latest-only reading.
func InferCap(filters []*nostr.Filter, parsed [][]*nostr.Event, model *Model) int {
	return InferCapAs(filters, parsed, model, LatestOnly)
}

// InferCapAs is InferCap with expectations under reading r.
func InferCapAs(filters []*nostr.Filter, parsed [][]*nostr.Event, model *Model, r Reading) int {
	return inferCapOf(filters, parsed, model.with(nil), r)
}

// inferCap is InferCapAs against a bound of the store (the smallest: an
// answer short of it is short whatever the unknown events did).
func inferCapOf(filters []*nostr.Filter, parsed [][]*nostr.Event, lo *view, r Reading) int {
	short, count := -1, 0
	for i, f := range filters {
		exp, _ := lo.expectedCount(f, 0, r)
		n := len(parsed[i])
		if n >= len(exp) {
			continue
		}
		if short == -1 {
			short = n
		} else if short != n {
			return 0
		}
		count++
	}
	if count >= 2 && short > 0 {
		return short
	}
	return 0
}

// CapNote explains an inferred cap.
func CapNote(n int) string {
	return fmt.Sprintf("the relay returned at most %s events per REQ (observed; not announced in NIP-11 limitation.max_limit): expectations use that cap", numfmt.Group(int64(n)))
}

// Add adds the counts and notes of v to t, and its semantics when t names
// none.
func Add(t, v *results.Verification) {
	if v == nil {
		return
	}
	t.Verified = t.Verified || v.Verified
	t.Checked += v.Checked
	t.Expected += v.Expected
	t.Returned += v.Returned
	t.Missing += v.Missing
	t.Extra += v.Extra
	t.NotMatching += v.NotMatching
	t.Invalid += v.Invalid
	t.Duplicated += v.Duplicated
	t.Misordered += v.Misordered
	t.Truncated += v.Truncated
	t.OverLimit += v.OverLimit
	t.StoredUnknown += v.StoredUnknown
	t.HeldBefore += v.HeldBefore
	if t.Semantics == "" {
		t.Semantics = v.Semantics
	}
	t.Notes = AppendUnique(t.Notes, v.Notes...)
}

// Finish sets v.Passed: no invalid, non-matching or duplicated event, and,
// when the expected set was known (Verified), none missing or extra.
// Misordered answers are a SHOULD (newest first), named in a note, not failed.
// It sets v.State too: with no answer checked (Checked 0) and nothing wrong,
// the state is "not verified" and Passed false: zero answers is no pass.
func Finish(v *results.Verification) {
	v.Passed = v.Invalid == 0 && v.NotMatching == 0 && v.Duplicated == 0
	if v.Verified {
		v.Passed = v.Passed && v.Missing == 0 && v.Extra == 0
	}
	v.State = ""
	v.Settle()
	if v.Misordered > 0 {
		v.Notes = AppendUnique(v.Notes, fmt.Sprintf("%s came out of newest-first order (NIP-01 SHOULD; not failed)", numfmt.Count(v.Misordered, "event")))
	}
	// One note on events beyond the limit, for the total: a note an
	// earlier Finish left (on part of the answers, or before an expected
	// set came) would say the same events twice. Answers an earlier Finish
	// judged without an expected set still had none (a read-back added
	// later does not judge them): their note's kind stays.
	unjudged := slices.ContainsFunc(v.Notes, func(n string) bool { return isOverLimitNote(n) && strings.HasSuffix(n, overLimitCheckedTail) })
	v.Notes = slices.DeleteFunc(v.Notes, isOverLimitNote)
	if v.OverLimit > 0 && v.Verified && !unjudged {
		v.Notes = AppendUnique(v.Notes, OverLimitNote(v.OverLimit))
	} else if v.OverLimit > 0 {
		// No expected set (a partial verification): nothing was judged
		// against one.
		v.Notes = AppendUnique(v.Notes, OverLimitCheckedNote(v.OverLimit))
	}
}

// OverLimitCheckedNote names n events returned beyond their filters' limit
// in answers judged without an expected set.
func OverLimitCheckedNote(n int64) string {
	return fmt.Sprintf("%s"+overLimitLead+"%q"+overLimitCheckedTail, numfmt.Count(n, "event"), LimitSentence)
}

// overLimitCheckedTail ends OverLimitCheckedNote.
const overLimitCheckedTail = "); each was checked for validity, filter match and duplicates"

// overLimitLead is how OverLimitNote and OverLimitCheckedNote go on after
// their count.
const overLimitLead = " came back beyond their filter's limit (NIP-01 SHOULD, not failed: "

// isOverLimitNote reports whether note n is an OverLimitNote or
// OverLimitCheckedNote (of any count).
func isOverLimitNote(n string) bool {
	i := strings.Index(n, overLimitLead)
	if i <= 0 {
		return false
	}
	count, ok := strings.CutSuffix(n[:i], " events")
	if !ok {
		count, ok = strings.CutSuffix(n[:i], " event")
	}
	return ok && count != "" && strings.Trim(count, "0123456789,") == ""
}

// LimitSentence is NIP-01's word on `limit`.
const LimitSentence = "Relays SHOULD use the `limit` value to guide how many events are returned in the initial response. Returning fewer events is acceptable, but returning (much) more should be avoided to prevent overwhelming clients."

// OverLimitNote names n events returned beyond their filters' limit.
func OverLimitNote(n int64) string {
	return fmt.Sprintf("%s"+overLimitLead+"%q); the newest `limit` of each answer were judged against the expected set, the rest only for validity, filter match and duplicates", numfmt.Count(n, "event"), LimitSentence)
}

// AppendUnique appends the strings of src not yet in dst, keeping at most 50.
func AppendUnique(dst []string, src ...string) []string {
	for _, s := range src {
		found := false
		for _, d := range dst {
			if d == s {
				found = true
				break
			}
		}
		if !found && len(dst) < 50 {
			dst = append(dst, s)
		}
	}
	return dst
}
