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

// TestHumanNameAcronyms: a results key shown under its words writes
// acronyms as such and a rate's "per sec" as "/s" (-v and report -v).
func TestHumanNameAcronyms(t *testing.T) {
	for k, want := range map[string]string{
		"eose_p50_ratio":       "EOSE p50 ratio",
		"ok_p99_ratio":         "OK p99 ratio",
		"events_per_sec_alone": "events/s alone",
		"client_cpu_p50":       "client CPU p50",
		"req_queries":          "REQ queries",
		"delivered_before_ok":  "delivered before OK",
		"timed_out":            "timed out",
		"looking":              "looking",
	} {
		if got := humanName(k); got != want {
			t.Errorf("humanName(%q) = %q, want %q", k, got, want)
		}
	}
	if got := figureLabel("queries_per_sec_alone"); got != "Queries/s alone" {
		t.Errorf("figureLabel(queries_per_sec_alone) = %q", got)
	}
}
