package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
)

// TestFirstSecondNote: a publish-alone part whose OK p99 came from its
// first second (the preload's tail: 119 ms there, 3.64 ms after) is named;
// one whose seconds are alike, whose first second is slow but not the
// part's p99, or that has no later second to compare with, is not. Short
// parts have FineStep points: a second's p99 is its points' highest.
func TestFirstSecondNote(t *testing.T) {
	ms := int64(time.Millisecond)
	sec := func(p99s ...int64) []results.Second {
		var out []results.Second
		for i, v := range p99s {
			out = append(out, results.Second{T: i, LatP99Ns: v})
		}
		return out
	}
	fine := []results.Second{{AtMs: 0, WidthMs: 100, LatP99Ns: 2 * ms}, {AtMs: 300, WidthMs: 100, LatP99Ns: 119 * ms},
		{AtMs: 1200, WidthMs: 100, T: 1, LatP99Ns: 3 * ms}, {AtMs: 2500, WidthMs: 100, T: 2, LatP99Ns: 3640 * 1000}}
	for _, c := range []struct {
		name   string
		series []results.Second
		okP99  int64
		want   string
	}{
		{"preload tail", sec(119*ms, 3*ms, 3640*1000), 119 * ms, "OK p99 119ms in the part's first second, 33× the highest of its later seconds (3.64ms): the part's p99 119ms is that second's"},
		{"fine points", fine, 100 * ms, "OK p99 119ms in the part's first second, 33×"},
		{"alike", sec(4*ms, 3*ms, 5*ms), 5 * ms, ""},
		{"first slow, not the part's p99", sec(20*ms, 6*ms, 5*ms), 5 * ms, ""},
		{"no later second", sec(119 * ms), 119 * ms, ""},
		{"later seconds without replies", sec(119*ms, 0), 119 * ms, ""},
	} {
		got := firstSecondNote(c.series, c.okP99)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: %q\nwant %q", c.name, got, c.want)
		}
	}
}
