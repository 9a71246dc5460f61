package workload

import (
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
)

// TestLoadIntendedRateIsThePatterns: a constant 100/s for 1 s whose last
// OKs come 300 ms after the pattern's end reads an intended rate of
// 100/s, the pattern's, not the intended ops over the phase's window that
// runs on until the last reply (a constant 1,000/s for 10 s read 927.44/s
// over a 10.8 s window).
func TestLoadIntendedRateIsThePatterns(t *testing.T) {
	ph, _ := runLoad(t, testrelay.Config{OKDelay: 300 * time.Millisecond}, LoadOptions{Pattern: constant(t, 100, time.Second), Pool: 64,
		Connections: 2, MaxLateness: 5 * time.Second, Size: 100})
	if ph.Duration < int64(1300*time.Millisecond) || ph.Counts["intended"] != 100 {
		t.Fatalf("window %v, %d intended: want the last OK after 1.3 s, 100 intended", time.Duration(ph.Duration), ph.Counts["intended"])
	}
	if r := ph.Rates["intended_per_sec"]; r != 100 {
		t.Errorf("intended rate %v/s over a %v window, want the pattern's 100/s", r, time.Duration(ph.Duration))
	}
}
