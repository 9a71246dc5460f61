package verify

import (
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
)

// Trim makes a complete answer to f small enough to hold until the phase's
// answers are judged together, as soon as it arrives. An answer with more
// events than the newest min(limit, relayCap) that are judged against the
// expected set (see answer) keeps only those; every other event is checked
// now, for validity, filter match and duplicates (MUST), and counted in
// excess (returned, invalid, not matching, duplicated, and over_limit for
// the valid matching events beyond `limit`). Add excess to the answer's
// verification. An answer within its limit, or to a filter without one,
// is returned as it is, and excess is zero: a relay that ignores `limit`
// can no longer make the client hold every answer whole until the end.
func (c *Checker) Trim(f *nostr.Filter, raws [][]byte, relayCap int) (kept [][]byte, excess results.Verification) {
	keep := keepOf(f, relayCap)
	if keep < 0 || len(raws) <= keep {
		return raws, excess
	}
	type good struct {
		i int
		e *nostr.Event
	}
	valid := make([]good, 0, keep+1)
	seen := make(map[string]struct{}, len(raws))
	for i, raw := range raws {
		e, ok := c.Check(raw)
		switch {
		case !ok:
			excess.Invalid++
		case !f.Matches(e):
			excess.NotMatching++
		default:
			if _, dup := seen[e.ID]; dup {
				excess.Duplicated++
				continue
			}
			seen[e.ID] = struct{}{}
			valid = append(valid, good{i, e})
		}
	}
	if f.Limit > 0 && len(valid) > f.Limit {
		excess.OverLimit = int64(len(valid) - f.Limit)
	}
	chosen := make(map[int]bool, keep)
	if len(valid) > keep {
		evs := make([]*nostr.Event, len(valid))
		at := make(map[*nostr.Event]int, len(valid))
		for k, g := range valid {
			evs[k], at[g.e] = g.e, g.i
		}
		for _, e := range newestFirst(evs, keep) {
			chosen[at[e]] = true
		}
	} else {
		for _, g := range valid {
			chosen[g.i] = true
		}
	}
	kept = make([][]byte, 0, len(chosen))
	for i, raw := range raws {
		if chosen[i] {
			kept = append(kept, raw)
		}
	}
	excess.Returned = int64(len(raws) - len(kept))
	return kept, excess
}
