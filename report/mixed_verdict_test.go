package report

import (
	"testing"
)

// TestMixedVerdictLeadsWithSlowdown: the headline leads with the side
// that got worse, the largest slowdown of throughput or p99 first; a
// speed-up comes only after every slowdown (walk 11: "the largest p99
// change is OK's, 0.24× (faster together)" hid an EOSE p99 3.38× slower).
func TestMixedVerdictLeadsWithSlowdown(t *testing.T) {
	side := func(name, lat string, thr, p99 float64) mixedSide {
		return mixedSide{name: name, verb: name + "ing", lat: lat, ratio: thr, p99Alone: 100, p99Together: 100, p99Ratio: p99}
	}
	for _, c := range []struct {
		pubThr, pubP99, queryThr, queryP99 float64
		want                               string
	}{
		{1, 0.24, 1, 3.38, "EOSE p99 3.38× slower together; both sides kept their throughput; OK p99 0.24× (faster together)"},
		{1, 3.47, 1, 0.50, "OK p99 3.47× slower together; both sides kept their throughput; EOSE p99 0.50× (faster together)"},
		{1, 0.74, 1, 0.01, "both sides kept their throughput; EOSE p99 0.0100× (faster together); OK p99 0.74× (faster together)"},
		{1, 1.001, 0.5, 2.5, "EOSE p99 2.50× slower together; querying fell to 50% of its throughput alone; publishing kept its throughput"},
		{1, 0.5, 0.2, 1.5, "querying fell to 20% of its throughput alone; EOSE p99 1.50× slower together; publishing kept its throughput; OK p99 0.50× (faster together)"},
	} {
		got := mixedVerdict([]mixedSide{side("publish", "OK", c.pubThr, c.pubP99), side("query", "EOSE", c.queryThr, c.queryP99)})
		if got != c.want {
			t.Errorf("ratios %v:\n got %q\nwant %q", c, got, c.want)
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
