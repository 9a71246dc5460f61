package harness

import (
	"runtime"
	"strconv"
	"testing"
	"time"
)

// The sampling window is Begin to end, whatever came before: the samples
// lie within it, the last one at its end, and they add up to the CPU total.
func TestBeginSamplesItsWindowOnly(t *testing.T) {
	inst := startTest(t, "khatru-memory", StartOptions{})
	c := dial(t, inst.URL) // set-up, before the window
	for n := 0; n < 50; n++ {
		if ok, reason := c.publish(newEvent(t, "before "+strconv.Itoa(n))); !ok {
			t.Fatalf("publish: %q", reason)
		}
	}
	time.Sleep(2 * SampleInterval)

	t0 := time.Now() // before Begin: every sample's time (from Begin) is then at most time.Since(t0)
	end := inst.Begin()
	for n := 0; n < 200; n++ {
		if ok, reason := c.publish(newEvent(t, "in "+strconv.Itoa(n))); !ok {
			t.Fatalf("publish: %q", reason)
		}
	}
	time.Sleep(SampleInterval)
	window := time.Since(t0).Seconds()
	res := end()
	after := time.Since(t0).Seconds() // end's own reading is inside this

	if len(res.Series) < 2 {
		t.Fatalf("%d samples", len(res.Series))
	}
	var integral, prev float64
	for _, s := range res.Series {
		if s.T <= prev || s.T > after {
			t.Errorf("sample at %.3f s outside the window (0, %.3f s]", s.T, after)
		}
		integral += s.RelayCPU * (s.T - prev)
		prev = s.T
	}
	if last := res.Series[len(res.Series)-1].T; last < window-SampleInterval.Seconds() {
		t.Errorf("last sample at %.3f s, the window ended at %.3f s", last, window)
	}
	// The series counts every tick up to its last sample; end may add the
	// ticks of less than a quarter interval after it.
	if d := res.RelayCPUSecs - integral; d < -0.011 || d > SampleInterval.Seconds()/4*float64(runtime.NumCPU())+0.011 {
		t.Errorf("series integrates to %.3f CPU s, total says %.3f", integral, res.RelayCPUSecs)
	}
	if res.RelayCPUSecs <= 0 || res.RelayPeakRSS <= 0 {
		t.Errorf("resources %+v", res)
	}
}
