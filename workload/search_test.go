package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/fakenip"
	"github.com/relaybench/relaybench/nostr"
)

func TestWords(t *testing.T) {
	got := words("GM nostr! Café, Zürich... 日本語です привет don't a1b2 supercalifragilisticexpialidocious")
	for _, w := range []string{"nostr", "café", "zürich", "привет"} {
		if _, ok := got[w]; !ok {
			t.Errorf("missing %q in %v", w, got)
		}
	}
	for _, w := range []string{"gm", "日本語です", "don", "supercalifragilisticexpialidocious"} {
		if _, ok := got[w]; ok {
			t.Errorf("unexpected %q", w)
		}
	}
}

func TestMatchTerm(t *testing.T) {
	e := &nostr.Event{Content: "Good morning from the Café in Zürich, nostriches", Tags: []nostr.Tag{{"t", "lightning"}}}
	for term, want := range map[string]termMatch{
		"cafe": matchLoose, "CAFÉ": matchWord, "morning": matchWord, "nostr": matchSubstring,
		"mornings": matchLoose, "lightning": matchLoose, "bitcoin": matchNone,
	} {
		if got := matchTerm(e, term); got != want {
			t.Errorf("%q: %d, want %d", term, got, want)
		}
	}
}

func TestSearchFakeRelay(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    fakenip.Config
		passed bool
	}{
		{"substring search", fakenip.Config{}, true},
		{"ignores since/until", fakenip.Config{SearchIgnoresTime: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fakenip.Start(tc.cfg)
			defer r.Close()
			m := publishModel(t, r.URL)
			ph, err := Search(testCtx(t), r.URL, m, m.Live, SearchOptions{Base: Base{Timeout: 5 * time.Second, Seed: 2}, Queries: 30, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			balanced(t, ph)
			v := ph.Verification
			if v.Passed != tc.passed || v.Checked != 30 {
				t.Fatalf("verification %+v", v)
			}
			if ph.Counts["searches"] != 30 || ph.Counts["events_returned"] == 0 || ph.Counts["results_unrelated"] != 0 {
				t.Errorf("counts %v", ph.Counts)
			}
			if tc.passed && ph.Rates["recall"] < 0.99 {
				t.Errorf("recall %v of a relay that returns every event holding the term", ph.Rates["recall"])
			}
			if !tc.passed && !strings.Contains(strings.Join(v.Notes, "\n"), "since/until") {
				t.Errorf("notes %v do not name since/until", v.Notes)
			}
			if len(ph.Groups) != len(SearchShapes) {
				t.Errorf("groups %d", len(ph.Groups))
			}
		})
	}
}
