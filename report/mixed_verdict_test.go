package report

import (
	"strings"
	"testing"
)

// TestMixedVerdictLargestChangeEitherWay: the largest p99 change is the
// ratio farthest from 1× either way, so 0.01× (a hundred times faster)
// beats 0.74×, and 3.47× beats 0.50×.
func TestMixedVerdictLargestChangeEitherWay(t *testing.T) {
	side := func(name, lat string, p99 float64) mixedSide {
		return mixedSide{name: name, verb: name + "ing", lat: lat, ratio: 1, p99Alone: 100, p99Together: 100, p99Ratio: p99}
	}
	for _, c := range []struct {
		pub, query float64
		want       string
	}{
		{0.01, 0.74, "the largest p99 change is OK's, 0.01× (faster together)"},
		{0.74, 0.01, "the largest p99 change is EOSE's, 0.01× (faster together)"},
		{0.50, 3.47, "the largest p99 change is EOSE's, 3.47×"},
		{3.47, 0.50, "the largest p99 change is OK's, 3.47×"},
	} {
		got := mixedVerdict([]mixedSide{side("publish", "OK", c.pub), side("query", "EOSE", c.query)})
		if !strings.HasSuffix(got, c.want) {
			t.Errorf("p99 ratios %.2f, %.2f: %q, want it to end %q", c.pub, c.query, got, c.want)
		}
	}
}
