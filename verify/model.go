package verify

import (
	"sync"

	"github.com/relaybench/relaybench/nostr"
)

// Model is what a relay that follows NIP-01 should hold after accepting a
// set of events, in either reading of the store (see Reading): every
// accepted event, except, when only the latest version is kept, replaceable
// events (kinds 0, 3, 10000–19999 per pubkey and kind; 30000–39999 per
// pubkey, kind and d tag) superseded by a newer accepted one (on equal
// created_at the lower id stays). Query expectations are computed from it.
type Model struct {
	Live       []*nostr.Event          // latest only: events a query may return, newest first
	All        []*nostr.Event          // keeps superseded versions: every accepted event, newest first
	byID       map[string]*nostr.Event // every accepted event
	superseded map[string]bool         // accepted but replaced
	// Unknown are the events sent without a decisive answer (see
	// NewModelUnknown), newest first: neither owed nor forbidden.
	Unknown []*nostr.Event
	unknown map[string]*nostr.Event // Unknown by id
	// Prior says the relay may hold events this run never published: a
	// probe before the run found some, or could not tell (see prior.go).
	// Such events in an answer are the relay's earlier data, judged stored
	// (as an unknown event an answer returned), not extra, and an accepted
	// replaceable event is never certainly owed under the latest-only
	// reading (a newer version may be among them). False: an event the
	// run never published is extra.
	Prior bool
	// NoForeign, with Prior: the answers hold no earlier data (the caller
	// took out the events the run never sent), so an event of theirs the
	// run neither had accepted nor sent without a decisive answer was
	// refused; Prior then only makes accepted replaceable events threats.
	NoForeign bool
	refused   map[string]bool // ids the run sent and the relay refused (SetRefused)
	replOnce  sync.Once       // replaceableLive
	repl      []*nostr.Event
}

// Reading is how a relay treats the older versions of a replaceable or
// addressable event. NIP-01: "only the latest event MUST be stored by
// relays, older versions MAY be discarded", so both readings are allowed.
type Reading int

// The two readings of the store.
const (
	LatestOnly      Reading = iota // a newer version hides the older ones from queries
	KeepsSuperseded                // every accepted version stays queryable
)

func (r Reading) String() string {
	if r == KeepsSuperseded {
		return "keeps superseded versions"
	}
	return "latest only"
}

// events is the set a query may return under reading r, newest first.
func (m *Model) events(r Reading) []*nostr.Event {
	if r == KeepsSuperseded {
		return m.All
	}
	return m.Live
}

// NewModel builds the model from accepted events.
func NewModel(accepted []*nostr.Event) *Model {
	m := &Model{byID: make(map[string]*nostr.Event, len(accepted)), superseded: map[string]bool{}}
	winners := map[string]*nostr.Event{}
	for _, e := range accepted {
		if _, dup := m.byID[e.ID]; dup {
			continue // the same event twice must not supersede itself
		}
		m.byID[e.ID] = e
		contend(winners, e, m.superseded)
	}
	for _, e := range m.byID {
		m.All = append(m.All, e)
	}
	nostr.SortNewestFirst(m.All)
	for _, e := range m.All {
		if !m.superseded[e.ID] {
			m.Live = append(m.Live, e)
		}
	}
	return m
}

// Accepted reports whether id was accepted, and whether it was since replaced.
func (m *Model) Accepted(id string) (accepted, replaced bool) {
	_, ok := m.byID[id]
	return ok, m.superseded[id]
}

// Expected returns the events a relay that keeps only the latest version
// should return for f, newest first, given a per-REQ cap (0: none). It also
// returns every live match (uncapped).
func (m *Model) Expected(f *nostr.Filter, relayCap int) (capped, all []*nostr.Event) {
	return m.ExpectedAs(f, relayCap, LatestOnly)
}

// ExpectedAs is Expected under reading r: with KeepsSuperseded, superseded
// versions match too and count towards the limit and the cap.
func (m *Model) ExpectedAs(f *nostr.Filter, relayCap int, r Reading) (capped, all []*nostr.Event) {
	if len(f.IDs) > 0 {
		all = m.byIDs(f, r)
	} else {
		for _, e := range m.events(r) {
			if f.Matches(e) {
				all = append(all, e)
			}
		}
	}
	n := len(all)
	if f.Limit > 0 && f.Limit < n {
		n = f.Limit
	}
	if relayCap > 0 && relayCap < n {
		n = relayCap
	}
	return all[:n], all
}

// ExpectedCount is ExpectedAs without the list of every match: the capped
// expectation and how many events match in all. A broad filter over millions
// of accepted events would otherwise build a slice of them per answer, only
// to be counted (garbage that lets the heap grow to twice the model's size).
func (m *Model) ExpectedCount(f *nostr.Filter, relayCap int, r Reading) (capped []*nostr.Event, total int) {
	c := capCount{f: f, keep: keepOf(f, relayCap)}
	if len(f.IDs) > 0 {
		return c.of(m.byIDs(f, r))
	}
	for _, e := range m.events(r) {
		c.add(e)
	}
	return c.capped, c.total
}

// capCount keeps the first keep (-1: all) of the events given to it that
// match f, and counts every match.
type capCount struct {
	f      *nostr.Filter
	keep   int
	capped []*nostr.Event
	total  int
}

func (c *capCount) add(e *nostr.Event) {
	if c.f.Matches(e) {
		if c.keep < 0 || c.total < c.keep {
			c.capped = append(c.capped, e)
		}
		c.total++
	}
}

// of is the capped list and the count of all, matches already.
func (c *capCount) of(all []*nostr.Event) ([]*nostr.Event, int) {
	if c.keep >= 0 && c.keep < len(all) {
		return all[:c.keep], len(all)
	}
	return all, len(all)
}

// byIDs is the match of a filter with ids, found by id rather than by
// scanning every event, newest first.
func (m *Model) byIDs(f *nostr.Filter, r Reading) []*nostr.Event {
	return matchIDs(f, func(id string) (*nostr.Event, bool) {
		e, ok := m.byID[id]
		return e, ok && !(r == LatestOnly && m.superseded[id])
	})
}

// matchIDs is the match of a filter with ids among the events get finds
// (false: none, or not to be returned), newest first.
func matchIDs(f *nostr.Filter, get func(id string) (*nostr.Event, bool)) []*nostr.Event {
	var out []*nostr.Event
	seen := make(map[string]bool, len(f.IDs))
	for _, id := range f.IDs {
		if seen[id] {
			continue
		}
		if e, ok := get(id); ok && f.Matches(e) {
			seen[id] = true
			out = append(out, e)
		}
	}
	nostr.SortNewestFirst(out)
	return out
}

// contend enters e under its replace key (if it has one) in winners: of e
// and the version there, the older one is marked in lost.
func contend(winners map[string]*nostr.Event, e *nostr.Event, lost map[string]bool) {
	k, ok := replaceKey(e)
	if !ok {
		return
	}
	if w, exists := winners[k]; exists && w != e {
		if newer(e, w) {
			lost[w.ID] = true
			winners[k] = e
		} else {
			lost[e.ID] = true
		}
		return
	}
	winners[k] = e
}

func newer(a, b *nostr.Event) bool {
	if a.CreatedAt != b.CreatedAt {
		return a.CreatedAt > b.CreatedAt
	}
	return a.ID < b.ID
}

// ReplaceKey is the key under which a replaceable or addressable event
// replaces older ones (pubkey, kind and, for addressable kinds, the d tag);
// false for other events.
func ReplaceKey(e *nostr.Event) (string, bool) { return replaceKey(e) }

func replaceKey(e *nostr.Event) (string, bool) {
	switch {
	case e.Kind == 0 || e.Kind == 3 || (e.Kind >= 10000 && e.Kind < 20000):
		return e.PubKey + ":" + itoa(e.Kind), true
	case e.Kind >= 30000 && e.Kind < 40000:
		return e.PubKey + ":" + itoa(e.Kind) + ":" + e.TagValue("d"), true
	}
	return "", false
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
