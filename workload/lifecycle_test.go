package workload

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
)

func TestLifecycleEmbedded(t *testing.T) {
	url := embeddedURL(t, "memory")
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
	if !containsPrefix(ph.Notes, "slowest stage at p50: ") {
		t.Errorf("no slowest stage in notes: %v", ph.Notes)
	}
	// The notes name stages in words, as the group table does, and no
	// package of relaybench's.
	for _, n := range ph.Notes {
		if strings.Contains(n, "wire") || strings.Contains(n, " ok (") || strings.Contains(n, " deliver (") ||
			(strings.HasPrefix(n, "slowest stage at p50: ") && !strings.Contains(n, "of OK (EVENT write → OK read), live delivery (")) {
			t.Errorf("note names a stage by its key or a package: %q", n)
		}
	}
}

func TestLifecycleMisbehaving(t *testing.T) {
	// Dropped events are OKed but never stored nor delivered: they must be
	// reported as never delivered and never found, within the bounds.
	r := testrelay.Start(t, testrelay.Config{DropEvery: 4, DelayDeliveries: 20 * time.Millisecond})
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

// runLifecycle runs Lifecycle against a test relay with cfg that checks
// every EVENT's signature, with short timeouts, and asserts that every
// account is there and balanced (allBalanced).
func runLifecycle(t *testing.T, cfg testrelay.Config, o LifecycleOptions) results.Phase {
	t.Helper()
	cfg.Verify = true
	r := testrelay.Start(t, cfg)
	if o.Size == 0 {
		o.Size = 100
	}
	if o.Timeout == 0 {
		o.Timeout = 400 * time.Millisecond
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = 100 * time.Millisecond
	}
	ph, err := Lifecycle(testCtx(t), r.URL(), testKeys(t), o)
	if err != nil {
		t.Fatal(err)
	}
	allBalanced(t, ph)
	return ph
}

func allBalanced(t *testing.T, ph results.Phase) {
	t.Helper()
	for _, op := range []string{results.OpEvent, results.OpDelivery, results.OpRead, results.OpSub} {
		account(t, ph, op)
	}
}

func TestLifecycleHonestRelayBalanced(t *testing.T) {
	ph := runLifecycle(t, testrelay.Config{}, LifecycleOptions{Events: 10})
	wantSplit(t, ph, results.OpEvent, split{acc: 10})
	wantSplit(t, ph, results.OpDelivery, split{acc: 10})
	wantSplit(t, ph, results.OpRead, split{acc: 10})
	wantSplit(t, ph, results.OpSub, split{acc: 1})
	if v := ph.Verification; !v.Passed || v.Expected != 20 || v.Missing != 0 {
		t.Fatalf("verification %+v", v)
	}
	for _, s := range lifeStages {
		if ph.Latency[s].Count != 10 {
			t.Errorf("%s: %d samples, want 10", s, ph.Latency[s].Count)
		}
	}
	if ph.Aborted != "" {
		t.Errorf("aborted: %s", ph.Aborted)
	}
}

func TestLifecycleInvalidDeliveriesFailVerification(t *testing.T) {
	// Deliveries 3, 6 and 9 are corrupted: counted invalid, not credited,
	// and (no valid copy ever comes) missing.
	ph := runLifecycle(t, testrelay.Config{InvalidDeliveriesEvery: 3}, LifecycleOptions{Events: 9})
	v := ph.Verification
	if v.Passed || v.Invalid != 3 || v.Missing != 3 {
		t.Fatalf("verification %+v", v)
	}
	wantSplit(t, ph, results.OpDelivery, split{acc: 6, to: 3})
	wantSplit(t, ph, results.OpRead, split{acc: 9})
	if n := ph.Latency[StageDeliver].Count; n != 6 {
		t.Errorf("deliver histogram credits %d, want the 6 valid deliveries", n)
	}
}

func TestLifecycleInvalidEventsFailVerification(t *testing.T) {
	// Every 4th event the relay sends (answers and deliveries) is corrupted.
	ph := runLifecycle(t, testrelay.Config{InvalidEvery: 4}, LifecycleOptions{Events: 12})
	v := ph.Verification
	if v.Passed || v.Invalid == 0 {
		t.Fatalf("a relay corrupting events passed: %+v", v)
	}
	d, r := account(t, ph, results.OpDelivery), account(t, ph, results.OpRead)
	if ph.Latency[StageDeliver].Count != d.Accepted || ph.Latency[StageReadOwn].Count != r.Accepted {
		t.Errorf("histograms %d/%d, accounts %d/%d", ph.Latency[StageDeliver].Count, ph.Latency[StageReadOwn].Count, d.Accepted, r.Accepted)
	}
	if d.Accepted+r.Accepted+v.Invalid < 24 {
		t.Errorf("%d valid copies credited and %d invalid for 24 expected", d.Accepted+r.Accepted, v.Invalid)
	}
}

// Deliveries 2, 4 and 6 of 7 come twice. The 7th is not duplicated: the
// copy of the 6th comes before it on the subscriber's connection, so it is
// read before the phase ends (a duplicated last delivery could be read
// after it, or not).
func TestLifecycleDuplicatesAreNotMissing(t *testing.T) {
	ph := runLifecycle(t, testrelay.Config{DuplicateDeliveriesEvery: 2}, LifecycleOptions{Events: 7})
	v := ph.Verification
	if v.Passed || v.Duplicated != 3 || v.Missing != 0 {
		t.Fatalf("verification %+v", v)
	}
	wantSplit(t, ph, results.OpDelivery, split{acc: 7})
	if ph.Counts["never_delivered"] != 0 || ph.Latency[StageDeliver].Count != 7 {
		t.Errorf("counts %v deliver samples %d", ph.Counts, ph.Latency[StageDeliver].Count)
	}
}

func TestLifecycleDroppedDeliveriesStallThenEnd(t *testing.T) {
	// No delivery ever comes: after 3 misses in a row the rest are awaited
	// together; every one is timed out and missing, none credited.
	ph := runLifecycle(t, testrelay.Config{DropDeliveriesEvery: 1}, LifecycleOptions{Base: Base{Timeout: 200 * time.Millisecond}, Events: 8})
	wantSplit(t, ph, results.OpDelivery, split{to: 8})
	wantSplit(t, ph, results.OpRead, split{acc: 8})
	if v := ph.Verification; v.Passed || v.Missing != 8 {
		t.Fatalf("verification %+v", v)
	}
	if ph.Latency[StageDeliver].Count != 0 {
		t.Errorf("deliver histogram credits %d", ph.Latency[StageDeliver].Count)
	}
}

func TestLifecycleRefusalsByClass(t *testing.T) {
	ph := runLifecycle(t, testrelay.Config{RefuseEvery: 3, RefuseReason: "rate-limited: slow down"}, LifecycleOptions{Events: 9})
	wantSplit(t, ph, results.OpEvent, split{acc: 6, ref: 3})
	if a := account(t, ph, results.OpEvent); a.RefusedBy["rate-limited"] != 3 {
		t.Errorf("refused by %v", a.RefusedBy)
	}
	wantSplit(t, ph, results.OpDelivery, split{acc: 6})
	wantSplit(t, ph, results.OpRead, split{acc: 6})
	if h := ph.Latency["ok_refused"]; h == nil || h.Count != 3 {
		t.Errorf("ok_refused %+v", h)
	}
	if !ph.Verification.Passed {
		t.Errorf("verification %+v", ph.Verification)
	}
}

func TestLifecycleNeverOKAborts(t *testing.T) {
	ph := runLifecycle(t, testrelay.Config{NeverOK: true}, LifecycleOptions{Base: Base{Timeout: 200 * time.Millisecond}, Events: 50})
	wantSplit(t, ph, results.OpEvent, split{to: 3, notRun: 47})
	if ph.Aborted == "" {
		t.Error("no Aborted line")
	}
	if !ph.Verification.Passed {
		t.Errorf("nothing accepted, nothing wrong: %+v", ph.Verification)
	}
}

func TestLifecycleNoEOSEAborts(t *testing.T) {
	// The live subscription and two reads get no EOSE: the phase stops.
	ph := runLifecycle(t, testrelay.Config{NoEOSE: true}, LifecycleOptions{Base: Base{Timeout: 200 * time.Millisecond}, Events: 50})
	wantSplit(t, ph, results.OpSub, split{to: 1})
	wantSplit(t, ph, results.OpEvent, split{acc: 2, notRun: 48})
	wantSplit(t, ph, results.OpRead, split{to: 2})
	if ph.Aborted == "" {
		t.Error("no Aborted line")
	}
	if v := ph.Verification; v.Missing != 0 || !v.Passed {
		t.Errorf("unanswered reads counted as wrong answers: %+v", v)
	}
}

func TestLifecycleConnectionsClosed(t *testing.T) {
	// Each connection is closed at its 4th message: the publisher loses
	// events 4 and 8 (its redials carry on), nothing is silently dropped.
	ph := runLifecycle(t, testrelay.Config{CloseAfter: 4}, LifecycleOptions{Events: 10})
	wantSplit(t, ph, results.OpEvent, split{acc: 8, lost: 2})
	r := account(t, ph, results.OpRead)
	if r.Requested != 8 || r.ConnLost+r.NotRun+r.Accepted != 8 {
		t.Errorf("reads %+v", r)
	}
	if v := ph.Verification; v.Missing != 0 {
		t.Errorf("lost connections counted as missing events: %+v", v)
	}
}

func TestLifecycleCancelledMidPhase(t *testing.T) {
	o := LifecycleOptions{Base: Base{Timeout: 10 * time.Second}, Events: 200, Size: 100, ReadTimeout: 2 * time.Second}
	ph := runCancelled(t, testrelay.Config{OKDelay: 20 * time.Millisecond}, 5, func(ctx context.Context, url string) (results.Phase, error) {
		return Lifecycle(ctx, url, testKeys(t), o)
	})
	allBalanced(t, ph)
	for _, a := range ph.Accounts {
		if a.TimedOut+a.ConnLost+a.NotRun > 0 {
			t.Errorf("interrupt blamed on the relay: %+v", a)
		}
	}
	if a := account(t, ph, results.OpEvent); a.Cancelled == 0 || a.Accepted < 4 {
		t.Errorf("events %+v", a)
	}
	if v := ph.Verification; !v.Passed || v.Missing != 0 {
		t.Errorf("interrupt failed verification: %+v", v)
	}
	if ph.Aborted != "" {
		t.Errorf("aborted: %s", ph.Aborted)
	}
}

func TestLifecycleRelayStalls(t *testing.T) {
	// The relay stops handling messages after its 19th (1 REQ, then 3 per
	// event: EVENT, REQ, CLOSE): the phase stops after 3 EVENTs without OK.
	ph := runLifecycle(t, testrelay.Config{StallAfter: 19}, LifecycleOptions{Base: Base{Timeout: 200 * time.Millisecond}, Events: 40})
	// Which message is the 20th depends on whether the last read's CLOSE
	// reaches the relay before the next EVENT: 6 or 7 events get through.
	if a := account(t, ph, results.OpEvent); a.TimedOut != 3 || a.Accepted < 6 || a.Accepted+a.NotRun != 37 || a.NotRunBy["phase aborted"] != a.NotRun {
		t.Errorf("events %+v", a)
	}
	if ph.Aborted == "" {
		t.Error("no Aborted line")
	}
	if v := ph.Verification; !v.Passed {
		t.Errorf("a stalled relay counted as wrong answers: %+v", v)
	}
}

func TestLifecycleRelayDies(t *testing.T) {
	ph := runLifecycle(t, testrelay.Config{KillAfterEvents: 5}, LifecycleOptions{Events: 20})
	wantSplit(t, ph, results.OpEvent, split{acc: 4, lost: 1, notRun: 15})
	wantSplit(t, ph, results.OpDelivery, split{acc: 4})
	if v := ph.Verification; !v.Passed {
		t.Errorf("a dead relay counted as wrong answers: %+v", v)
	}
}

// TestLifecycleInvalidAnswersStopEarly: a relay that corrupts every event
// it sends would have each read-back retried to its deadline (minutes for
// 100 events). A run of answers that all fail verification stops the phase
// at once, with one line; the invalid answers fail verification (exit 3).
// Asserted on the REQs the relay got, not on time.
func TestLifecycleInvalidAnswersStopEarly(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{Verify: true, InvalidEvery: 1})
	// Generous timeouts: hang guards only, so a loaded machine times
	// nothing out before the run of wrong answers stops the phase.
	o := LifecycleOptions{Base: Base{Timeout: 20 * time.Second}, Size: 100, Events: 30, ReadTimeout: 60 * time.Second}
	ph, err := Lifecycle(testCtx(t), r.URL(), testKeys(t), o)
	if err != nil {
		t.Fatal(err)
	}
	allBalanced(t, ph)
	if !strings.Contains(ph.Aborted, "failed verification") {
		t.Errorf("Aborted %q, want the run of wrong answers named", ph.Aborted)
	}
	// One live subscription, then a read-back retried until the run of
	// wrong answers (the watchdog's limit, 3) stopped the phase.
	if n := r.Stats().REQs; n > 1+3 {
		t.Errorf("the relay got %d REQs: the phase did not stop after a run of wrong answers", n)
	}
	if ev := account(t, ph, results.OpEvent); ev.Accepted != 1 || ev.NotRun != 29 {
		t.Errorf("events %+v, want 1 accepted and 29 not run (aborted)", ev)
	}
	if v := ph.Verification; v.Status() != results.VerificationFailed || v.Invalid < 3 {
		t.Errorf("verification %+v, want failed with the invalid answers", v)
	}
	if wrong, _, _ := judge.Phase(&ph); len(wrong) == 0 {
		t.Error("the judge does not call invalid answers wrong (exit 3)")
	}
}

// The notes say the stages in words ("read your write", "read after OK"),
// as the summary's group table does; the results file keeps the keys.
func TestLifecycleNotesInWords(t *testing.T) {
	ph := runLifecycle(t, testrelay.Config{}, LifecycleOptions{Events: 4, Size: 100})
	for _, s := range lifeStages {
		if lifeStageWords[s] == "" {
			t.Errorf("stage %s has no words", s)
		}
	}
	if !containsPrefix(ph.Notes, "read your write: REQ {ids:[id]}") || !containsPrefix(ph.Notes, "slowest stage at p50: ") {
		t.Errorf("notes: %q", ph.Notes)
	}
	for _, n := range ph.Notes {
		for _, key := range []string{StageReadOwn, StageReadAfterOK} {
			if strings.Contains(n, key) {
				t.Errorf("note says the key %s: %q", key, n)
			}
		}
	}
}

// TestLifecycleLateDeliveryIsNotMissing: a delivery that came after its
// deadline but before the phase ended stays timed out (the relay was slow)
// and is not missing in the verification: the event did reach the live
// subscription, so the run is incomplete, not wrong. One that never came is
// missing.
func TestLifecycleLateDeliveryIsNotMissing(t *testing.T) {
	lr := &lifeRun{o: LifecycleOptions{Base: Base{Timeout: time.Second}}}
	lr.recs = []lifeRecord{
		{sent: 1, ok: 2, deliver: 3, event: outcome.Accepted, delivery: outcome.Accepted},
		{sent: 1, ok: 2, deliver: 9e9, event: outcome.Accepted, delivery: outcome.TimedOut}, // late
		{sent: 1, ok: 2, event: outcome.Accepted, delivery: outcome.TimedOut},               // never
	}
	tl := lr.tally()
	if tl.counts["never_delivered"] != 1 || tl.lateDeliv != 1 || tl.counts["delivered"] != 1 {
		t.Errorf("counts %v, late %d: want 1 never delivered, 1 late, 1 delivered", tl.counts, tl.lateDeliv)
	}
	if h := tl.hists[StageDeliver]; h.Count() != 1 {
		t.Errorf("delivery latency holds %d samples, want the one delivered in time", h.Count())
	}
	if notes := strings.Join(lr.phaseNotes(tl), "\n"); !strings.Contains(notes, "1 delivery arrived after its 1s deadline: timed out (the relay was slow), not missing") {
		t.Errorf("no note of the late delivery:\n%s", notes)
	}
}

// TestLifecycleNoteThreeFigures: the slowest stage's latencies in the note
// have three significant figures, as every figure in a note (numfmt.Dur):
// "p99 6.80ms", where %v of a rounded duration dropped the zero ("6.8ms").
func TestLifecycleNoteThreeFigures(t *testing.T) {
	lr := &lifeRun{o: LifecycleOptions{Events: 1, Size: 10}}
	tl := lr.tally()
	for _, ns := range []int64{6_800_000, 6_800_000} {
		tl.hists[StageOK].Record(ns)
	}
	notes := lr.phaseNotes(tl)
	if len(notes) == 0 || !strings.HasPrefix(notes[0], "slowest stage at p50: OK (p50 6.80ms, p99 6.80ms), ") {
		t.Errorf("slowest-stage note %q, want p50 6.80ms, p99 6.80ms", notes)
	}
}
