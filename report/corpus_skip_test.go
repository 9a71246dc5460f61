package report

import (
	"strings"
	"testing"
)

// A --skip-publish run's Corpus line says the corpus was not published and
// only gave the queries their filters (the relay's own events answered),
// through a results file read back too; a run that published says nothing
// of it.
func TestCorpusLineSkipPublish(t *testing.T) {
	const not = "from cache; not published (--skip-publish): it only gave the queries their filters, answered from what the relay already held"
	for _, c := range []struct {
		params map[string]any
		want   bool
	}{{map[string]any{"skip_publish": true, "queries": 600}, true}, {map[string]any{"queries": 600}, false}} {
		f := oneRun("run", c.params, queryPhase(1, 600, 28.02, 30e6, 0))
		f = roundTrip(t, f)
		var line string
		for _, l := range headerLines(f) {
			if l[0] == "Corpus" {
				line = l[1]
			}
		}
		if got := strings.HasSuffix(line, not); got != c.want || (!c.want && strings.Contains(line, "not published")) {
			t.Errorf("params %v: Corpus line %q, want it to end %q: %v", c.params, line, not, c.want)
		}
	}
}
