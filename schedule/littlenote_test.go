package schedule

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/metrics"
)

// The note of a pool that filled at times says plainly what Little's law
// gives: the ops in flight on average, and whether the pool was too small
// for the rate (at or above it) or filled in bursts only.
func TestLittleNote(t *testing.T) {
	for _, c := range []struct {
		reply     time.Duration
		want, not string
	}{
		{2 * time.Millisecond, "all 10 in-flight slots (--load-pool) were busy at times, though on average about 1 op in flight (500 ops/s × 2ms mean reply time, Little's law): the slots filled only in bursts", "too small"},
		{18 * time.Millisecond, "on average about 9 ops in flight (500 ops/s × 18ms mean reply time, Little's law), close to the 10 slots: the pool is nearly too small", "bursts"},
		{40 * time.Millisecond, "on average about 20 ops in flight (500 ops/s × 40ms mean reply time, Little's law), at least as many as the 10 slots hold: the pool is too small", "bursts"},
	} {
		r := &Result{Pool: 10, MaxInFlight: 10, Intended: 500, Start: 1, End: 1 + int64(time.Second), Uncorrected: metrics.NewHistogram(), Latency: metrics.NewHistogram()}
		r.Uncorrected.Record(int64(c.reply))
		r.Latency.Record(int64(c.reply))
		got := r.littleNote()
		if !strings.Contains(got, c.want) || strings.Contains(got, c.not) || strings.Contains(got, "must be") {
			t.Errorf("reply %v: %q\nwant %q", c.reply, got, c.want)
		}
	}
}
