package workload

import (
	"testing"
	"time"
)

// TestEventsRanOut: "raise --events" is advice only when the events were
// fewer than the run could publish in --duration; an open loop of exactly
// rate × duration answers its last event just before the end, as planned.
func TestEventsRanOut(t *testing.T) {
	for _, c := range []struct {
		rate float64
		dur  time.Duration
		n    int
		want bool
	}{
		{2000, 30 * time.Second, 60000, false}, // the README's example: the plan filled
		{3, 1500 * time.Millisecond, 4, false}, // 4.5 events: EventCount plans 4
		{2000, 30 * time.Second, 10000, true},  // --events below the schedule
		{0, 30 * time.Second, 10000, true},     // closed loop: the events ran out first
	} {
		r := &subRun{o: SubscribeOptions{Rate: c.rate, Duration: c.dur}}
		if got := r.eventsRanOut(c.n); got != c.want {
			t.Errorf("rate %v duration %v events %d: ran out %v, want %v", c.rate, c.dur, c.n, got, c.want)
		}
	}
}
