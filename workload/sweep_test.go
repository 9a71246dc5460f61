package workload

import (
	"strconv"
	"testing"

	"github.com/relaybench/relaybench/nip11"
)

func TestSweepEmbedded(t *testing.T) {
	url := embeddedRelay(t)
	var skipped []int
	sizes := []int{100, 2000, 700000}
	phases, err := Sweep(testCtx(t), url, testKeys(t), SweepOptions{
		Sizes: sizes, Events: 50, Subscribers: 2,
		OnSkip: func(size int, reason string) { skipped = append(skipped, size) },
	})
	if err != nil {
		t.Fatal(err)
	}
	// 700000 bytes is above the embedded relay's announced max_message_length.
	if len(skipped) != 1 || skipped[0] != 700000 {
		t.Fatalf("skipped %v", skipped)
	}
	if len(phases) != 2 {
		t.Fatalf("%d phases", len(phases))
	}
	for i, ph := range phases {
		if ph.Name != "sweep/"+strconv.Itoa(sizes[i]) || ph.Workload != "sweep" || ph.Params["size"] != sizes[i] {
			t.Errorf("phase %q %q %v", ph.Name, ph.Workload, ph.Params["size"])
		}
		if ph.Rates["msgs_per_sec"] <= 0 || ph.Rates["mb_per_sec"] <= 0 {
			t.Errorf("%s rates %v", ph.Name, ph.Rates)
		}
		checkLatency(t, ph.Name+" ok", ph.Latency["ok"], 50)
		checkLatency(t, ph.Name+" deliver", ph.Latency["deliver"], 100)
		if !ph.Verification.Passed {
			t.Errorf("%s verification %+v", ph.Name, ph.Verification)
		}
	}
	if !containsPrefix(phases[0].Notes, "sweep size skipped: ") {
		t.Errorf("skip not noted: %v", phases[0].Notes)
	}
	// Bigger events, more bytes per event.
	if phases[1].Counts["bytes_sent"] <= phases[0].Counts["bytes_sent"] {
		t.Errorf("bytes %d vs %d", phases[1].Counts["bytes_sent"], phases[0].Counts["bytes_sent"])
	}
}

func TestSweepContentLimit(t *testing.T) {
	url := embeddedRelay(t)
	var reasons []string
	phases, err := Sweep(testCtx(t), url, testKeys(t), SweepOptions{
		Sizes: []int{64, 4096}, Events: 10, Limits: &nip11.Limitation{MaxContentLength: 1000},
		OnSkip: func(size int, reason string) { reasons = append(reasons, reason) },
	})
	if err != nil || len(phases) != 1 || len(reasons) != 1 {
		t.Fatalf("err %v phases %d skipped %v", err, len(phases), reasons)
	}
}
