package verify

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
)

// replStore has three versions of P's kind 0, two of Q's addressable
// kind 30023 "x" (one "y"), and regular notes.
func replStore() []*nostr.Event {
	return []*nostr.Event{
		ev("p0a", "P", 0, 100), ev("p0b", "P", 0, 200), ev("p0c", "P", 0, 300),
		ev("n1", "P", 1, 150), ev("n2", "P", 1, 250),
		ev("qa", "Q", 30023, 120, nostr.Tag{"d", "x"}), ev("qb", "Q", 30023, 220, nostr.Tag{"d", "x"}),
		ev("qy", "Q", 30023, 130, nostr.Tag{"d", "y"}),
		ev("m1", "Q", 1, 50),
	}
}

// serve answers f from store as a well-behaved relay would: matches newest
// first, within the filter's limit and a cap (0: none).
func serve(store []*nostr.Event, f *nostr.Filter, relayCap int) []*nostr.Event {
	var out []*nostr.Event
	for _, e := range store {
		if f.Matches(e) {
			out = append(out, e)
		}
	}
	nostr.SortNewestFirst(out)
	n := len(out)
	if f.Limit > 0 && f.Limit < n {
		n = f.Limit
	}
	if relayCap > 0 && relayCap < n {
		n = relayCap
	}
	return out[:n]
}

func ids(evs []*nostr.Event) string {
	var s []string
	for _, e := range evs {
		s = append(s, e.ID)
	}
	return strings.Join(s, ",")
}

func replFilters() []*nostr.Filter {
	return []*nostr.Filter{
		{Authors: []string{"P"}, Kinds: []int{0}},
		{Authors: []string{"P"}, Limit: 3},
		{Kinds: []int{30023}},
		{Kinds: []int{1}},
		{IDs: []string{"p0a", "p0c", "n1", "zz"}},
	}
}

func TestModelBothReadings(t *testing.T) {
	m := NewModel(replStore())
	if len(m.All) != 9 || len(m.Live) != 6 {
		t.Fatalf("all %d live %d", len(m.All), len(m.Live))
	}
	for i := 1; i < len(m.All); i++ {
		if m.All[i-1].CreatedAt < m.All[i].CreatedAt {
			t.Fatal("All not newest first")
		}
	}
	for _, c := range []struct {
		f      nostr.Filter
		latest string
		keep   string
	}{
		{nostr.Filter{Authors: []string{"P"}, Kinds: []int{0}}, "p0c", "p0c,p0b,p0a"},
		// Superseded versions count towards the limit.
		{nostr.Filter{Authors: []string{"P"}, Limit: 3}, "p0c,n2,n1", "p0c,n2,p0b"},
		{nostr.Filter{Kinds: []int{30023}}, "qb,qy", "qb,qy,qa"},
		{nostr.Filter{Kinds: []int{1}}, "n2,n1,m1", "n2,n1,m1"},
		// By id: superseded ids are expected only when kept; unknown ids never.
		{nostr.Filter{IDs: []string{"p0a", "p0c", "n1", "zz", "p0a"}}, "p0c,n1", "p0c,n1,p0a"},
	} {
		l, _ := m.ExpectedAs(&c.f, 0, LatestOnly)
		k, _ := m.ExpectedAs(&c.f, 0, KeepsSuperseded)
		old, _ := m.Expected(&c.f, 0)
		if ids(l) != c.latest || ids(k) != c.keep || ids(old) != c.latest {
			t.Errorf("%+v: latest %s keep %s Expected %s; want %s / %s", c.f, ids(l), ids(k), ids(old), c.latest, c.keep)
		}
	}
	// The cap applies to both readings.
	f := nostr.Filter{Authors: []string{"P"}}
	if k, all := m.ExpectedAs(&f, 2, KeepsSuperseded); ids(k) != "p0c,n2" || len(all) != 5 {
		t.Fatalf("capped keep %s of %d", ids(k), len(all))
	}
}

// The same event accepted twice must not supersede itself.
func TestModelDuplicateAccepted(t *testing.T) {
	e := ev("p0", "P", 0, 100)
	m := NewModel([]*nostr.Event{e, e})
	if len(m.Live) != 1 || len(m.All) != 1 {
		t.Fatalf("live %d all %d", len(m.Live), len(m.All))
	}
}

func TestAnswerAsReadings(t *testing.T) {
	m := NewModel(replStore())
	f := nostr.Filter{Authors: []string{"P"}, Kinds: []int{0}}
	keep := serve(m.All, &f, 0) // p0c, p0b, p0a
	if v := AnswerAs(&f, keep, 0, m, 0, KeepsSuperseded); v.Missing != 0 || v.Extra != 0 || v.Expected != 3 {
		t.Fatalf("keep-all answer under keep-all: %+v", v)
	}
	if v := AnswerAs(&f, keep, 0, m, 0, LatestOnly); v.Missing != 0 || v.Extra != 2 {
		t.Fatalf("keep-all answer under latest-only: %+v", v)
	}
	latest := serve(m.Live, &f, 0) // p0c
	if v := AnswerAs(&f, latest, 0, m, 0, KeepsSuperseded); v.Missing != 2 || v.Extra != 0 {
		t.Fatalf("latest answer under keep-all: %+v", v)
	}
	// Under keep-all, the newest `limit` of every version: p0c, n2, p0b.
	// Returning n1 (the newest live third) instead of p0b is wrong.
	fl := nostr.Filter{Authors: []string{"P"}, Limit: 3}
	byID := map[string]*nostr.Event{}
	for _, e := range m.All {
		byID[e.ID] = e
	}
	ans := []*nostr.Event{byID["p0c"], byID["n2"], byID["n1"]}
	if v := AnswerAs(&fl, ans, 0, m, 0, KeepsSuperseded); v.Missing != 1 || v.Extra != 1 {
		t.Fatalf("limit under keep-all: %+v", v)
	}
	if v := AnswerAs(&fl, ans, 0, m, 0, LatestOnly); v.Missing != 0 || v.Extra != 0 {
		t.Fatalf("limit under latest-only: %+v", v)
	}
	// A refused (never accepted) event is extra under both readings.
	ref := ev("r1", "P", 0, 400)
	for _, rd := range []Reading{LatestOnly, KeepsSuperseded} {
		if v := AnswerAs(&f, append([]*nostr.Event{ref}, serve(m.events(rd), &f, 0)...), 0, m, 0, rd); v.Extra != 1 || v.Missing != 0 {
			t.Fatalf("%s: refused event %+v", rd, v)
		}
	}
}

// judge runs Judge and builds the phase total as the workloads do.
func judge(replies []Reply, m *Model, relayCap int) (*Judgement, results.Verification) {
	j := Judge(replies, m, relayCap, true)
	v := results.Verification{Verified: m != nil}
	for i := range j.Answers {
		Add(&v, &j.Answers[i])
	}
	j.Apply(&v)
	Finish(&v)
	return j, v
}

func replies(m *Model, store func(f *nostr.Filter) []*nostr.Event) []Reply {
	var out []Reply
	for _, f := range replFilters() {
		out = append(out, Reply{Filter: f, Events: store(f)})
	}
	return out
}

func TestJudgeLatestOnlyRelay(t *testing.T) {
	m := NewModel(replStore())
	j, v := judge(replies(m, func(f *nostr.Filter) []*nostr.Event { return serve(m.Live, f, 0) }), m, 0)
	if j.Reading != LatestOnly || !j.Consistent || !v.Passed || v.Semantics != "" {
		t.Fatalf("latest-only relay: reading %s consistent %v, %+v", j.Reading, j.Consistent, v)
	}
}

func TestJudgeKeepAllRelayPassesNamed(t *testing.T) {
	m := NewModel(replStore())
	j, v := judge(replies(m, func(f *nostr.Filter) []*nostr.Event { return serve(m.All, f, 0) }), m, 0)
	if j.Reading != KeepsSuperseded || !j.Consistent || !v.Passed || v.Missing != 0 || v.Extra != 0 {
		t.Fatalf("keep-all relay: reading %s consistent %v, %+v", j.Reading, j.Consistent, v)
	}
	if v.Semantics != "keeps superseded versions" {
		t.Fatalf("semantics %q", v.Semantics)
	}
	notes := strings.Join(v.Notes, "\n")
	if !strings.Contains(notes, "4 of 5 answers held superseded versions") || !strings.Contains(notes, "MAY") {
		t.Fatalf("notes %q", notes)
	}
	// Per group: a subset holding none gets the semantics, not the note.
	var g results.Verification
	Add(&g, &j.Answers[3])
	j.Apply(&g, 3)
	if g.Semantics != "keeps superseded versions" || len(g.Notes) != 0 {
		t.Fatalf("group %+v", g)
	}
}

// Answers with no replaceable event in play fit both readings alike: the
// reading does not matter and nothing is named.
func TestJudgeNoReplaceableInPlay(t *testing.T) {
	m := NewModel(replStore())
	f := nostr.Filter{Kinds: []int{1}}
	r := []Reply{{Filter: &f, Events: serve(m.All, &f, 0)}, {Filter: &f, Events: serve(m.All, &f, 0)}}
	j, v := judge(r, m, 0)
	if j.Reading != LatestOnly || !v.Passed || v.Semantics != "" || len(v.Notes) != 0 {
		t.Fatalf("%s %+v", j.Reading, v)
	}
}

// A relay that returns superseded versions in some answers and hides them
// in others fits neither reading: it fails.
func TestJudgeInconsistentRelayFails(t *testing.T) {
	m := NewModel(replStore())
	n := 0
	r := replies(m, func(f *nostr.Filter) []*nostr.Event {
		n++
		if n%2 == 1 {
			return serve(m.All, f, 0)
		}
		return serve(m.Live, f, 0)
	})
	j, v := judge(r, m, 0)
	if j.Consistent || v.Passed || v.Semantics != "" || v.Missing+v.Extra == 0 {
		t.Fatalf("inconsistent relay: reading %s, %+v", j.Reading, v)
	}
	// Answers 1, 3, 5 (P's kind 0, kind 30023, by id) hold superseded
	// versions: 2+1+1 extra under latest only. Answer 2 (limit 3) hides
	// p0b and returns n1 instead: 1 missing, 1 extra under keeps
	// superseded, which fits better. Answer 4 has none in play.
	if j.Reading != KeepsSuperseded || v.Missing != 1 || v.Extra != 1 {
		t.Fatalf("better reading: %s %+v", j.Reading, v)
	}
	if !strings.Contains(strings.Join(v.Notes, "\n"), "fit neither reading") {
		t.Fatalf("notes %q", v.Notes)
	}
}

// Returning a superseded version and hiding a newer one fits neither.
func TestJudgeSupersededInsteadOfNewestFails(t *testing.T) {
	m := NewModel(replStore())
	byID := map[string]*nostr.Event{}
	for _, e := range m.All {
		byID[e.ID] = e
	}
	f := nostr.Filter{Authors: []string{"P"}, Kinds: []int{0}}
	j, v := judge([]Reply{{Filter: &f, Events: []*nostr.Event{byID["p0b"]}}}, m, 0)
	if v.Passed || j.Consistent || v.Semantics != "" {
		t.Fatalf("%s %+v", j.Reading, v)
	}
	// Latest only: p0c missing, p0b extra (2); keeps superseded: p0c and
	// p0a missing (2): a tie, so latest only.
	if j.Reading != LatestOnly || v.Missing != 1 || v.Extra != 1 {
		t.Fatalf("%s %+v", j.Reading, v)
	}
	// The same with older versions next to it in other answers.
	r := replies(m, func(f *nostr.Filter) []*nostr.Event { return serve(m.All, f, 0) })
	r[0].Events = []*nostr.Event{byID["p0b"], byID["p0a"]}
	if _, v := judge(r, m, 0); v.Passed || v.Missing != 1 {
		t.Fatalf("keep-all relay hiding the newest: %+v", v)
	}
}

// A cap (announced or inferred) works under both readings: superseded
// versions count towards it.
func TestJudgeCapKeepAll(t *testing.T) {
	var store []*nostr.Event
	for i := range 12 {
		store = append(store, ev("k"+string(rune('a'+i)), "P", 10002, int64(100+i)))
	}
	store = append(store, ev("n", "P", 1, 50))
	m := NewModel(store)
	fs := []*nostr.Filter{{Authors: []string{"P"}, Limit: 20}, {Kinds: []int{10002}, Limit: 20}, {Kinds: []int{1}}}
	var r []Reply
	for _, f := range fs {
		r = append(r, Reply{Filter: f, Events: serve(m.All, f, 5)})
	}
	if c := InferCapAs(fs, [][]*nostr.Event{r[0].Events, r[1].Events, r[2].Events}, m, KeepsSuperseded); c != 5 {
		t.Fatalf("inferred cap %d under keep-all", c)
	}
	j, v := judge(r, m, 0)
	if j.Reading != KeepsSuperseded || j.Cap != 5 || !v.Passed || v.Truncated != 2 || v.Semantics == "" {
		t.Fatalf("inferred: %s cap %d %+v", j.Reading, j.Cap, v)
	}
	j, v = judge(r, m, 5)
	if j.Reading != KeepsSuperseded || j.Cap != 0 || !v.Passed || v.Truncated != 2 {
		t.Fatalf("announced: %s cap %d %+v", j.Reading, j.Cap, v)
	}
	// A latest-only relay with the same cap still reads latest only.
	r = r[:0]
	for _, f := range fs {
		r = append(r, Reply{Filter: f, Events: serve(m.Live, f, 5)})
	}
	if j, v = judge(r, m, 5); j.Reading != LatestOnly || !v.Passed || v.Semantics != "" {
		t.Fatalf("latest-only with cap: %s %+v", j.Reading, v)
	}
}

func TestJudgeNilModel(t *testing.T) {
	f := nostr.Filter{Kinds: []int{1}}
	j, v := judge([]Reply{{Filter: &f, Events: []*nostr.Event{ev("a", "P", 1, 1), ev("b", "P", 7, 2)}, Invalid: 1}}, nil, 0)
	if v.Verified || v.NotMatching != 1 || v.Invalid != 1 || v.Passed || j.Reading != LatestOnly {
		t.Fatalf("%+v", v)
	}
}
