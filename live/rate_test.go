package live

import (
	"math"
	"testing"
	"time"
)

// TestRateCardIsTheWholeRunAverage: the card labelled "accepted / s
// (whole-run average)" is every accepted operation over the time since
// the first one, not the last second's count (a newcomer's finished
// mixed page read "49 — accepted / s (whole run)" beside "22,720
// accepted (whole run)" for a ~21 s run: the read-back's last second).
// The seconds before any operation (signing the corpus) are not in it.
func TestRateCardIsTheWholeRunAverage(t *testing.T) {
	st := New(Options{Run: "r", Command: "mixed"})
	defer st.Close()
	sec := int64(time.Second)
	var acc int64
	var p Point
	tick := func(at, accepted int64) {
		st.mu.Lock()
		defer st.mu.Unlock()
		acc += accepted
		p = Point{Outcomes: map[string]int64{"accepted": acc}}
		now := st.started + at*sec
		st.rates(&p, now)
		st.last.t, st.last.accepted = now, acc
	}
	tick(1, 0)
	tick(2, 0) // two seconds signing: no operation yet
	if p.AvgRate != 0 {
		t.Fatalf("before any operation: average %v/s, want 0", p.AvgRate)
	}
	for s := int64(3); s <= 22; s++ { // 20 s at 1,000/s
		tick(s, 1000)
	}
	tick(23, 49) // the read-back's last second
	if p.Rate != 49 {
		t.Errorf("last second: %v/s, want 49", p.Rate)
	}
	want := float64(20*1000+49) / 21 // from the tick before the first operation (2 s) to 23 s
	if math.Abs(p.AvgRate-want) > 0.01 {
		t.Errorf("whole-run average %.2f/s, want %.2f/s (20,049 accepted over 21 s; signing's 2 s not counted)", p.AvgRate, want)
	}
}
