package workload

import (
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
)

func TestBurstEmbedded(t *testing.T) {
	url := embeddedRelay(t)
	ph, err := Burst(testCtx(t), url, testKeys(t), BurstOptions{Bursts: 3, BurstSize: 150, Every: 400 * time.Millisecond, Connections: 2, BetweenRate: 100, Size: 200})
	if err != nil {
		t.Fatal(err)
	}
	if ph.Counts["accepted"] != 450+120 || ph.Counts["burst_events"] != 450 || ph.Counts["background_events"] != 120 {
		t.Fatalf("counts %v errors %v", ph.Counts, ph.Errors)
	}
	if len(ph.Groups) != 3 || ph.Groups[0].Name != "burst" || ph.Rates["burst_success_rate"] != 1 || ph.Rates["between_success_rate"] != 1 {
		t.Fatalf("groups %d rates %v", len(ph.Groups), ph.Rates)
	}
	checkLatency(t, "burst ok", ph.Groups[0].Latency["ok"], 450)
	// Every burst gets a verdict: recovered (with a time), not recovered, or
	// not judged (too little background before it, e.g. overlapping bursts).
	verdicts := ph.Counts["not_recovered"] + ph.Counts["recovery_unjudged"]
	if r := ph.Latency["recovery"]; r != nil {
		verdicts += r.Count
	}
	if verdicts != 3 {
		t.Errorf("%d verdicts for 3 bursts: %v", verdicts, ph.Notes)
	}
}

func TestBurstQueueingRelay(t *testing.T) {
	// One worker spending 500 µs per event: a burst of 100 queues for
	// 50 ms, so burst latency is high by construction and the background
	// recovers only after the queue drains.
	r := testrelay.New(testrelay.Config{Workers: 1, ProcessingTime: 500 * time.Microsecond})
	defer r.Close()
	ph, err := Burst(testCtx(t), r.URL(), testKeys(t), BurstOptions{Bursts: 2, BurstSize: 100, Every: 600 * time.Millisecond, Connections: 2, BetweenRate: 100, Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	b := ph.Groups[0].Latency["ok"]
	if b.Count != 200 || b.Percentiles["50"] < int64(10*time.Millisecond) {
		t.Fatalf("burst ok latency: %d samples, p50 %v", b.Count, time.Duration(b.Percentiles["50"]))
	}
	rec := ph.Latency["recovery"]
	if rec == nil || rec.Count+ph.Counts["not_recovered"]+ph.Counts["recovery_unjudged"] != 2 {
		t.Fatalf("recovery %+v counts %v notes %v", rec, ph.Counts, ph.Notes)
	}
	if rec.Count > 0 && rec.Min < int64(5*time.Millisecond) {
		t.Errorf("recovered %v after a burst that queues ≥ 25 ms", time.Duration(rec.Min))
	}
}
