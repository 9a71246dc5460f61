package merge

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
)

// Segments run against a relay that held events before they began (a
// segment's probe found some): ids no segment published are the relay's
// earlier data, taking places under the limit; the corpus events the
// answer holds must be the newest of what is left. A refused corpus event
// stays extra. Without the probe's finding, the same ids are extra.
func TestCrossEarlierData(t *testing.T) {
	evs, model := crossCorpus(), crossModel()
	f := nostr.Filter{Kinds: []int{1}, Limit: 10}
	right, _ := model.Expected(&f, 0)
	pub := [2]time.Duration{time.Second, time.Second}
	old := []string{strings.Repeat("e", 64), strings.Repeat("d", 64)}
	judge := func(before string, ids []string) *results.Verification {
		t.Helper()
		a := answer(f, nil, 2*time.Second)
		a.IDs = results.EncodeIDs(ids)
		in := crossFiles(evs, pub, [2][]results.Answer{{a}, nil})
		in[1].File.Runs[0].Relay.Before = before
		in[0].File.Runs[0].Relay.Before = results.BeforeEmpty
		out, err := Merge(context.Background(), in, crossOptions(evs))
		if err != nil {
			t.Fatal(err)
		}
		return out.Runs[0].Phases[1].Verification
	}
	withOld := append(append([]string{}, old...), idsOf(right[:8])...) // two earlier events took two places

	if v := judge(results.BeforeHeld, withOld); v.Status() != results.VerificationPassed || v.HeldBefore != 2 || v.Extra != 0 || v.Missing != 0 {
		t.Fatalf("earlier data in their places: %s held_before %d extra %d missing %d notes %q", v.Status(), v.HeldBefore, v.Extra, v.Missing, v.Notes)
	}
	if v := judge(results.BeforeEmpty, withOld); v.Status() != results.VerificationFailed || v.Extra != 2 {
		t.Fatalf("relay empty at the start: %s extra %d, want failed with 2 extra", v.Status(), v.Extra)
	}
	// Earlier data does not excuse a corpus event left out: 2 places taken, 7 of 8 returned.
	short := append(append([]string{}, old...), idsOf(right[:7])...)
	if v := judge(results.BeforeUnknown, short); v.Status() != results.VerificationFailed || v.Missing != 1 {
		t.Fatalf("one owed event left out beside earlier data: %s missing %d", v.Status(), v.Missing)
	}
	// Earlier data filling every place: nothing of the corpus owed.
	var many []string
	for i := range 10 {
		many = append(many, strings.Repeat(string(rune('a'+i)), 64))
	}
	if v := judge(results.BeforeHeld, many); v.Status() != results.VerificationPassed || v.HeldBefore != 10 {
		t.Fatalf("earlier data in every place: %s held_before %d notes %q", v.Status(), v.HeldBefore, v.Notes)
	}
	// The refused event 39 stays extra.
	refused := append([]string{evs[39].ID}, idsOf(right[:9])...)
	if v := judge(results.BeforeHeld, refused); v.Extra != 1 {
		t.Fatalf("a refused event on a relay that held events: extra %d, want 1", v.Extra)
	}
}
