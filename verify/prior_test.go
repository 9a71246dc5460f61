package verify

import (
	"math"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/nostr"
)

// A relay that held events before the run returns them where NIP-01 owes
// them: among the newest `limit`, in place of older events of the run.
// With Prior they are its earlier data, stored; without, extra and the
// place they took missing.
func TestPriorEventsJudgedStored(t *testing.T) {
	ours := []*nostr.Event{ev("a", "P", 1, 100), ev("b", "P", 1, 200), ev("c", "P", 1, 300)}
	old := ev("z", "Q", 1, 400) // held before the run, newer than ours
	f := nostr.Filter{Kinds: []int{1}, Limit: 3}
	answer := []*nostr.Event{old, ours[2], ours[1]}

	strict := NewModel(ours)
	j := Judge([]Reply{{Filter: &f, Events: answer}}, strict, 0, false)
	if v := j.Answers[0]; v.Extra != 1 || v.Missing != 1 {
		t.Fatalf("relay empty at the start: want the never-published event extra and its place missing, got extra %d missing %d", v.Extra, v.Missing)
	}

	m := NewModel(ours)
	m.Prior = true
	j = Judge([]Reply{{Filter: &f, Events: answer}}, m, 0, false)
	v := j.Answers[0]
	if v.Extra != 0 || v.Missing != 0 {
		t.Fatalf("relay that held events: earlier data judged wrong: extra %d missing %d notes %q", v.Extra, v.Missing, v.Notes)
	}
	if v.Expected != 2 {
		t.Fatalf("expected %d, want 2: the run's own events owed, not the earlier data in its place (as the merge counts)", v.Expected)
	}
	var total = v
	j.Apply(&total)
	if total.HeldBefore != 1 || !strings.Contains(strings.Join(total.Notes, "\n"), "earlier data") {
		t.Fatalf("held_before %d notes %q", total.HeldBefore, total.Notes)
	}

	// Still owed: the run's newest events that earlier data did not displace.
	short := []*nostr.Event{old, ours[2]}
	if v := Judge([]Reply{{Filter: &f, Events: short}}, m, 0, false).Answers[0]; v.Missing != 1 {
		t.Fatalf("an accepted event left out beside earlier data: missing %d, want 1", v.Missing)
	}
}

// An event the run sent and the relay refused is never earlier data.
func TestPriorRefusedStaysExtra(t *testing.T) {
	ours := []*nostr.Event{ev("a", "P", 1, 100)}
	refused := ev("r", "P", 1, 150)
	m := NewModel(ours)
	m.Prior = true
	m.SetRefused([]string{"r"})
	f := nostr.Filter{Kinds: []int{1}}
	v := Judge([]Reply{{Filter: &f, Events: []*nostr.Event{refused, ours[0]}}}, m, 0, false).Answers[0]
	if v.Extra != 1 {
		t.Fatalf("a refused event returned: extra %d, want 1", v.Extra)
	}
	if m.Foreign("r") || m.Foreign("a") || !m.Foreign("zz") {
		t.Fatal("Foreign: refused or accepted ids taken for earlier data, or an unknown id not")
	}
}

// Earlier data may supersede an accepted replaceable event: the older
// accepted version is then not owed.
func TestPriorSupersedes(t *testing.T) {
	ours := []*nostr.Event{ev("k0", "P", 0, 100)}
	newer := ev("k1", "P", 0, 200)
	m := NewModel(ours)
	m.Prior = true
	f := nostr.Filter{Kinds: []int{0}, Authors: []string{"P"}}
	if v := Judge([]Reply{{Filter: &f, Events: []*nostr.Event{newer}}}, m, 0, false).Answers[0]; v.Missing != 0 || v.Extra != 0 {
		t.Fatalf("a newer earlier version in place of ours: missing %d extra %d", v.Missing, v.Extra)
	}
}

// A count on a relay that held events is judged only from below.
func TestPriorCountRange(t *testing.T) {
	ours := []*nostr.Event{ev("a", "P", 1, 100), ev("b", "P", 1, 200), ev("k", "P", 0, 300)}
	m := NewModel(ours)
	f := nostr.Filter{Authors: []string{"P"}}
	if lo, hi := m.CountRange(&f, LatestOnly); lo != 3 || hi != 3 {
		t.Fatalf("empty at the start: range [%d, %d], want [3, 3]", lo, hi)
	}
	m.Prior = true
	if lo, hi := m.CountRange(&f, LatestOnly); lo != 2 || hi != math.MaxInt {
		t.Fatalf("held before: range [%d, %d], want [2, max] (the replaceable one may be superseded)", lo, hi)
	}
}

// A newer version the relay held before the run, never returned, hides the
// run's accepted replaceable event from a filter only the run's version
// matches: under the latest-only reading it is not owed.
func TestPriorUnseenNewerVersion(t *testing.T) {
	ours := ev("k0", "P", 0, 100, nostr.Tag{"t", "x"})
	f := nostr.Filter{Tags: map[string][]string{"t": {"x"}}}
	strict := NewModel([]*nostr.Event{ours})
	if v := Judge([]Reply{{Filter: &f}}, strict, 0, false).Answers[0]; v.Missing != 1 {
		t.Fatalf("relay empty at the start: missing %d, want 1", v.Missing)
	}
	m := NewModel([]*nostr.Event{ours})
	m.Prior = true
	j := Judge([]Reply{{Filter: &f}}, m, 0, false)
	if v := j.Answers[0]; v.Missing != 0 || v.Extra != 0 {
		t.Fatalf("relay that held events: missing %d extra %d", v.Missing, v.Extra)
	}
	// Kept superseded versions still owe it: the reading that fits is latest only.
	if j.Reading != LatestOnly {
		t.Fatalf("reading %v", j.Reading)
	}
	// A regular event stays owed.
	n := NewModel([]*nostr.Event{ev("n1", "P", 1, 100, nostr.Tag{"t", "x"})})
	n.Prior = true
	if v := Judge([]Reply{{Filter: &f}}, n, 0, false).Answers[0]; v.Missing != 1 {
		t.Fatalf("a regular accepted event left out: missing %d, want 1", v.Missing)
	}
}

// Earlier data of a replaceable kind takes a place under the limit though
// it is no certain expectation (a newer version may hide it): Expected
// counts the run's own events the places left, as the merge does (a walk
// read Expected 1,002 for a single run, 934 merged, with 934 own events
// returned and nothing missing in both).
func TestPriorExpectedCountsTheOwnPlaces(t *testing.T) {
	ours := []*nostr.Event{ev("a", "P", 1, 100), ev("b", "P", 1, 200), ev("c", "P", 1, 300)}
	old := ev("z", "Q", 0, 400) // held before the run: a replaceable event, newer than ours
	m := NewModel(ours)
	m.Prior = true
	f := nostr.Filter{Kinds: []int{0, 1}, Limit: 3}
	v := Judge([]Reply{{Filter: &f, Events: []*nostr.Event{old, ours[2], ours[1]}}}, m, 0, false).Answers[0]
	if v.Missing != 0 || v.Extra != 0 || v.Expected != 2 {
		t.Fatalf("missing %d extra %d expected %d, want 0, 0, 2 (the places the earlier data left)", v.Missing, v.Extra, v.Expected)
	}
}
