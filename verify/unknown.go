package verify

import (
	"fmt"
	"math"
	"sort"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/nostr"
)

// Unknown events: sent to the relay without a decisive answer (the OK
// timed out, the connection was lost, the run was cancelled before it
// came). The relay may or may not have stored one, so it is neither owed
// nor forbidden in any later answer. A set of answers is judged between two
// bounds of the store:
//
//   - lo: the accepted events and the unknown events seen in some answer of
//     the set ("stored after all"). Extra events are judged against it: it
//     is the smallest store the answers are consistent with, so its newest
//     `limit` reach furthest back.
//   - hi: lo and every unknown event never seen. Missing events are judged
//     against it: an event of lo is certainly owed only when it stays in the
//     newest `limit` even if every unknown event was stored, and no unknown
//     event supersedes it. Unseen unknown events are never owed.
//
// With no unknown events both bounds are the model itself.

// NewModelUnknown is NewModel with the events whose publish had no decisive
// answer (unknown). An unknown event that was also accepted (sent twice) is
// accepted.
func NewModelUnknown(accepted, unknown []*nostr.Event) *Model {
	m := NewModel(accepted)
	for _, e := range unknown {
		if _, acc := m.byID[e.ID]; acc {
			continue
		}
		if _, dup := m.unknown[e.ID]; dup {
			continue
		}
		if m.unknown == nil {
			m.unknown = make(map[string]*nostr.Event, len(unknown))
		}
		m.unknown[e.ID] = e
		m.Unknown = append(m.Unknown, e)
	}
	nostr.SortNewestFirst(m.Unknown)
	return m
}

// Uncertain is the ids of the events a relay may or may not hold given the
// unknown events, whichever reading of the store it follows: every unknown
// event, and every live accepted event that an unknown event, if stored,
// would supersede (the threats of the upper bound, see widen). Neither is
// owed nor forbidden in a listing of the relay's whole set (NIP-77
// negentropy). Nil without unknown events.
func (m *Model) Uncertain() map[string]bool {
	if len(m.Unknown) == 0 {
		return nil
	}
	hi := m.bounds(nil).hi
	out := make(map[string]bool, len(m.Unknown)+len(hi.threat))
	for _, e := range m.Unknown {
		out[e.ID] = true
	}
	for _, e := range hi.threat {
		out[e.ID] = true
	}
	return out
}

// IsUnknown reports whether id was sent without a decisive answer.
func (m *Model) IsUnknown(id string) bool {
	_, ok := m.unknown[id]
	return ok
}

// view is a model with some unknown events added (one bound of the store).
// The zero overlay is the model itself.
type view struct {
	m       *Model
	add     []*nostr.Event          // added events, every version, newest first
	addLive []*nostr.Event          // added events a query may return under LatestOnly
	ids     map[string]*nostr.Event // added events by id
	hide    map[string]bool         // events (accepted or added) hidden under LatestOnly
	// threat (hi only): events of lo that an unseen unknown event, if
	// stored, would supersede: never certainly owed.
	threat   []*nostr.Event
	threatID map[string]bool
}

// with is m with the unknown events extra added as stored (nil: m itself):
// they supersede and are superseded like accepted events.
func (m *Model) with(extra []*nostr.Event) *view {
	v := &view{m: m}
	if len(extra) == 0 {
		return v
	}
	v.add = append([]*nostr.Event(nil), extra...)
	nostr.SortNewestFirst(v.add)
	v.ids = make(map[string]*nostr.Event, len(extra))
	v.hide = map[string]bool{}
	for _, e := range v.add {
		v.ids[e.ID] = e
	}
	winners := v.winners(v.add)
	for _, e := range v.add { // newest first
		contend(winners, e, v.hide)
	}
	for _, e := range v.add {
		if !v.hide[e.ID] {
			v.addLive = append(v.addLive, e)
		}
	}
	return v
}

// winners is, for the replace keys of evs, the version the view holds live
// (none: no key).
func (v *view) winners(evs []*nostr.Event) map[string]*nostr.Event {
	keys := map[string]bool{}
	authors := map[string]bool{} // to build a key only for events that may have one of keys
	for _, e := range evs {
		if k, ok := replaceKey(e); ok {
			keys[k] = true
			authors[e.PubKey] = true
		}
	}
	out := map[string]*nostr.Event{}
	if len(keys) == 0 {
		return out
	}
	for _, e := range v.m.Live {
		if !authors[e.PubKey] {
			continue
		}
		if k, ok := replaceKey(e); ok && keys[k] && !v.hide[e.ID] {
			out[k] = e
		}
	}
	for _, e := range v.addLive {
		if k, ok := replaceKey(e); ok && keys[k] {
			out[k] = e
		}
	}
	return out
}

// widen is lo with the unseen unknown events added for ranking only: the
// most events that could stand before an event of lo in any store between
// lo and lo plus them. An unseen event that a live event of lo supersedes
// can never be live; the others count, and never hide an event of lo, but
// the live events of lo they would supersede are threats (not certainly
// owed).
func (lo *view) widen(unseen []*nostr.Event) *view {
	hi := &view{m: lo.m, ids: make(map[string]*nostr.Event, len(lo.ids)+len(unseen)), hide: map[string]bool{}}
	for id, e := range lo.ids {
		hi.ids[id] = e
	}
	for id := range lo.hide {
		hi.hide[id] = true
	}
	hi.add = append(append([]*nostr.Event(nil), lo.add...), unseen...)
	nostr.SortNewestFirst(hi.add)
	winners := lo.winners(unseen)
	hi.threatID = map[string]bool{}
	for _, e := range unseen {
		hi.ids[e.ID] = e
		k, ok := replaceKey(e)
		if !ok {
			continue
		}
		if w, exists := winners[k]; exists {
			if !newer(e, w) {
				hi.hide[e.ID] = true
			} else if !hi.threatID[w.ID] {
				hi.threatID[w.ID] = true
				hi.threat = append(hi.threat, w)
			}
		}
	}
	for _, e := range hi.add {
		if !hi.hide[e.ID] {
			hi.addLive = append(hi.addLive, e)
		}
	}
	return hi
}

// narrow is lo without the threats of hi under LatestOnly: the fewest
// events that stand before an event in any store between the bounds (lo
// itself when there is no threat).
func (lo *view) narrow(hi *view) *view {
	if len(hi.threat) == 0 {
		return lo
	}
	n := &view{m: lo.m, add: lo.add, ids: lo.ids, hide: make(map[string]bool, len(lo.hide)+len(hi.threat))}
	for id := range lo.hide {
		n.hide[id] = true
	}
	for _, e := range hi.threat {
		n.hide[e.ID] = true
	}
	for _, e := range lo.addLive {
		if !n.hide[e.ID] {
			n.addLive = append(n.addLive, e)
		}
	}
	return n
}

// accepted is Model.Accepted for the view: added events count as accepted.
func (v *view) accepted(id string) (accepted, replaced bool) {
	if _, ok := v.ids[id]; ok {
		return true, v.hide[id]
	}
	acc, rep := v.m.Accepted(id)
	return acc, rep || v.hide[id]
}

// added reports whether id is one of the view's added (unknown) events.
func (v *view) added(id string) bool {
	_, ok := v.ids[id]
	return ok
}

// expectedCount is Model.ExpectedCount for the view.
func (v *view) expectedCount(f *nostr.Filter, relayCap int, r Reading) (capped []*nostr.Event, total int) {
	if len(v.add) == 0 && len(v.hide) == 0 {
		return v.m.ExpectedCount(f, relayCap, r)
	}
	c := capCount{f: f, keep: keepOf(f, relayCap)}
	if len(f.IDs) > 0 {
		return c.of(v.byIDs(f, r))
	}
	base, add := v.m.events(r), v.add
	if r == LatestOnly {
		add = v.addLive
	}
	i, j := 0, 0
	for i < len(base) || j < len(add) {
		var e *nostr.Event
		if j >= len(add) || (i < len(base) && newer(base[i], add[j])) {
			e = base[i]
			i++
			if r == LatestOnly && v.hide[e.ID] {
				continue
			}
		} else {
			e = add[j]
			j++
		}
		c.add(e)
	}
	return c.capped, c.total
}

// byIDs is Model.byIDs for the view.
func (v *view) byIDs(f *nostr.Filter, r Reading) []*nostr.Event {
	return matchIDs(f, func(id string) (*nostr.Event, bool) {
		e, ok := v.ids[id]
		if !ok {
			e, ok = v.m.byID[id]
		}
		acc, replaced := v.accepted(id)
		return e, ok && acc && !(r == LatestOnly && replaced)
	})
}

// keepOf is how many of the newest matches an answer to f may hold under a
// per-REQ cap (0: none): -1 for all.
func keepOf(f *nostr.Filter, relayCap int) int {
	keep := -1
	if f.Limit > 0 {
		keep = f.Limit
	}
	if relayCap > 0 && (keep < 0 || relayCap < keep) {
		keep = relayCap
	}
	return keep
}

// tiedUnseen counts the unknown events of hi that lo lacks (never seen),
// created at `at`, matching f and live in hi under r: events a relay that
// stored them could have put in the places tied at a cut-off.
func tiedUnseen(lo, hi *view, f *nostr.Filter, at int64, r Reading) int {
	u := hi.m.Unknown
	i := sort.Search(len(u), func(i int) bool { return u[i].CreatedAt <= at })
	n := 0
	for ; i < len(u) && u[i].CreatedAt == at; i++ {
		e := u[i]
		if lo.added(e.ID) || !hi.added(e.ID) || (r == LatestOnly && hi.hide[e.ID]) || !f.Matches(e) {
			continue
		}
		n++
	}
	return n
}

// seenUnknown is the unknown events of model that some reply returned
// (valid, matching its filter): stored after all.
func seenUnknown(replies []Reply, model *Model) []*nostr.Event {
	if len(model.unknown) == 0 {
		return nil
	}
	var out []*nostr.Event
	seen := map[string]bool{}
	for _, r := range replies {
		for _, e := range r.Events {
			if u, ok := model.unknown[e.ID]; ok && !seen[e.ID] && matchesAny(r.filters(), e) {
				seen[e.ID] = true
				out = append(out, u)
			}
		}
	}
	return out
}

// UnknownNote names the unknown events of a judged set of answers: stored
// of them were returned (stored after all), the others were neither owed
// nor counted.
func UnknownNote(stored, unknown int) string {
	if stored == 0 {
		return fmt.Sprintf("%s events whose OK never came (timed out, connection lost or cancelled) turned up in no answer: neither owed nor counted wrong (the relay may or may not have stored them)", numfmt.Group(int64(unknown)))
	}
	return fmt.Sprintf("%s events whose OK never came (timed out, connection lost or cancelled) were stored after all: they turned up in answers, each judged as accepted in the answers that returned it; the other %s were neither owed nor counted wrong (the relay may or may not have stored them)", numfmt.Group(int64(stored)), numfmt.Group(int64(unknown-stored)))
}

// newestFirst returns the n newest of evs in NIP-01's order (created_at
// descending, ties by lowest id first), leaving evs untouched.
func newestFirst(evs []*nostr.Event, n int) []*nostr.Event {
	s := append([]*nostr.Event(nil), evs...)
	nostr.SortNewestFirst(s)
	return s[:n]
}

// CountRange is how many events a count of f (NIP-45) may give under
// reading r: at least owed (the accepted events that match in every store
// the unknown events allow), at most allowed (every unknown event stored
// as well). Without unknown events both are the matches of the model.
func (m *Model) CountRange(f *nostr.Filter, r Reading) (owed, allowed int) {
	g := *f
	g.Limit = 1 // only counted: keep one match, not a list of all of them
	b := m.bounds(nil)
	_, owed = b.min.expectedCount(&g, 0, r)
	if m.Prior {
		// The relay's earlier data may add any number of matches, and
		// supersede accepted replaceable events (latest only).
		if r == LatestOnly {
			owed = b.min.countRegular(f)
		}
		return owed, math.MaxInt
	}
	if b.hi == b.min {
		return owed, owed
	}
	if r == KeepsSuperseded {
		_, allowed = b.hi.expectedCount(&g, 0, r)
		return owed, allowed
	}
	return owed, b.hi.countLatest(f)
}

// countRegular counts the matches of f in the view under LatestOnly that
// no other event can supersede (no replace key).
func (v *view) countRegular(f *nostr.Filter) int {
	n := 0
	for _, e := range v.m.Live {
		if _, ok := replaceKey(e); !ok && !v.hide[e.ID] && f.Matches(e) {
			n++
		}
	}
	for _, e := range v.addLive {
		if _, ok := replaceKey(e); !ok && f.Matches(e) {
			n++
		}
	}
	return n
}

// countLatest counts the matches of f in the view under LatestOnly, a
// replace key once however many of its versions the view holds live (hi
// holds an accepted version and the unseen newer ones: at most one of them
// is live in any store).
func (v *view) countLatest(f *nostr.Filter) int {
	n := 0
	keys := map[string]bool{}
	count := func(e *nostr.Event) {
		if !f.Matches(e) {
			return
		}
		if k, ok := replaceKey(e); ok {
			keys[k] = true
			return
		}
		n++
	}
	for _, e := range v.m.Live {
		if !v.hide[e.ID] {
			count(e)
		}
	}
	for _, e := range v.addLive {
		count(e)
	}
	return n + len(keys)
}
