package workload

import (
	"fmt"
	"slices"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/verify"
)

// overLimitAnswer is a complete answer, to a REQ sent while this part
// published, that held more events than its filter's limit: which of its
// events this part published tells live events from stored ones once the
// part's OKs are in (stillPublishing).
type overLimitAnswer struct {
	sent  int64 // REQ write (mono)
	over  int64 // valid, matching, distinct events beyond the limit (verify's count)
	fresh []int // the distinct fresh events of the answer this part published
}

// overLimitOf is r's answer as an overLimitAnswer when it went beyond its
// filter's limit (false otherwise), with the fresh events first…last of
// the answer as it came (before r.hold trims it); read excess after hold.
func overLimitOf(r *queryRecord, fresh *Fresh, first, last int) (overLimitAnswer, bool) {
	if fresh == nil || r.ended != "eose" || r.filter.Limit <= 0 || len(r.raws) <= r.filter.Limit {
		return overLimitAnswer{}, false
	}
	a := overLimitAnswer{sent: r.sent}
	for _, raw := range r.raws {
		n, ok := fresh.Index(raw)
		if ok && n >= first && n <= last && !slices.Contains(a.fresh, n) {
			a.fresh = append(a.fresh, n)
		}
	}
	return a, true
}

// stillPublishing counts the events beyond their filter's limit that are
// explained by events still being published when the REQ was sent (their
// OK, okRecv by fresh number, had not come back, or never did): the relay
// may have stored them after the REQ reached it and sent them as live
// events before its EOSE. At most an answer's own excess each.
func stillPublishing(answers []overLimitAnswer, okRecv []int64) int64 {
	var total int64
	for _, a := range answers {
		var n int64
		for _, k := range a.fresh {
			if k < len(okRecv) && (okRecv[k] == 0 || okRecv[k] > a.sent) {
				n++
			}
		}
		total += min(n, a.over)
	}
	return total
}

// mixedOverLimitNote replaces verification's note on events beyond their
// filter's limit (verify.OverLimitNote or OverLimitCheckedNote of over) in
// notes with one that says how many of them (live) were still being
// published when their REQ was sent, and what that means: live events before EOSE, not stored events
// beyond `limit`; with none live, verify.OverLimitCheckedNote (the
// queries' answers had no expected set). Neither fails the run.
func mixedOverLimitNote(notes []string, over, live int64) []string {
	i := slices.Index(notes, verify.OverLimitNote(over))
	if i < 0 {
		i = slices.Index(notes, verify.OverLimitCheckedNote(over))
	}
	if i < 0 {
		return notes
	}
	if live <= 0 {
		// The queries' answers had no expected set (only the read-back
		// had): none was judged against one.
		notes[i] = verify.OverLimitCheckedNote(over)
		return notes
	}
	live = min(live, over)
	const why = "no OK yet, so the relay may have stored them after the REQ and sent them live on the open subscription before its EOSE (NIP-01: EOSE marks \"the end of stored events and the beginning of events newly received in real-time\"; `limit` applies to \"the initial query\"; no MUST forbids live events before EOSE)"
	s := fmt.Sprintf("%s came back beyond their filter's limit, all of them events still being published when their REQ was sent: %s; not failed", numfmt.Count(over, "event"), why)
	if live < over {
		s = fmt.Sprintf("%s came back beyond their filter's limit: %s of them events still being published when their REQ was sent (%s; not failed), the other %s stored events beyond the limit (NIP-01 SHOULD, not failed: %q)", numfmt.Count(over, "event"), numfmt.Group(live), why, numfmt.Group(over-live), verify.LimitSentence)
	}
	notes[i] = s + "; every event of these answers was still checked for validity, filter match and duplicates"
	return notes
}
