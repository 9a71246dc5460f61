package workload

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

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

// smallMixedPlan is smallMixed's plan: three parts' events (180 in each
// part that publishes) and queries (24 in each that queries), and the
// read-back's REQs of up to 100 ids for the 360 events published.
const smallMixedPlan = 2*180 + 2*24 + 4

// checkPlanBar checks mixed's bar: its whole plan, total operations (three
// parts' events and queries, and the read-back's REQs), the only bar, counted
// up to the total, never past it nor back.
func checkPlanBar(t *testing.T, b *progressBars, total int64) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	want := fmt.Sprintf("mixed: %d operations in three parts of 600ms each, then the read-back of %d", total, total)
	if len(b.labels) != 1 || b.labels[0] != want {
		t.Fatalf("bars %q, want the plan alone: %q", b.labels, want)
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
// operations and the read-back's REQs before the first part starts (the
// progress display, --web's bar and relaybench_phase_planned read it),
// where each part booked its own as it started (the total went 800, 880,
// 1,760 and the bar read 94% with a whole part to come), and the plan left
// the read-back out (--web planned 8,400 operations, its finished phase
// requested 8,480); the count ends at the total when the read-back ends,
// and the accounts request the plan: the parts' operations (those a part's
// end left unsent too: not run), and a read-back REQ per 100 accepted
// events. The plain progress lines (not a terminal) end at the total too:
// they stopped at the last tenth ("Ended 410 of 412 operations...").
func TestMixedAnnouncesItsWholePlan(t *testing.T) {
	r, c := testrelay.Start(t, testrelay.Config{Verify: true}), testKeys(t)
	r.Add(c.Events...)
	var log, plain strings.Builder
	var logMu sync.Mutex
	bars := &progressBars{lines: func() int { logMu.Lock(); defer logMu.Unlock(); return strings.Count(log.String(), "\n") }}
	lines := progress.New(&plain, true)
	both := func(label string, total int64) func(int64) {
		bar := bars.progress(label, total)
		line, _ := lines.Phase(label, "", total) // plain lines: no stop to call
		return func(done int64) { bar(done); line(done) }
	}
	o := smallMixed
	o.Parts = func(part string) { logMu.Lock(); defer logMu.Unlock(); fmt.Fprintln(&log, part) }
	phs, err := o.Run(testCtx(t), Env{URL: r.URL(), Corpus: c, Progress: both})
	if err != nil {
		t.Fatal(err)
	}
	checkPlanBar(t, bars, smallMixedPlan)
	if want := fmt.Sprintf("  Ended %d of %d operations...\n", smallMixedPlan, smallMixedPlan); !strings.HasSuffix(plain.String(), want) {
		t.Errorf("plain progress lines end short of the plan's total (want %q):\n%s", want, plain.String())
	}
	if bars.before[0] != 0 {
		t.Errorf("the plan was announced after %d parts had started", bars.before[0])
	}
	ph := phs[0]
	ev, q, rd := account(t, ph, results.OpEvent), account(t, ph, results.OpQuery), account(t, ph, results.OpRead)
	if ev.Requested != 360 || q.Requested != 48 || rd.Requested != (ev.Accepted+99)/100 {
		t.Errorf("accounts: events %d requested, queries %d, read-back %d for %d accepted: want 360, 48 and a REQ per 100 accepted",
			ev.Requested, q.Requested, rd.Requested, ev.Accepted)
	}
	if ev.Accepted == 360 && ev.Requested+q.Requested+rd.Requested != smallMixedPlan {
		t.Errorf("every event accepted: the accounts request %d operations, the plan said %d", ev.Requested+q.Requested+rd.Requested, smallMixedPlan)
	}
}

// A part the user's Ctrl-C kept from running stays in the plan's total, and
// so does the read-back: their operations are booked cancelled in the
// accounts and counted as ended, so the count reaches the total and the
// accounts add up to what was planned.
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
	checkPlanBar(t, bars, smallMixedPlan)
	ev, q := account(t, ph, results.OpEvent), account(t, ph, results.OpQuery)
	if ev.Cancelled < 180 || !ev.Balanced() || ev.Requested != 360 {
		t.Errorf("event account %+v: want the together part's 180 cancelled, 360 planned and requested", ev)
	}
	if q.Requested != 48 || q.Cancelled < 24 || !q.Balanced() {
		t.Errorf("query account %+v: want 48 requested, the together part's 24 cancelled", q)
	}
	if rd := account(t, ph, results.OpRead); rd.Cancelled != rd.Requested {
		t.Errorf("read-back account %+v: want every REQ cancelled", rd)
	}
}

// TestMixedUnsentEventsAreNotRun: events a publishing part scheduled but
// could not send before its end were left out of the accounts (scheduled,
// not requested), so the plan announced before the run and the accounts
// after it differed by them. They are the plan's, not run: the event
// account requests all 360, adds up, and books those left unsent for a
// part's reason. A relay that takes 40 ms per EVENT on one worker, one
// EVENT in flight per publisher, cannot answer 300 events/s: most of each
// part's 180 are left unsent whatever the machine's speed.
func TestMixedUnsentEventsAreNotRun(t *testing.T) {
	o := smallMixed
	o.Window = 1
	ph, _ := runMixed(t, testrelay.Config{ProcessingTime: 40 * time.Millisecond, Workers: 1}, o)
	ev := account(t, ph, results.OpEvent)
	if ev.Requested != 360 || !ev.Balanced() || ev.NotRun < 180 || ev.NotRun != unsent(ev) {
		t.Errorf("event account %+v: want the plan's 360 requested, most not run for a part's end (%q)", ev, mixedUnsentHead)
	}
	if notes := strings.Join(ph.Notes, "\n"); !strings.Contains(notes, "of the 180 events scheduled in the part were still unsent 1s after its --duration ended (not run)") {
		t.Errorf("no note of the events left unsent:\n%s", notes)
	}
}
