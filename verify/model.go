package verify

import (
	"github.com/relaybench/relaybench/nostr"
)

// Model is what a relay that follows NIP-01 should hold after accepting a
// set of events: every accepted event, except replaceable events (kinds 0, 3,
// 10000–19999 per pubkey and kind; 30000–39999 per pubkey, kind and d tag)
// superseded by a newer accepted one (on equal created_at the lower id stays).
// Query expectations are computed from it.
type Model struct {
	Live       []*nostr.Event          // events a query may return, newest first
	byID       map[string]*nostr.Event // every accepted event
	superseded map[string]bool         // accepted but replaced
}

// NewModel builds the model from accepted events.
func NewModel(accepted []*nostr.Event) *Model {
	m := &Model{byID: make(map[string]*nostr.Event, len(accepted)), superseded: map[string]bool{}}
	winners := map[string]*nostr.Event{}
	for _, e := range accepted {
		m.byID[e.ID] = e
		key, ok := replaceKey(e)
		if !ok {
			continue
		}
		if w, exists := winners[key]; exists {
			if newer(e, w) {
				m.superseded[w.ID] = true
				winners[key] = e
			} else {
				m.superseded[e.ID] = true
			}
			continue
		}
		winners[key] = e
	}
	for _, e := range accepted {
		if !m.superseded[e.ID] {
			m.Live = append(m.Live, e)
		}
	}
	nostr.SortNewestFirst(m.Live)
	return m
}

// Accepted reports whether id was accepted, and whether it was since replaced.
func (m *Model) Accepted(id string) (accepted, replaced bool) {
	_, ok := m.byID[id]
	return ok, m.superseded[id]
}

// Expected returns the events a relay should return for f, newest first,
// given a per-REQ cap (0: none). It also returns every live match (uncapped).
func (m *Model) Expected(f *nostr.Filter, relayCap int) (capped, all []*nostr.Event) {
	for _, e := range m.Live {
		if f.Matches(e) {
			all = append(all, e)
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
