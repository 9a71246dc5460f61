package workload

import (
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
)

func TestLifecycleEmbedded(t *testing.T) {
	url := embeddedRelay(t)
	ph, err := Lifecycle(testCtx(t), url, testKeys(t), LifecycleOptions{Events: 25, Size: 500})
	if err != nil {
		t.Fatal(err)
	}
	if ph.Counts["accepted"] != 25 || ph.Counts["delivered"] != 25 || ph.Counts["found"] != 25 {
		t.Fatalf("counts %v errors %v", ph.Counts, ph.Errors)
	}
	// Every stage is present for every sampled event.
	for _, s := range []string{StageOK, StageDeliver, StageReadOwn, StageReadAfterOK} {
		checkLatency(t, s, ph.Latency[s], 25)
	}
	if len(ph.Groups) != 4 || !ph.Verification.Passed {
		t.Fatalf("groups %d verification %+v", len(ph.Groups), ph.Verification)
	}
	// Reading one's write cannot come before the OK it follows.
	if ph.Latency[StageReadOwn].Min < ph.Latency[StageOK].Min {
		t.Errorf("read_your_write min %d < ok min %d", ph.Latency[StageReadOwn].Min, ph.Latency[StageOK].Min)
	}
	if !containsPrefix(ph.Notes, "slowest stage: ") {
		t.Errorf("no slowest stage in notes: %v", ph.Notes)
	}
}

func TestLifecycleMisbehaving(t *testing.T) {
	// Dropped events are OKed but never stored nor delivered: they must be
	// reported as never delivered and never found, within the bounds.
	r := testrelay.New(testrelay.Config{DropEvery: 4, DelayDeliveries: 20 * time.Millisecond})
	defer r.Close()
	ph, err := Lifecycle(testCtx(t), r.URL(), testKeys(t), LifecycleOptions{Base: Base{Timeout: 300 * time.Millisecond}, Events: 8, Size: 100, ReadTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if ph.Counts["never_delivered"] != 2 || ph.Counts["never_found"] != 2 || ph.Verification.Passed {
		t.Fatalf("counts %v verification %+v", ph.Counts, ph.Verification)
	}
	if d := ph.Latency[StageDeliver]; d.Count != 6 || d.Min < int64(20*time.Millisecond) {
		t.Fatalf("deliver %d samples, min %v", d.Count, time.Duration(d.Min))
	}
}

func containsPrefix(list []string, p string) bool {
	for _, s := range list {
		if len(s) >= len(p) && s[:len(p)] == p {
			return true
		}
	}
	return false
}
