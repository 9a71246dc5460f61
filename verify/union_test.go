package verify

import (
	"fmt"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
)

// unionStore: author A's profile p0 (100) and notes n1..n5 (101..105);
// author B's note m1 (110).
func unionStore() []*nostr.Event {
	evs := []*nostr.Event{ev("p0", "A", 0, 100)}
	for i := 1; i <= 5; i++ {
		evs = append(evs, ev(fmt.Sprintf("n%d", i), "A", 1, int64(100+i)))
	}
	return append(evs, ev("m1", "B", 1, 110))
}

// A REQ of two filters owes the union of what each owes, each event once:
// {"ids":[p0,n5]} and {"kinds":[1],"authors":[A],"limit":3} owe p0, n5, n4
// and n3; n5 matches both.
func TestUnionOfTwoFilters(t *testing.T) {
	store := unionStore()
	by := map[string]*nostr.Event{}
	for _, e := range store {
		by[e.ID] = e
	}
	fs := []*nostr.Filter{{IDs: []string{"p0", "n5"}}, {Kinds: []int{1}, Authors: []string{"A"}, Limit: 3}}
	m := NewModel(store)
	for _, c := range []struct {
		name                                 string
		answer                               string
		missing, extra, dup, notMatch, overL int64
	}{
		{"the union, the shared event once", "n5 n4 n3 p0", 0, 0, 0, 0, 0},
		{"filter by filter, the shared event once", "p0 n5 n4 n3", 0, 0, 0, 0, 0},
		{"the shared event twice", "p0 n5 n5 n4 n3", 0, 0, 1, 0, 0},
		{"an event owed by one filter alone missing", "n5 n4 n3", 1, 0, 0, 0, 0},
		{"an event owed by both missing", "p0 n4 n3", 1, 0, 0, 0, 0},
		{"older than the second filter's cut", "p0 n5 n4 n2", 1, 1, 0, 0, 0},
		{"beyond the second filter's limit", "p0 n5 n4 n3 n2", 0, 0, 0, 0, 1},
		{"outside every filter", "p0 n5 n4 n3 m1", 0, 0, 0, 1, 0},
	} {
		var evs []*nostr.Event
		for _, id := range splitIDs(c.answer) {
			evs = append(evs, by[id])
		}
		j := Judge([]Reply{{Filters: fs, Events: evs}}, m, 0, false)
		v := j.Answers[0]
		if v.Missing != c.missing || v.Extra != c.extra || v.Duplicated != c.dup || v.NotMatching != c.notMatch || v.OverLimit != c.overL || v.Expected != 4 {
			t.Errorf("%s (%s): missing %d extra %d duplicated %d not matching %d over limit %d expected %d, want %d %d %d %d %d 4 (notes %q)",
				c.name, c.answer, v.Missing, v.Extra, v.Duplicated, v.NotMatching, v.OverLimit, v.Expected,
				c.missing, c.extra, c.dup, c.notMatch, c.overL, v.Notes)
		}
		Finish(&v)
		if want := c.missing+c.extra+c.dup+c.notMatch == 0; v.Passed != want {
			t.Errorf("%s: passed %v, want %v", c.name, v.Passed, want)
		}
		// Without a model only validity, filter match and duplicates count.
		n := Judge([]Reply{{Filters: fs, Events: evs}}, nil, 0, false).Answers[0]
		if n.Duplicated != c.dup || n.NotMatching != c.notMatch || n.Missing != 0 || n.Extra != 0 {
			t.Errorf("%s without a model: %+v", c.name, n)
		}
	}
	// One filter in Filters is the same as Filter.
	f := fs[1]
	evs := []*nostr.Event{by["n5"], by["n3"]}
	a := Judge([]Reply{{Filter: f, Events: evs}}, m, 0, false).Answers[0]
	b := Judge([]Reply{{Filters: []*nostr.Filter{f}, Events: evs}}, m, 0, false).Answers[0]
	if fmt.Sprint(a) != fmt.Sprint(b) || a.Missing != 1 {
		t.Errorf("one filter: %+v and %+v", a, b)
	}
}

// TrimFilters keeps the newest min(limit, cap) of each filter and counts
// the rest as Trim does; judged with its excess added, the answer reads as
// it would whole.
func TestTrimFilters(t *testing.T) {
	c := NewChecker()
	raws := map[string][]byte{}
	by := map[string]*nostr.Event{}
	for _, e := range unionStore() {
		raws[e.ID] = []byte(fmt.Sprintf(`{"id":%q}`, e.ID))
		c.Trust(raws[e.ID], e)
		by[e.ID] = e
	}
	fs := []*nostr.Filter{{Kinds: []int{0}, Limit: 1}, {Kinds: []int{1}, Authors: []string{"A"}, Limit: 2}}
	var answer [][]byte
	for _, id := range splitIDs("n5 n4 n3 p0 n5") {
		answer = append(answer, raws[id])
	}
	kept, x := c.TrimFilters(fs, answer, 0)
	if got := fmt.Sprintf("%s", kept); got != fmt.Sprintf("%s", [][]byte{raws["n5"], raws["n4"], raws["p0"]}) {
		t.Fatalf("kept %s", got)
	}
	if x.OverLimit != 1 || x.Duplicated != 1 || x.Returned != 2 || x.NotMatching != 0 {
		t.Fatalf("excess %+v", x)
	}
	evs, _ := c.Events(kept)
	v := Judge([]Reply{{Filters: fs, Events: evs}}, NewModel(unionStore()), 0, false).Answers[0]
	Add(&v, &x)
	if v.Missing != 0 || v.Extra != 0 || v.Duplicated != 1 || v.Returned != 5 {
		t.Fatalf("judged %+v", v)
	}
	if k, x := c.TrimFilters(fs, answer[:3], 0); len(k) != 3 || fmt.Sprint(x) != fmt.Sprint(results.Verification{}) {
		t.Fatalf("within the bound: kept %d, excess %+v", len(k), x)
	}
}

func splitIDs(s string) []string { return strings.Fields(s) }
