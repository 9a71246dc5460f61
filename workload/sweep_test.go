package workload

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/results"
)

func TestSweepEmbedded(t *testing.T) {
	url := embeddedURL(t, "memory")
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
	url := embeddedURL(t, "memory")
	var reasons []string
	phases, err := Sweep(testCtx(t), url, testKeys(t), SweepOptions{
		Sizes: []int{64, 4096}, Events: 10, Limits: &nip11.Limitation{MaxContentLength: 1000},
		OnSkip: func(size int, reason string) { reasons = append(reasons, reason) },
	})
	if err != nil || len(phases) != 1 || len(reasons) != 1 {
		t.Fatalf("err %v phases %d skipped %v", err, len(phases), reasons)
	}
}

func TestSweepPhasesCarryAccounts(t *testing.T) {
	// Every 3rd live delivery (relay-wide) is sent twice: 6 of the first
	// size's 20 deliveries, 7 of the second's (never the last one, whose
	// second copy could come after the phase ended). Duplicates are counted,
	// never credited.
	r := testrelay.Start(t, testrelay.Config{Verify: true, DuplicateDeliveriesEvery: 3})
	phases, err := Sweep(testCtx(t), r.URL(), testKeys(t), SweepOptions{Sizes: []int{100, 300}, Events: 20, Mode: ModeWait, Grace: 500 * time.Millisecond})
	if err != nil || len(phases) != 2 {
		t.Fatalf("err %v, %d phases", err, len(phases))
	}
	for i, ph := range phases {
		wantSplit(t, ph, results.OpSub, split{acc: 1})
		wantSplit(t, ph, results.OpEvent, split{acc: 20})
		wantSplit(t, ph, results.OpDelivery, split{acc: 20})
		checkCredited(t, ph)
		if v := ph.Verification; v.Passed || v.Duplicated != int64(6+i) || v.Missing != 0 {
			t.Errorf("%s: verification %+v", ph.Name, v)
		}
	}
}

// TestSweepPlanStatedBeforeWork: a size whose --events would pre-sign more
// than the sweep's budget of content is planned with fewer events; the plan
// is said before any work (the progress label), and the phase's events
// (params, accounts) are that plan, so "all requested work ran" is true.
// Every size is skipped here (the announced max_content_length), so no
// event is signed.
func TestSweepPlanStatedBeforeWork(t *testing.T) {
	if n := sweepCount(2000, 131072); n != 1024 {
		t.Errorf("sweepCount(2000, 131072) = %d, want 1024", n)
	}
	if n := sweepCount(2000, 1<<30); n != 200 {
		t.Errorf("sweepCount(2000, 1 GiB) = %d, want the floor 200", n)
	}
	// The plan is said whether or not a size is capped.
	if p := sweepPlan(200, []int{256, 1024, 4096}); p != "Sweeping 3 sizes (256, 1,024 and 4,096 bytes), 200 events each" {
		t.Errorf("no size capped, plan %q", p)
	}
	var label string
	env := Env{URL: "ws://127.0.0.1:1", Corpus: testKeys(t), Progress: func(l string, _ int64) func(int64) {
		label = l
		return func(int64) {}
	}}
	o := SweepOptions{Sizes: []int{256, 131072}, Events: 2000, Limits: &nip11.Limitation{MaxContentLength: 1}}
	if _, err := o.Run(testCtx(t), env); !errors.Is(err, ErrNoSize) {
		t.Fatalf("err %v, want %v", err, ErrNoSize)
	}
	if want := "Sweeping 2 sizes (256 and 131,072 bytes), 2,000 events each; 1,024 at 131,072 bytes: at most 128 MiB"; !strings.HasPrefix(label, want) || strings.Contains(label, "at 256 bytes") {
		t.Errorf("progress label %q does not state the plan at 131072 bytes only", label)
	}
}

// TestSweepOneMemoryFigure: the same idle subscriptions, measured at each
// size, give one client-memory figure, the first size's; a later size's
// reading (here the "not measurable" one that contradicted it) is replaced
// by a note saying where the figure is, and its counts go with it.
func TestSweepOneMemoryFigure(t *testing.T) {
	mk := func(name string, idle int64) results.Phase {
		ph := results.NewPhase(name, "sweep")
		ph.Notes = append(ph.Notes, "deliveries verified")
		connScale(&ph, 400, 100<<20, 100<<20+idle, nil, "the sweep command's --subscribers")
		ph.Notes = append(ph.Notes, "delivery latency: p99 1ms")
		return ph
	}
	phases := []results.Phase{mk("sweep/256", 9<<20), mk("sweep/1024", 1<<20), mk("sweep/4096", 10<<20)}
	oneMemoryFigure(phases)
	oneMemoryFigure(phases) // Run and Sweep both apply it: idempotent
	first := strings.Join(phases[0].Notes, "\n")
	if !strings.Contains(first, "client memory for 400 idle subscriptions") || phases[0].Counts[results.CountClientBytesPerSub] == 0 {
		t.Fatalf("first size lost its figure: %q %v", first, phases[0].Counts)
	}
	for _, ph := range phases[1:] {
		notes := strings.Join(ph.Notes, "\n")
		if strings.Contains(notes, "not measurable") || strings.Contains(notes, "client memory for") ||
			strings.Count(notes, "client memory of the idle subscriptions: given once, at the first size (256 bytes;") != 1 {
			t.Errorf("%s: %q", ph.Name, notes)
		}
		if _, ok := ph.Counts[results.CountClientRSSIdle]; ok {
			t.Errorf("%s keeps its reading: %v", ph.Name, ph.Counts)
		}
		if len(ph.Notes) != 3 || ph.Notes[0] != "deliveries verified" {
			t.Errorf("%s: other notes changed: %q", ph.Name, ph.Notes)
		}
	}
}

// TestSweepMemoryNotMeasurableAtFirst: when the first size's reading was
// not measurable (2 subscribers hold far less than the floor), a later
// size says so, never that the figure is "given once, at the first size"
// (a 2-subscriber sweep's 4 KiB size pointed to a figure the 256 B size's
// note said it could not give); and a first size with no reading at all
// is pointed to by no size.
func TestSweepMemoryNotMeasurableAtFirst(t *testing.T) {
	mk := func(name string, idle int64) results.Phase {
		ph := results.NewPhase(name, "sweep")
		connScale(&ph, 2, 100<<20, 100<<20+idle, nil, "the sweep command's --subscribers")
		return ph
	}
	phases := []results.Phase{mk("sweep/256", 64<<10), mk("sweep/4096", 9<<20)}
	oneMemoryFigure(phases)
	if first := strings.Join(phases[0].Notes, "\n"); !strings.Contains(first, "client memory per subscription not measurable") {
		t.Fatalf("first size: %q", first)
	}
	later := strings.Join(phases[1].Notes, "\n")
	if strings.Contains(later, "given once") || strings.Contains(later, "client memory for") ||
		!strings.Contains(later, "client memory of the idle subscriptions: not measurable at the first size (256 bytes; its note says why), and not at this size either: the same subscriptions opened again here reuse memory") {
		t.Errorf("later size contradicts the first: %q", later)
	}
	if _, ok := phases[1].Counts[results.CountClientBytesPerSub]; ok {
		t.Errorf("later size keeps its reading: %v", phases[1].Counts)
	}
	none := []results.Phase{results.NewPhase("sweep/256", "sweep"), mk("sweep/4096", 9<<20)}
	oneMemoryFigure(none)
	if n := strings.Join(none[1].Notes, "\n"); strings.Contains(n, "client memory") {
		t.Errorf("the first size has no reading, a later one points to it or keeps its own: %q", n)
	}
}
