package verify

import (
	"fmt"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/nostr"
)

// Events a relay held before the run: a relay that is not empty when a run
// begins may return, in any answer, events the run never published. They
// are not wrong: NIP-01 owes a filter's every stored match. With
// Model.Prior set, such an event in an answer is judged stored, like an
// unknown event an answer returned: it takes its place among the newest
// `limit` and may supersede an accepted replaceable event. Events the run
// sent and the relay refused (SetRefused) stay extra: a relay that stored
// one it refused is wrong, whatever it held before.

// Earlier data the answers did not return may also supersede: a relay that
// held a newer version of an accepted replaceable or addressable event
// (an earlier run by the same keys) rightly hides the run's version under
// the latest-only reading, and returns neither to a filter that matches
// the run's version only (its id, a tag or a time range the newer one
// lacks). So with Prior every live replaceable event is a threat of the
// upper bound, as one an unseen unknown event could supersede: never
// certainly owed under that reading, and no expectation of extra events
// is cut at it.

// threatenReplaceable adds to hi's threats the live replaceable events of
// lo (see above).
func (hi *view) threatenReplaceable(lo *view) {
	add := func(e *nostr.Event) {
		if !hi.threatID[e.ID] {
			hi.threatID[e.ID] = true
			hi.threat = append(hi.threat, e)
		}
	}
	for _, e := range lo.m.replaceableLive() {
		if !lo.hide[e.ID] {
			add(e)
		}
	}
	for _, e := range lo.addLive {
		if _, ok := replaceKey(e); ok {
			add(e)
		}
	}
}

// replaceableLive is the live events of m with a replace key, computed once.
func (m *Model) replaceableLive() []*nostr.Event {
	m.replOnce.Do(func() {
		for _, e := range m.Live {
			if _, ok := replaceKey(e); ok {
				m.repl = append(m.repl, e)
			}
		}
	})
	return m.repl
}

// SetRefused records the ids of the events the run sent and the relay
// refused. Only a model with Prior set reads them.
func (m *Model) SetRefused(ids []string) {
	if len(ids) == 0 {
		return
	}
	m.refused = make(map[string]bool, len(ids))
	for _, id := range ids {
		m.refused[id] = true
	}
}

// Foreign reports whether id, returned in an answer, is the relay's
// earlier data: Prior is set and the run neither had it accepted, sent it
// without a decisive answer, nor had it refused.
func (m *Model) Foreign(id string) bool {
	if !m.Prior || m.NoForeign || m.refused[id] {
		return false
	}
	if _, ok := m.byID[id]; ok {
		return false
	}
	_, ok := m.unknown[id]
	return !ok
}

// priorIn is the events of replies that are the relay's earlier data
// (Foreign) and match a filter of their reply, each once, in the order
// they came. Nil unless Prior is set.
func priorIn(replies []Reply, m *Model) []*nostr.Event {
	if !m.Prior || m.NoForeign {
		return nil
	}
	var out []*nostr.Event
	seen := map[string]bool{}
	for _, r := range replies {
		for _, e := range r.Events {
			if !seen[e.ID] && m.Foreign(e.ID) && matchesAny(r.filters(), e) {
				seen[e.ID] = true
				out = append(out, e)
			}
		}
	}
	return out
}

// priorCount is how many of expected are the relay's earlier data (seen
// in the answers, so in the store the answer is judged against): they take
// their places under the limit, but Expected counts the run's own events
// only, as the merge of segments does (it knows earlier data by id only).
func priorCount(expected []*nostr.Event, b bounds) int {
	if b.lo == nil || !b.lo.m.Prior {
		return 0
	}
	n := 0
	for _, e := range expected {
		if b.lo.m.Foreign(e.ID) {
			n++
		}
	}
	return n
}

// ownExpected is how many of the run's own events answer's expectation
// owes (Expected): expected less the earlier data in it, and, under a limit
// (or the relay's cap), no more than the places the earlier data the
// answer returned left, as the merge of segments counts them (it lowers
// the limit by the earlier data an answer returned). Without Prior, every
// expected event.
func ownExpected(f *nostr.Filter, relayCap int, kept, expected []*nostr.Event, b bounds) int {
	n := len(expected) - priorCount(expected, b)
	keep := keepOf(f, relayCap)
	if b.lo == nil || !b.lo.m.Prior || keep < 0 {
		return n
	}
	returned := 0
	for _, e := range kept {
		if b.lo.m.Foreign(e.ID) {
			returned++
		}
	}
	return max(0, min(n, keep-returned))
}

// PriorNote names the n events in a judged set of answers (each answer
// counting its own) that the run never published, returned by a relay
// that held events before the run.
func PriorNote(n int) string {
	return fmt.Sprintf("%s in answers (each answer counting its own) %s this run never published: judged the relay's earlier data (it held events before the run began), stored, not extra; the run's own replaceable events were allowed but not owed (a newer version held before the run may hide them), so more can be returned than expected",
		numfmt.Count(n, "event"), map[bool]string{true: "was one", false: "were ones"}[n == 1])
}
