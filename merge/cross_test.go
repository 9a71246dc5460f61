package merge

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
)

// crossCorpus is 40 kind-1 events, one a second, by two authors: the
// verifier needs no signatures here (the segments checked them).
func crossCorpus() []*nostr.Event {
	var evs []*nostr.Event
	for i := 0; i < 40; i++ {
		evs = append(evs, &nostr.Event{ID: fmt.Sprintf("%02x%062x", i, 0xabc), PubKey: fmt.Sprintf("%064x", i%2+1),
			CreatedAt: 1_700_000_000 + int64(i), Kind: 1})
	}
	return evs
}

// crossModel is the model of what the segments of crossFiles stored:
// every event of crossCorpus but 39.
func crossModel() *verify.Model {
	var union []*nostr.Event
	for k, e := range crossCorpus() {
		if k != 39 {
			union = append(union, e)
		}
	}
	return verify.NewModel(union)
}

// crossOptions are Merge options that rebuild the corpus as evs.
func crossOptions(evs []*nostr.Event) Options {
	return Options{Corpus: func(context.Context, *results.Run) ([]*nostr.Event, error) { return evs, nil }}
}

// crossFiles are two segments of a run: segment i published the events
// i mod 2 (segment 1's relay refused event 39) from t0 on for pubDur[i],
// then sent the queries given.
func crossFiles(evs []*nostr.Event, pubDur [2]time.Duration, answers [2][]results.Answer) []Input {
	var in []Input
	for i := 0; i < 2; i++ {
		var stored []int
		for k := i; k < len(evs); k += 2 {
			if k != 39 {
				stored = append(stored, k)
			}
		}
		f := segFile(i, 2, t0, []int64{1, 2})
		r := &f.Runs[0]
		r.Corpus.Events = len(evs)
		pub := &r.Phases[0]
		pub.Duration = int64(pubDur[i])
		pub.Stored = results.EncodeIndexSet(stored, len(evs))
		q := results.Phase{Name: "query", Workload: "query", Start: t0.Add(2 * time.Second), Duration: int64(time.Second),
			Counts:       map[string]int64{"queries": int64(len(answers[i]))},
			Groups:       []results.Group{{Name: "kind", Counts: map[string]int64{"queries": int64(len(answers[i]))}}},
			Verification: &results.Verification{Checked: int64(len(answers[i])), Passed: true},
			Answers:      answers[i]}
		r.Phases = append(r.Phases, q)
		in = append(in, Input{Name: fmt.Sprintf("seg%d.json", i), File: f})
	}
	return in
}

// answer is an answer to f with the events given, sent at t0+at.
func answer(f nostr.Filter, evs []*nostr.Event, at time.Duration) results.Answer {
	ids := make([]string, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	return results.Answer{Shape: "kind", Filter: f.AppendJSON(nil), SentNs: t0.Add(at).UnixNano(),
		EOSENs: t0.Add(at + time.Millisecond).UnixNano(), IDs: results.EncodeIDs(ids)}
}

func TestCrossSegmentCheck(t *testing.T) {
	evs, model := crossCorpus(), crossModel()
	f := nostr.Filter{Kinds: []int{1}, Limit: 10}
	right, _ := model.Expected(&f, 0)
	fa := nostr.Filter{Authors: []string{evs[0].PubKey}, Limit: 5}
	rightA, _ := model.Expected(&fa, 0)
	opts := crossOptions(evs)
	judge := func(in []Input) *results.Verification {
		t.Helper()
		out, err := Merge(context.Background(), in, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !out.Merged.CrossChecked {
			t.Fatal("not cross-checked")
		}
		return out.Runs[0].Phases[1].Verification
	}
	pub := [2]time.Duration{time.Second, 1500 * time.Millisecond}

	// Both segments' answers are the newest 10 of all segments' events.
	v := judge(crossFiles(evs, pub, [2][]results.Answer{{answer(f, right, 2*time.Second)}, {answer(fa, rightA, 2*time.Second), answer(f, right, 3*time.Second)}}))
	if !v.Passed || !v.Verified || v.Checked != 3 || v.Missing != 0 || v.Extra != 0 || v.Expected != 25 {
		t.Fatalf("right answers: %+v", v)
	}
	// One event missing from one answer: the merge finds it, though the
	// segment alone could not have known.
	v = judge(crossFiles(evs, pub, [2][]results.Answer{{answer(f, right[1:], 2*time.Second)}, {answer(f, right, 2*time.Second)}}))
	if v.Passed || v.Missing != 1 {
		t.Fatalf("missing event not found: %+v", v)
	}
	// Only segment 0's events, after both publishes ended: segment 1's are missing.
	var own []*nostr.Event
	for _, e := range model.Live {
		if (e.CreatedAt-1_700_000_000)%2 == 0 && len(own) < 10 {
			own = append(own, e)
		}
	}
	v = judge(crossFiles(evs, pub, [2][]results.Answer{{answer(f, own, 2*time.Second)}, nil}))
	if v.Passed || v.Missing == 0 {
		t.Fatalf("an answer without the other segment's events passed: %+v", v)
	}
	// The same answer to a REQ sent while segment 1 was still publishing
	// (until 1.5 s): its events were allowed, not required.
	v = judge(crossFiles(evs, pub, [2][]results.Answer{{answer(f, own, 1200*time.Millisecond)}, nil}))
	if !v.Passed || !strings.Contains(strings.Join(v.Notes, " "), "still publishing") {
		t.Fatalf("in-flight events required: %+v", v)
	}
	// While segment 1 publishes, its events may come back live on top of
	// the limit, or take places under it: each one it returned excuses one
	// of segment 0's events at the cut, no more.
	var theirs []*nostr.Event
	for _, e := range model.Live {
		if (e.CreatedAt-1_700_000_000)%2 == 1 && len(theirs) < 2 {
			theirs = append(theirs, e)
		}
	}
	for _, c := range []struct {
		own  int
		pass bool
	}{{10, true}, {8, true}, {7, false}} {
		v = judge(crossFiles(evs, pub, [2][]results.Answer{{answer(f, append(append([]*nostr.Event{}, own[:c.own]...), theirs...), 1200*time.Millisecond)}, nil}))
		if v.Passed != c.pass || (!c.pass && v.Missing != 1) {
			t.Fatalf("%d own + 2 in flight: passed %v, want %v: %+v", c.own, v.Passed, c.pass, v)
		}
	}
	// Segment 1's clock runs 5 s ahead of the relay's (it measured so, on
	// another machine): its publish window, read on the relay's clock,
	// ended before segment 0's REQ, so its events are required.
	in := crossFiles(evs, pub, [2][]results.Answer{{answer(f, own, 2*time.Second)}, nil})
	g := in[1].File.Runs[0]
	g.Segment.ClockOffsetNs, g.Segment.ClockOffsetErrNs, g.Segment.ClockOffsetSource = int64(5*time.Second), int64(time.Millisecond), "relay-date"
	g.Phases[0].Start = t0.Add(5 * time.Second)
	if v = judge(in); v.Passed || v.Missing == 0 {
		t.Fatalf("clock offset not applied: %+v", v)
	}
	// The refused event 39 and an unknown id are extra.
	bad := append([]*nostr.Event{evs[39]}, right[:9]...)
	a := answer(f, bad, 2*time.Second)
	a.IDs = results.EncodeIDs(append([]string{strings.Repeat("f", 64)}, idsOf(bad)...))
	v = judge(crossFiles(evs, pub, [2][]results.Answer{{a}, nil}))
	if v.Passed || v.Extra != 2 {
		t.Fatalf("refused and unknown events: %+v", v)
	}
}

func idsOf(evs []*nostr.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

func TestCrossCheckNeedsRecords(t *testing.T) {
	evs := crossCorpus()
	in := crossFiles(evs, [2]time.Duration{time.Second, time.Second}, [2][]results.Answer{{answer(nostr.Filter{Kinds: []int{1}}, nil, 2*time.Second)}, nil})
	in[1].File.Runs[0].Phases[1].Counts["queries"] = 3 // ran queries, recorded none
	out, err := Merge(context.Background(), in, crossOptions(evs))
	if err != nil {
		t.Fatal(err)
	}
	v := out.Runs[0].Phases[1].Verification
	if out.Merged.CrossChecked || v.Verified || !strings.Contains(strings.Join(v.Notes, " "), "not checked across segments") {
		t.Fatalf("merged %+v verification %+v", out.Merged, v)
	}
}

func TestCrossReplaceableInFlight(t *testing.T) {
	evs := crossCorpus()
	// Event 38 (segment 0) is a profile with a t tag; event 39 would be
	// refused, so use 37 (segment 1): the same author's newer profile,
	// without the tag.
	evs[38] = &nostr.Event{ID: evs[38].ID, PubKey: evs[1].PubKey, CreatedAt: evs[38].CreatedAt - 100, Kind: 0, Tags: []nostr.Tag{{"t", "x"}}}
	evs[37] = &nostr.Event{ID: evs[37].ID, PubKey: evs[1].PubKey, CreatedAt: evs[38].CreatedAt + 50, Kind: 0}
	f := nostr.Filter{Tags: map[string][]string{"t": {"x"}}}
	opts := crossOptions(evs)
	pub := [2]time.Duration{time.Second, 1500 * time.Millisecond}
	for _, c := range []struct {
		name string
		got  []*nostr.Event
		at   time.Duration
		pass bool
	}{
		{"in flight, the newer version already stored", nil, 1200 * time.Millisecond, true},
		{"in flight, the newer version not yet stored", []*nostr.Event{evs[38]}, 1200 * time.Millisecond, true},
		{"after every publish, replaced", nil, 2 * time.Second, true},
		{"after every publish, the replaced version", []*nostr.Event{evs[38]}, 2 * time.Second, false},
	} {
		out, err := Merge(context.Background(), crossFiles(evs, pub, [2][]results.Answer{{answer(f, c.got, c.at)}, nil}), opts)
		if err != nil {
			t.Fatal(err)
		}
		v := out.Runs[0].Phases[1].Verification
		// A relay that keeps superseded versions may return the older one:
		// the verifier then reads it so (semantics), which passes too.
		if passed := v.Passed && v.Semantics == ""; passed != c.pass {
			t.Errorf("%s: passed %v (semantics %q), want %v: %+v", c.name, v.Passed, v.Semantics, c.pass, v)
		}
	}
}

// An event a segment sent without a decisive answer (segment 1's event 39,
// the newest) is neither required nor forbidden across segments: returned,
// it was stored after all and takes its place under the limit; absent, it
// is not missing; an accepted event left out still is.
func TestCrossUnknownEvents(t *testing.T) {
	evs, model := crossCorpus(), crossModel()
	f := nostr.Filter{Kinds: []int{1}, Limit: 10}
	right, _ := model.Expected(&f, 0)
	opts := crossOptions(evs)
	pub := [2]time.Duration{time.Second, 1500 * time.Millisecond}
	judge := func(got []*nostr.Event) *results.Verification {
		t.Helper()
		in := crossFiles(evs, pub, [2][]results.Answer{{answer(f, got, 2*time.Second)}, nil})
		in[1].File.Runs[0].Phases[0].Unknown = results.EncodeIndexSet([]int{39}, len(evs))
		out, err := Merge(context.Background(), in, opts)
		if err != nil {
			t.Fatal(err)
		}
		return out.Runs[0].Phases[1].Verification
	}
	stored := append([]*nostr.Event{evs[39]}, right[:9]...)
	if v := judge(stored); !v.Passed || v.StoredUnknown != 1 || v.Extra != 0 || v.Missing != 0 {
		t.Errorf("unknown event returned: %+v", v)
	}
	if v := judge(right); !v.Passed || v.StoredUnknown != 0 {
		t.Errorf("unknown event absent: %+v", v)
	}
	if v := judge(right[1:]); v.Passed || v.Missing != 1 {
		t.Errorf("accepted event left out: %+v", v)
	}
}

// An answer to a REQ of several filters is judged as their union (each
// filter's newest under its own limit, each event once), after every
// segment's publishing and while one still publishes (the other's
// events then allowed, not required), from the filters the segment
// recorded (more_filters).
func TestCrossMultiFilter(t *testing.T) {
	evs, model := crossCorpus(), crossModel()
	fa := nostr.Filter{Authors: []string{evs[0].PubKey}, Limit: 3} // segment 0's events
	fb := nostr.Filter{Authors: []string{evs[1].PubKey}, Limit: 3} // segment 1's
	wantA, _ := model.Expected(&fa, 0)
	wantB, _ := model.Expected(&fb, 0)
	both := append(append([]*nostr.Event{}, wantA...), wantB...)
	multi := func(got []*nostr.Event, at time.Duration, fs ...nostr.Filter) results.Answer {
		a := answer(fs[0], got, at)
		for i := range fs[1:] {
			a.More = append(a.More, fs[1+i].AppendJSON(nil))
		}
		return a
	}
	pub := [2]time.Duration{time.Second, 1500 * time.Millisecond}
	for _, c := range []struct {
		name       string
		a          results.Answer
		pass       bool
		miss, dups int64
	}{
		{"the union", multi(both, 2*time.Second, fa, fb), true, 0, 0},
		{"one filter's event missing", multi(both[1:], 2*time.Second, fa, fb), false, 1, 0},
		{"the first filter alone", multi(wantA, 2*time.Second, fa, fb), false, 3, 0},
		{"an event matching both filters twice", multi(append(append([]*nostr.Event{}, wantA...), wantA[0]), 2*time.Second, fa, nostr.Filter{IDs: []string{wantA[0].ID}}), false, 0, 1},
		{"in flight: the first filter's, the second's allowed", multi(wantA, 1200*time.Millisecond, fa, fb), true, 0, 0},
		{"in flight: the union", multi(both, 1200*time.Millisecond, fa, fb), true, 0, 0},
		{"in flight: one required event missing", multi(append(append([]*nostr.Event{}, wantA[1:]...), wantB...), 1200*time.Millisecond, fa, fb), false, 1, 0},
		{"in flight: an allowed event twice", multi(append(append([]*nostr.Event{}, both...), wantB[0]), 1200*time.Millisecond, fa, fb), false, 0, 1},
	} {
		out, err := Merge(context.Background(), crossFiles(evs, pub, [2][]results.Answer{{c.a}, nil}), crossOptions(evs))
		if err != nil {
			t.Fatal(err)
		}
		v := out.Runs[0].Phases[1].Verification
		if v.Passed != c.pass || v.Missing != c.miss || v.Duplicated != c.dups || v.Checked != 1 || v.NotMatching != 0 || v.Extra != 0 {
			t.Errorf("%s: %+v", c.name, v)
		}
	}
}
