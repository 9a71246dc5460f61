package verify

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
)

// notes (kind 1, author P) a1..a5 at 101..105, accepted.
func fiveNotes() []*nostr.Event {
	var evs []*nostr.Event
	for i := 1; i <= 5; i++ {
		evs = append(evs, ev("a"+string(rune('0'+i)), "P", 1, int64(100+i)))
	}
	return evs
}

// judgeOne judges one answer alone.
func judgeOne(f nostr.Filter, evs []*nostr.Event, m *Model) (results.Verification, *Judgement) {
	j := Judge([]Reply{{Filter: &f, Events: evs}}, m, 0, false)
	return j.Answers[0], j
}

func wantCounts(t *testing.T, what string, v results.Verification, missing, extra int64) {
	t.Helper()
	if v.Missing != missing || v.Extra != extra {
		t.Errorf("%s: missing %d extra %d, want %d and %d (notes %q)", what, v.Missing, v.Extra, missing, extra, v.Notes)
	}
}

// An event whose OK never came and that an answer returns was stored after
// all: it is neither extra nor does it make the events it pushes out of the
// limit missing. Judged as refused (the model without unknowns), the same
// answer fails.
func TestUnknownSeenIsStoredAfterAll(t *testing.T) {
	acc := fiveNotes()
	u := ev("u6", "P", 1, 106)
	f := nostr.Filter{Kinds: []int{1}, Limit: 3}
	answer := []*nostr.Event{u, acc[4], acc[3]}
	v, j := judgeOne(f, answer, NewModelUnknown(acc, []*nostr.Event{u}))
	wantCounts(t, "unknown stored", v, 0, 0)
	if j.StoredAfterAll != 1 || j.Unknown != 1 {
		t.Errorf("stored after all %d of %d, want 1 of 1", j.StoredAfterAll, j.Unknown)
	}
	var total results.Verification
	j.Apply(&total)
	if total.StoredUnknown != 1 || len(total.Notes) != 1 || !strings.HasPrefix(total.Notes[0], "1 events whose OK never came") {
		t.Errorf("stored_unknown %d, notes %q", total.StoredUnknown, total.Notes)
	}
	old, _ := judgeOne(f, answer, NewModel(acc))
	wantCounts(t, "unknown taken as not stored", old, 1, 1)
}

// An unknown event never returned is not owed: the relay may not have it.
func TestUnknownUnseenIsNotOwed(t *testing.T) {
	acc := fiveNotes()
	m := NewModelUnknown(acc, []*nostr.Event{ev("u6", "P", 1, 106)})
	v, j := judgeOne(nostr.Filter{Kinds: []int{1}, Limit: 3}, []*nostr.Event{acc[4], acc[3], acc[2]}, m)
	wantCounts(t, "unknown not stored", v, 0, 0)
	if j.StoredAfterAll != 0 || j.Unknown != 1 {
		t.Errorf("stored after all %d of %d, want 0 of 1", j.StoredAfterAll, j.Unknown)
	}
}

// A relay still working through its queue stores an unknown event between
// two answers: the answer sent before holds the newest accepted events, the
// one after holds the unknown event too. Neither is wrong: an answer is
// judged with the unknown events it returned, not with those another
// answer returned.
func TestUnknownStoredBetweenAnswers(t *testing.T) {
	acc := fiveNotes()
	u := ev("u6", "P", 1, 106)
	f := nostr.Filter{Kinds: []int{1}, Limit: 3}
	before := Reply{Filter: &f, Events: []*nostr.Event{acc[4], acc[3], acc[2]}}
	after := Reply{Filter: &f, Events: []*nostr.Event{u, acc[4], acc[3]}}
	j := Judge([]Reply{before, after}, NewModelUnknown(acc, []*nostr.Event{u}), 0, false)
	wantCounts(t, "answer before the unknown event was stored", j.Answers[0], 0, 0)
	wantCounts(t, "answer after", j.Answers[1], 0, 0)
	if j.StoredAfterAll != 1 {
		t.Errorf("stored after all %d, want 1", j.StoredAfterAll)
	}
	// The second answer still owes what no unknown event can push out.
	late := Reply{Filter: &f, Events: []*nostr.Event{u, acc[3]}}
	j = Judge([]Reply{before, late}, NewModelUnknown(acc, []*nostr.Event{u}), 0, false)
	wantCounts(t, "answer after, a5 left out", j.Answers[1], 1, 0)
}

// An accepted event that stays among the newest `limit` even if every
// unknown event was stored is owed, whether or not an unknown event came
// back; an answer too short for the smallest store fails.
func TestUnknownDoesNotExcuseOwedEvents(t *testing.T) {
	acc := fiveNotes()
	u := ev("u6", "P", 1, 106)
	f := nostr.Filter{Kinds: []int{1}, Limit: 3}
	cases := []struct {
		name           string
		answer         []*nostr.Event
		missing, extra int64
	}{
		{"unknown returned, a4 left out", []*nostr.Event{u, acc[4]}, 1, 0},
		{"unknown returned, a4 replaced by older a3", []*nostr.Event{u, acc[4], acc[2]}, 1, 1},
		{"a4 left out, unknown not stored", []*nostr.Event{acc[4], acc[2]}, 1, 0},
		{"too few: one of three", []*nostr.Event{acc[4]}, 2, 0},
		{"nothing", nil, 3, 0},
	}
	for _, c := range cases {
		v, _ := judgeOne(f, c.answer, NewModelUnknown(acc, []*nostr.Event{u}))
		wantCounts(t, c.name, v, c.missing, c.extra)
	}
}

// At a cut-off tie, an unseen unknown event tied there may take a place;
// the answer must still fill the places the accepted events owe.
func TestUnknownTiesAtCut(t *testing.T) {
	d := ev("d", "P", 1, 101)
	a, b := ev("a", "P", 1, 100), ev("b", "P", 1, 100)
	u := ev("0u", "P", 1, 100) // tied, lowest id
	m := func() *Model { return NewModelUnknown([]*nostr.Event{d, a, b}, []*nostr.Event{u}) }
	f := nostr.Filter{Kinds: []int{1}, Limit: 2}
	for _, c := range []struct {
		name           string
		answer         []*nostr.Event
		missing, extra int64
	}{
		{"accepted tie", []*nostr.Event{d, b}, 0, 0},
		{"unknown at the tie", []*nostr.Event{d, u}, 0, 0},
		{"one short", []*nostr.Event{d}, 1, 0},
		{"newest left out (two tied for one place: not extra)", []*nostr.Event{a, b}, 1, 0},
	} {
		v, _ := judgeOne(f, c.answer, m())
		wantCounts(t, c.name, v, c.missing, c.extra)
	}
}

// A replaceable event an unseen unknown version would supersede is not
// owed; one an accepted newer version supersedes is never live. When the
// newer unknown version falls outside the filter, the older one or the next
// event must still fill the limit.
func TestUnknownSupersedesReplaceable(t *testing.T) {
	k1 := ev("k1", "A", 0, 130)
	n1 := ev("n1", "A", 1, 120)
	k2 := ev("k2", "A", 0, 200) // unknown, newer version of k1
	m := func() *Model { return NewModelUnknown([]*nostr.Event{k1, n1}, []*nostr.Event{k2}) }
	meta := nostr.Filter{Kinds: []int{0}, Authors: []string{"A"}}
	for _, c := range []struct {
		name           string
		f              nostr.Filter
		answer         []*nostr.Event
		missing, extra int64
	}{
		{"old version, unknown not stored", meta, []*nostr.Event{k1}, 0, 0},
		{"new version stored after all", meta, []*nostr.Event{k2}, 0, 0},
		// Either version is owed, neither certainly: not counted.
		{"nothing (which version is owed is unknown)", meta, nil, 0, 0},
		{"window excludes the new version: next event", nostr.Filter{Authors: []string{"A"}, Until: ptr(150), Limit: 1}, []*nostr.Event{n1}, 0, 0},
		{"window excludes the new version: old version", nostr.Filter{Authors: []string{"A"}, Until: ptr(150), Limit: 1}, []*nostr.Event{k1}, 0, 0},
		{"window excludes the new version: nothing", nostr.Filter{Authors: []string{"A"}, Until: ptr(150), Limit: 1}, nil, 1, 0},
		{"both versions", meta, []*nostr.Event{k2, k1}, 0, 1},
	} {
		v, _ := judgeOne(c.f, c.answer, m())
		if c.name == "both versions" {
			// Latest only fails it; keeping superseded versions fits it.
			f := c.f
			j := Judge([]Reply{{Filter: &f, Events: c.answer}}, m(), 0, false)
			if j.Reading != KeepsSuperseded || !j.Consistent {
				t.Errorf("%s: reading %v consistent %v", c.name, j.Reading, j.Consistent)
			}
			v = AnswerAs(&f, c.answer, 0, m(), 0, LatestOnly)
		}
		wantCounts(t, c.name, v, c.missing, c.extra)
	}
}

// More than `limit` events is a SHOULD: counted, named, not failed; the
// newest `limit` of the answer are judged.
func TestOverLimitNamedNotFailed(t *testing.T) {
	acc := fiveNotes()
	m := NewModel(acc)
	f := nostr.Filter{Kinds: []int{1}, Limit: 2}
	for _, c := range []struct {
		name                 string
		answer               []*nostr.Event
		missing, extra, over int64
		pass                 bool
	}{
		{"three for two", []*nostr.Event{acc[4], acc[3], acc[2]}, 0, 0, 1, true},
		{"all, oldest first", []*nostr.Event{acc[0], acc[1], acc[2], acc[3], acc[4]}, 0, 0, 3, true},
		{"three, the newest two not all there", []*nostr.Event{acc[4], acc[2], acc[1]}, 1, 1, 1, false},
		{"within limit, too few", []*nostr.Event{acc[4]}, 1, 0, 0, false},
	} {
		v, _ := judgeOne(f, c.answer, m)
		wantCounts(t, c.name, v, c.missing, c.extra)
		Finish(&v)
		if v.OverLimit != c.over || v.Passed != c.pass {
			t.Errorf("%s: over_limit %d passed %v, want %d and %v", c.name, v.OverLimit, v.Passed, c.over, c.pass)
		}
		if c.over > 0 && !strings.Contains(strings.Join(v.Notes, "\n"), "Relays SHOULD use the `limit` value") {
			t.Errorf("%s: no note quoting NIP-01: %q", c.name, v.Notes)
		}
	}
	// Beyond the limit, events are still checked for validity, filter match
	// and duplicates.
	v, _ := judgeOne(f, []*nostr.Event{acc[4], acc[3], ev("x", "P", 7, 99), acc[3]}, m)
	if v.NotMatching != 1 || v.Duplicated != 1 {
		t.Errorf("not matching %d duplicated %d, want 1 and 1", v.NotMatching, v.Duplicated)
	}
}

// With no unknown event, a model built with NewModelUnknown judges like
// NewModel on every filter, cap and answer.
func TestNoUnknownSameAsBefore(t *testing.T) {
	acc := fiveNotes()
	for _, f := range []nostr.Filter{{Kinds: []int{1}, Limit: 2}, {Kinds: []int{1}}, {IDs: []string{"a1", "a3"}, Limit: 1}} {
		for _, ans := range [][]*nostr.Event{nil, acc, {acc[0]}, {acc[4], acc[3]}} {
			a := AnswerAs(&f, ans, 0, NewModel(acc), 0, LatestOnly)
			b := AnswerAs(&f, ans, 0, NewModelUnknown(acc, nil), 0, LatestOnly)
			if a.Missing != b.Missing || a.Extra != b.Extra || a.Expected != b.Expected {
				t.Errorf("filter %v answer %d: %+v vs %+v", f, len(ans), a, b)
			}
		}
	}
}

func ptr(n int64) *int64 { return &n }

// A count may lie between the accepted matches certainly live and those
// plus every unknown event; a replace key counts once.
func TestCountRange(t *testing.T) {
	acc := append(fiveNotes(), ev("k1", "A", 0, 130))
	unknown := []*nostr.Event{ev("u6", "P", 1, 106), ev("k2", "A", 0, 200), ev("k3", "A", 0, 210)}
	m := NewModelUnknown(acc, unknown)
	for _, c := range []struct {
		f             nostr.Filter
		r             Reading
		owed, allowed int
		what          string
	}{
		{nostr.Filter{Kinds: []int{1}}, LatestOnly, 5, 6, "notes"},
		{nostr.Filter{Kinds: []int{0}}, LatestOnly, 0, 1, "one replace key, its accepted version threatened"},
		{nostr.Filter{Kinds: []int{0}}, KeepsSuperseded, 1, 3, "every version kept"},
		{nostr.Filter{Kinds: []int{0}, Until: ptr(150)}, LatestOnly, 0, 1, "the newer versions fall outside"},
	} {
		owed, allowed := m.CountRange(&c.f, c.r)
		if owed != c.owed || allowed != c.allowed {
			t.Errorf("%s: [%d, %d], want [%d, %d]", c.what, owed, allowed, c.owed, c.allowed)
		}
	}
	if o, a := NewModel(acc).CountRange(&nostr.Filter{Kinds: []int{1}}, LatestOnly); o != 5 || a != 5 {
		t.Errorf("no unknown: [%d, %d], want [5, 5]", o, a)
	}
}

// Whatever subset of the unknown events a relay stored, its exact answers
// (the newest `limit` of what it holds), or every match in any order
// (over the limit), are never counted missing or extra: checked on random
// small stores with ties and replaceable events.
func TestUnknownNeverBlamesACorrectStore(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	evN := 0
	mk := func() *nostr.Event {
		evN++
		kind := []int{1, 1, 0, 3}[rng.IntN(4)]
		return ev(fmt.Sprintf("%03d", rng.IntN(1000))+fmt.Sprint(evN), []string{"A", "B"}[rng.IntN(2)], kind, int64(100+rng.IntN(6)))
	}
	for round := 0; round < 400; round++ {
		var acc, unknown []*nostr.Event
		for range 3 + rng.IntN(6) {
			acc = append(acc, mk())
		}
		for range 1 + rng.IntN(3) {
			unknown = append(unknown, mk())
		}
		var filters []nostr.Filter
		for range 4 {
			f := nostr.Filter{Limit: rng.IntN(5)}
			switch rng.IntN(4) {
			case 0:
				f.Kinds = []int{1}
			case 1:
				f.Authors = []string{"A"}
			case 2:
				f.Kinds = []int{0, 3}
			}
			if rng.IntN(3) == 0 {
				f.Until = ptr(int64(102 + rng.IntN(3)))
			}
			filters = append(filters, f)
		}
		m := NewModelUnknown(acc, unknown)
		for s := 0; s < 1<<len(unknown); s++ {
			store := append([]*nostr.Event(nil), acc...)
			for i, u := range unknown {
				if s&(1<<i) != 0 {
					store = append(store, u)
				}
			}
			truth := NewModel(store)
			var replies []Reply
			for i := range filters {
				exact, _ := truth.Expected(&filters[i], 0)
				replies = append(replies, Reply{Filter: &filters[i], Events: exact})
			}
			// The same store answering every match, whatever the limit
			// (a SHOULD): only over_limit.
			var over []Reply
			for i := range filters {
				f := filters[i]
				f.Limit = 0
				every, _ := truth.Expected(&f, 0)
				rng.Shuffle(len(every), func(a, b int) { every[a], every[b] = every[b], every[a] })
				over = append(over, Reply{Filter: &filters[i], Events: every})
			}
			for _, rs := range [][]Reply{replies, over} {
				j := Judge(rs, m, 0, false)
				for i, v := range j.Answers {
					if v.Missing != 0 || v.Extra != 0 {
						t.Fatalf("round %d, store with unknown subset %b, filter %s: missing %d extra %d (%q)\naccepted %v\nunknown %v\nanswer %v",
							round, s, filters[i].AppendJSON(nil), v.Missing, v.Extra, v.Notes, show(acc), show(unknown), show(rs[i].Events))
					}
				}
			}
		}
	}
}

func show(evs []*nostr.Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%s(%s k%d t%d) ", e.ID, e.PubKey, e.Kind, e.CreatedAt)
	}
	return b.String()
}
