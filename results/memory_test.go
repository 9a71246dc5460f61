package results

import "testing"

// The client memory of idle subscriptions is a figure only when they held
// the floor and a figure per subscription was given: a reading under it
// (subscribe's 272 KiB for 10 subscriptions), an old file's per-subscription
// figure of such a reading, or merged segments' summed readings without a
// figure per subscription are noise; other counters are never.
func TestBelowNoise(t *testing.T) {
	for _, c := range []struct {
		counts map[string]int64
		below  bool
	}{
		{map[string]int64{CountClientRSSIdle: 272 << 10}, true},
		{map[string]int64{CountClientRSSIdle: 272 << 10, CountClientBytesPerSub: 27 << 10}, true}, // written before the floor
		{map[string]int64{CountClientRSSIdle: 9 << 20}, true},                                     // merged: summed readings, no figure each
		{map[string]int64{CountClientRSSIdle: IdleRSSFloor, CountClientBytesPerSub: 8 << 10}, false},
		{map[string]int64{CountClientRSSIdle: 20 << 20, CountClientBytesPerSub: 20 << 10}, false},
	} {
		for _, k := range []string{CountClientRSSIdle, CountClientBytesPerSub} {
			if got := BelowNoise(c.counts, k); got != c.below {
				t.Errorf("BelowNoise(%v, %s) = %v, want %v", c.counts, k, got, c.below)
			}
		}
		if BelowNoise(c.counts, CountAccepted) {
			t.Errorf("BelowNoise(%v, accepted): a counter without a noise floor", c.counts)
		}
	}
}
