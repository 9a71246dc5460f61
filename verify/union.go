package verify

import (
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
)

// filters is the reply's filters: Filters when given, else Filter alone.
func (r Reply) filters() []*nostr.Filter {
	if len(r.Filters) > 0 {
		return r.Filters
	}
	return []*nostr.Filter{r.Filter}
}

// matchesAny reports whether e matches one of fs.
func matchesAny(fs []*nostr.Filter, e *nostr.Event) bool {
	for _, f := range fs {
		if f.Matches(e) {
			return true
		}
	}
	return false
}

// judge checks the reply between bounds b (see answer): one filter as
// answer does, several as answerUnion does.
func (r Reply) judge(b bounds, relayCap int, rd Reading) results.Verification {
	if fs := r.filters(); len(fs) > 1 {
		return answerUnion(fs, r.Events, r.Invalid, b, relayCap, rd)
	}
	return answer(r.filters()[0], r.Events, r.Invalid, b, relayCap, rd)
}

// newestSet is the ids of the newest n of evs (all of them when n < 0).
func newestSet(evs []*nostr.Event, n int) map[string]bool {
	if n >= 0 && len(evs) > n {
		evs = newestFirst(evs, n)
	}
	out := make(map[string]bool, len(evs))
	for _, e := range evs {
		out[e.ID] = true
	}
	return out
}

// answerUnion checks one answer to a REQ of several filters. NIP-01: a REQ
// may hold several filters, their conditions OR'd: the answer owes the
// union of what each filter owes (each filter's newest min(its limit, cap)
// matches), each event once. An event returned twice is duplicated; one
// matching no filter is not matching; among the rest, only those within
// the newest min(limit, cap) of some filter they match are judged against
// the expected sets (the others are over limit, a SHOULD): right when some
// filter owes it, else extra. Missing counts only what is certainly owed
// and absent: the larger of the union of each filter's certainly missing
// events and any one filter's count (see owedMissing). Order across the
// filters of one REQ is not checked: NIP-01 orders the answer to a filter.
func answerUnion(fs []*nostr.Filter, evs []*nostr.Event, invalid int64, b bounds, relayCap int, r Reading) results.Verification {
	v := results.Verification{Invalid: invalid, Checked: 1, Returned: int64(len(evs)) + invalid, Verified: b.lo != nil}
	per, kept := unionSplit(&v, fs, evs)
	judged := map[string]bool{} // within the newest min(limit, cap) of a filter it matches
	withinLimit := map[string]bool{}
	for i, f := range fs {
		for id := range newestSet(per[i], keepOf(f, relayCap)) {
			judged[id] = true
		}
		lim := -1
		if f.Limit > 0 {
			lim = f.Limit
		}
		for id := range newestSet(per[i], lim) {
			withinLimit[id] = true
		}
	}
	v.OverLimit = int64(len(kept) - len(withinLimit))
	if b.lo == nil {
		return v
	}
	exps := make([][]*nostr.Event, len(fs))
	alls, cuts := make([]int, len(fs)), make([]int64, len(fs))
	owed := map[string]bool{}
	for i, f := range fs {
		exps[i], alls[i] = b.min.expectedCount(f, relayCap, r)
		cuts[i] = cutOf(exps[i], alls[i])
		if relayCap > 0 && len(exps[i]) < alls[i] && (f.Limit == 0 || relayCap < f.Limit) {
			v.Truncated = 1
		}
		for _, e := range exps[i] {
			owed[e.ID] = true
		}
	}
	v.Expected = int64(len(owed))
	for id := range owed {
		if b.lo.m.Foreign(id) {
			v.Expected-- // earlier data: not the run's (see priorCount)
		}
	}
	gots := make([]map[string]int64, len(fs))
	for i := range gots {
		gots[i] = map[string]int64{}
	}
	for _, e := range kept {
		if judged[e.ID] {
			unionJudge(&v, fs, cuts, gots, e, b, r)
		}
	}
	v.Missing = unionMissing(fs, b, relayCap, r, gots, exps, alls)
	if v.Missing > 0 {
		v.Notes = AppendUnique(v.Notes, "accepted events matching the filter were not returned")
	}
	return v
}

// unionSplit counts the duplicated and not matching events of an answer to
// fs on v and returns, per filter, the events matching it (first copies,
// in arrival order) and every event matching some filter once.
func unionSplit(v *results.Verification, fs []*nostr.Filter, evs []*nostr.Event) (per [][]*nostr.Event, kept []*nostr.Event) {
	per = make([][]*nostr.Event, len(fs))
	seen := make(map[string]bool, len(evs))
	for _, e := range evs {
		if seen[e.ID] {
			v.Duplicated++
			continue
		}
		seen[e.ID] = true
		hit := false
		for i, f := range fs {
			if f.Matches(e) {
				per[i], hit = append(per[i], e), true
			}
		}
		if !hit {
			v.NotMatching++
			continue
		}
		kept = append(kept, e)
	}
	return per, kept
}

// unionJudge judges one returned event of an answer to fs: right (noted in
// gots of every filter that owes it) when some filter it matches owes it,
// else extra with the reason.
func unionJudge(v *results.Verification, fs []*nostr.Filter, cuts []int64, gots []map[string]int64, e *nostr.Event, b bounds, r Reading) {
	if unowned(v, e, b, r) {
		return
	}
	right := false
	for i, f := range fs {
		if f.Matches(e) && e.CreatedAt >= cuts[i] {
			gots[i][e.ID], right = e.CreatedAt, true
		}
	}
	if !right {
		v.Extra++
		v.Notes = AppendUnique(v.Notes, "returned events older than the newest ones the limit asked for")
	}
}

// unionMissing is how many owed events an answer to fs certainly lacks:
// the union of each filter's certainly missing events (owedMissingIDs), or
// more when one filter alone is shorter (its places tied at a cut-off, or
// fewer right events than its smallest expectation).
func unionMissing(fs []*nostr.Filter, b bounds, relayCap int, r Reading, gots []map[string]int64, exps [][]*nostr.Event, alls []int) int64 {
	ids := map[string]bool{}
	most := 0
	for i, f := range fs {
		miss, short := owedMissingIDs(f, b, relayCap, r, gots[i], exps[i], alls[i])
		for _, id := range miss {
			ids[id] = true
		}
		most = max(most, len(miss)+short, len(exps[i])-len(gots[i]))
	}
	return int64(max(len(ids), most))
}

// TrimFilters is Trim for an answer to a REQ of several filters (fs; one
// filter is Trim's): it keeps the events within the newest min(limit,
// relayCap) of some filter they match, and checks and counts every other
// one in excess as Trim does (over_limit: the valid matching events beyond
// the limit of every filter they match). An answer no larger than the sum
// of what its filters may hold, or with a filter that may hold all, is
// returned as it is.
func (c *Checker) TrimFilters(fs []*nostr.Filter, raws [][]byte, relayCap int) (kept [][]byte, excess results.Verification) {
	if len(fs) == 1 {
		return c.Trim(fs[0], raws, relayCap)
	}
	bound := 0
	for _, f := range fs {
		k := keepOf(f, relayCap)
		if k < 0 {
			return raws, excess
		}
		bound += k
	}
	if len(raws) <= bound {
		return raws, excess
	}
	evs := make([]*nostr.Event, 0, len(raws))
	at := make(map[*nostr.Event]int, len(raws))
	for i, raw := range raws {
		if e, ok := c.Check(raw); ok {
			evs = append(evs, e)
			if _, dup := at[e]; !dup {
				at[e] = i // the first copy is the one kept
			}
		} else {
			excess.Invalid++
		}
	}
	v := answerUnion(fs, evs, 0, bounds{}, relayCap, LatestOnly)
	excess.NotMatching, excess.Duplicated, excess.OverLimit = v.NotMatching, v.Duplicated, v.OverLimit
	per, _ := unionSplit(&results.Verification{}, fs, evs)
	chosen := map[int]bool{}
	for i, f := range fs {
		keep := newestSet(per[i], keepOf(f, relayCap))
		for _, e := range per[i] {
			if keep[e.ID] {
				chosen[at[e]] = true
			}
		}
	}
	for i, raw := range raws {
		if chosen[i] {
			kept = append(kept, raw)
		}
	}
	excess.Returned = int64(len(raws) - len(kept))
	return kept, excess
}
