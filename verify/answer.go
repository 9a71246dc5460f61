package verify

import (
	"fmt"

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
// of every accepted match).
func AnswerAs(f *nostr.Filter, evs []*nostr.Event, invalid int64, model *Model, relayCap int, r Reading) results.Verification {
	v := results.Verification{Invalid: invalid, Checked: 1, Returned: int64(len(evs)) + invalid, Verified: model != nil}
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
	if model == nil {
		return v
	}
	expected, all := model.ExpectedCount(f, relayCap, r)
	v.Expected = int64(len(expected))
	if relayCap > 0 && len(expected) < all && (f.Limit == 0 || relayCap < f.Limit) {
		v.Truncated++
	}
	cut := int64(-1 << 62)
	if len(expected) > 0 && len(expected) < all {
		cut = expected[len(expected)-1].CreatedAt
	}
	got := make(map[string]bool, len(kept))
	gotAtCut := 0
	for _, e := range kept {
		acc, replaced := model.Accepted(e.ID)
		switch {
		case !acc:
			v.Extra++
			v.Notes = AppendUnique(v.Notes, "returned events relaybench never published or that the relay refused (a relay with old data, or one that stores refused events)")
			continue
		case replaced && r == LatestOnly:
			v.Extra++
			v.Notes = AppendUnique(v.Notes, "returned replaceable events that a newer accepted event had replaced")
			continue
		case e.CreatedAt < cut:
			v.Extra++
			v.Notes = AppendUnique(v.Notes, "returned events older than the newest ones the limit asked for")
			continue
		}
		got[e.ID] = true
		if e.CreatedAt == cut {
			gotAtCut++
		}
	}
	needAtCut := 0
	for _, e := range expected {
		if e.CreatedAt == cut {
			needAtCut++
			continue
		}
		if !got[e.ID] {
			v.Missing++
		}
	}
	if gotAtCut < needAtCut {
		v.Missing += int64(needAtCut - gotAtCut)
	}
	if v.Missing > 0 {
		v.Notes = AppendUnique(v.Notes, "accepted events matching the filter were not returned")
	}
	return v
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
	short, count := -1, 0
	for i, f := range filters {
		exp, _ := model.ExpectedCount(f, 0, r)
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
	return fmt.Sprintf("the relay returned at most %d events per REQ (observed; not announced in NIP-11 limitation.max_limit): expectations use that cap", n)
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
		v.Notes = AppendUnique(v.Notes, fmt.Sprintf("%d events came out of newest-first order (NIP-01 SHOULD; not failed)", v.Misordered))
	}
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
