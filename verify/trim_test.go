package verify

import (
	"fmt"
	"testing"

	"github.com/relaybench/relaybench/nostr"
)

// An answer over its limit keeps only the newest `limit` valid, matching,
// first copies; every other event is counted as it would have been judged.
// An answer within its limit is kept whole.
func TestTrimKeepsTheNewestLimit(t *testing.T) {
	c := NewChecker()
	raw := func(e *nostr.Event) []byte {
		b := []byte(fmt.Sprintf(`{"id":%q}`, e.ID))
		c.Trust(b, e)
		return b
	}
	var notes [][]byte
	for _, at := range []int64{103, 106, 101, 105, 102, 104} {
		notes = append(notes, raw(ev(fmt.Sprintf("n%d", at), "P", 1, at)))
	}
	reaction := raw(ev("r1", "P", 7, 200))
	answer := append(append([][]byte{}, notes...), notes[1], reaction, []byte(`{"id":"bad"}`))
	f := nostr.Filter{Kinds: []int{1}, Limit: 3}
	kept, x := c.Trim(&f, answer, 0)
	if got := fmt.Sprintf("%s", kept); got != fmt.Sprintf("%s", [][]byte{notes[1], notes[3], notes[5]}) {
		t.Fatalf("kept %s, want n106, n105, n104 in the order they came", got)
	}
	if x.OverLimit != 3 || x.Duplicated != 1 || x.NotMatching != 1 || x.Invalid != 1 || x.Returned != int64(len(answer)-3) || x.Checked != 0 {
		t.Fatalf("excess %+v", x)
	}
	// A cap below the limit keeps the cap's worth; over_limit still counts
	// against the limit.
	f.Limit = 5
	kept, x = c.Trim(&f, notes, 2)
	if len(kept) != 2 || x.OverLimit != 1 || x.Returned != 4 {
		t.Fatalf("cap 2: kept %d, excess %+v", len(kept), x)
	}
	for _, lim := range []int{0, 6, 10} {
		f.Limit = lim
		if kept, x := c.Trim(&f, notes, 0); len(kept) != len(notes) || x.Returned != 0 {
			t.Fatalf("limit %d: kept %d of %d, excess %+v", lim, len(kept), len(notes), x)
		}
	}
}
