package report

import (
	"testing"

	"github.com/relaybench/relaybench/results"
)

// A ratio a note states is not listed again, whether the note writes its
// label as the summary does ("OK p99 ratio") or as results files written
// before did ("ok p99 ratio").
func TestElsewhereRatioNotes(t *testing.T) {
	for _, note := range []string{"OK p99 ratio together/alone: 0.81× (1.42ms alone, 1.15ms together)",
		"ok p99 ratio together/alone: 0.81× (1.42ms alone, 1.15ms together)"} {
		p := &results.Phase{Notes: []string{note}}
		if !elsewhere(p, "ok_p99_ratio") {
			t.Errorf("note %q: ok_p99_ratio listed again", note)
		}
	}
}
