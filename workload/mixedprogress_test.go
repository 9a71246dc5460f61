package workload

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/results"
)

// progressBars records a workload's progress reporters: each one's label
// and total, and its counts (the reporters may be called from any
// goroutine).
type progressBars struct {
	mu     sync.Mutex
	labels []string
	counts [][]int64
	before []int // log lines written when each was announced
	lines  func() int
}

func (b *progressBars) progress(label string, total int64) func(int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	shown, _ := progress.Split(label) // the label shown, without its count lines' form
	b.labels = append(b.labels, fmt.Sprintf("%s of %d", shown, total))
	b.counts = append(b.counts, nil)
	if b.lines != nil {
		b.before = append(b.before, b.lines())
	}
	i := len(b.counts) - 1
	return func(done int64) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.counts[i] = append(b.counts[i], done)
	}
}

// get is each bar's label and last count.
func (b *progressBars) get() ([]string, []int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	last := make([]int64, len(b.counts))
	for i, c := range b.counts {
		if len(c) > 0 {
			last[i] = c[len(c)-1]
		}
	}
	return append([]string(nil), b.labels...), last
}

// checkPlanBar checks mixed's first bar: its whole plan, total operations
// (three parts' events and queries), counted up to the total, never past it
// nor back.
func checkPlanBar(t *testing.T, b *progressBars, total int64) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	want := fmt.Sprintf("mixed: %d operations in three parts of 600ms each of %d", total, total)
	if len(b.labels) == 0 || b.labels[0] != want {
		t.Fatalf("bars %q, want the plan first: %q", b.labels, want)
	}
	c := b.counts[0]
	for i := range c {
		if c[i] > total || (i > 0 && c[i] < c[i-1]) {
			t.Fatalf("plan counts %v: past the total %d or back", c, total)
		}
	}
	if len(c) == 0 || c[len(c)-1] != total {
		t.Errorf("plan counts %v, want them to end at the total %d", c, total)
	}
}

// TestMixedAnnouncesItsWholePlan: mixed announces the three parts'
// operations before the first part starts (the progress display, --web's
// bar and relaybench_phase_planned read it), where each part booked its own
// as it started (the total went 800, 880, 1,760 and the bar read 94% with
// a whole part to come); the count ends at the total when the parts end.
func TestMixedAnnouncesItsWholePlan(t *testing.T) {
	r, c := testrelay.Start(t, testrelay.Config{Verify: true}), testKeys(t)
	r.Add(c.Events...)
	var log strings.Builder
	var logMu sync.Mutex
	bars := &progressBars{lines: func() int { logMu.Lock(); defer logMu.Unlock(); return strings.Count(log.String(), "\n") }}
	o := smallMixed
	o.Parts = func(part string) { logMu.Lock(); defer logMu.Unlock(); fmt.Fprintln(&log, part) }
	if _, err := o.Run(testCtx(t), Env{URL: r.URL(), Corpus: c, Progress: bars.progress}); err != nil {
		t.Fatal(err)
	}
	checkPlanBar(t, bars, 2*180+2*24)
	if bars.before[0] != 0 {
		t.Errorf("the plan was announced after %d parts had started", bars.before[0])
	}
}

// A part the user's Ctrl-C kept from running stays in the plan's total: its
// operations are booked cancelled in the accounts and counted as ended, so
// the count reaches the total and the accounts add up to what was planned.
func TestMixedPlanKeepsPartsNotRun(t *testing.T) {
	r, c := testrelay.Start(t, testrelay.Config{Verify: true}), testKeys(t)
	r.Add(c.Events...)
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	bars := &progressBars{}
	o := smallMixed
	o.Parts = func(part string) {
		if part == "query/alone" {
			cancel() // the together part will not run
		}
	}
	o.progressFor = bars.progress
	ph, _ := Mixed(ctx, r.URL(), c, o)
	checkPlanBar(t, bars, 2*180+2*24)
	ev, q := account(t, ph, results.OpEvent), account(t, ph, results.OpQuery)
	if ev.Cancelled < 180 || !ev.Balanced() || ev.Requested+ph.Counts["publish_alone_cut"] != 360 {
		t.Errorf("event account %+v (cut %d): want the together part's 180 cancelled, 360 planned", ev, ph.Counts["publish_alone_cut"])
	}
	if q.Requested != 48 || q.Cancelled < 24 || !q.Balanced() {
		t.Errorf("query account %+v: want 48 requested, the together part's 24 cancelled", q)
	}
}
