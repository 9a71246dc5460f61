package workload

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/results"
)

func TestBurstEmbedded(t *testing.T) {
	url := embeddedURL(t, "memory")
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
	r := testrelay.Start(t, testrelay.Config{Workers: 1, ProcessingTime: 500 * time.Microsecond})
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
	// When recovery is judged is TestBurstRecoveryJudgement's: here the
	// background's own latency (its baseline) depends on the machine's load.
}

// TestBurstRecoveryJudgement: recovery is the time from a burst's start to
// the first of RecoveryRun consecutive background OKs within the limit,
// before the next burst; a lone fast OK does not end it.
func TestBurstRecoveryJudgement(t *testing.T) {
	ms := int64(time.Millisecond)
	b := &burstResult{o: BurstOptions{Bursts: 2, Every: 600 * time.Millisecond, RecoveryWithin: 0.5, RecoveryRun: 3},
		s: burstSchedule{burstAt: []int64{300 * ms, 900 * ms}}}
	var bg []bgPoint
	add := func(from, to, lat int64) {
		for at := from; at < to; at += 10 * ms {
			bg = append(bg, bgPoint{at, lat})
		}
	}
	add(0, 300*ms, 2*ms)       // before burst 1: median 2 ms, limit 3 ms
	add(300*ms, 350*ms, 40*ms) // queued behind burst 1
	bg = append(bg, bgPoint{355 * ms, 1 * ms}, bgPoint{356 * ms, 50 * ms})
	add(360*ms, 600*ms, 2*ms) // recovered at 360 ms: 60 ms after the burst
	add(600*ms, 900*ms, 2*ms)
	add(900*ms, 1500*ms, 40*ms) // burst 2 never recovers
	median, ok := b.preBurstMedian(bg, 0)
	if !ok || median != 2*ms {
		t.Fatalf("pre-burst median %v %v", time.Duration(median), ok)
	}
	if d, ok := b.recoveredAfter(bg, 0, median); !ok || d != 60*ms {
		t.Errorf("burst 1 recovered after %v (%v), want 60ms", time.Duration(d), ok)
	}
	b.burstEnd = []int64{350 * ms, 0}
	if median, ok = b.preBurstMedian(bg, 1); !ok || median != 2*ms {
		t.Fatalf("burst 2 pre-burst median %v %v", time.Duration(median), ok)
	}
	if d, ok := b.recoveredAfter(bg, 1, median); ok {
		t.Errorf("burst 2 recovered after %v; its background stayed 20× the median", time.Duration(d))
	}
	if _, ok := b.preBurstMedian(bg[:2], 0); ok {
		t.Error("a median judged from 2 background OKs")
	}
}

// TestBurstNotRecoveredNoteNamesItsEnd: a burst whose background latency
// never returned is noted "before the next burst", and the last one, which
// has no next burst, "before the run ended".
func TestBurstNotRecoveredNoteNamesItsEnd(t *testing.T) {
	ms := int64(time.Millisecond)
	b := &burstResult{o: BurstOptions{Bursts: 2, Every: 600 * time.Millisecond, RecoveryWithin: 0.5, RecoveryRun: 10},
		s: burstSchedule{burstAt: []int64{300 * ms, 900 * ms}}, out: &liveOut{},
		burstEnd: []int64{850 * ms, 950 * ms}, sent: []bool{true, true}}
	for at := int64(0); at < 1500*ms; at += 10 * ms {
		lat := 2 * ms // the median before each burst
		if (at >= 300*ms && at < 850*ms) || at >= 900*ms {
			lat = 40 * ms // never 10 OKs in a row back within 50%
		}
		b.s.offs = append(b.s.offs, at)
		b.out.outcomes = append(b.out.outcomes, Accepted)
		b.out.okSent = append(b.out.okSent, 0)
		b.out.okRecv = append(b.out.okRecv, lat)
		b.s.nBg++
	}
	ph := results.Phase{Counts: map[string]int64{}, Latency: map[string]*results.Histogram{}}
	b.recovery(&ph)
	want := []string{
		"burst 1: background latency did not return within 50% of its pre-burst median 2.00ms before the next burst",
		"burst 2: background latency did not return within 50% of its pre-burst median 2.00ms before the run ended",
	}
	if ph.Counts["not_recovered"] != 2 || strings.Join(ph.Notes, "\n") != strings.Join(want, "\n") {
		t.Errorf("not recovered %d, notes:\n%s\nwant:\n%s", ph.Counts["not_recovered"], strings.Join(ph.Notes, "\n"), strings.Join(want, "\n"))
	}
}

// smallBurst: 2 bursts of 40 events over 2 connections, background 20/s:
// 80 + 12 = 92 events.
var smallBurst = BurstOptions{Base: Base{Timeout: 400 * time.Millisecond}, Bursts: 2, BurstSize: 40, Every: 300 * time.Millisecond, Connections: 2, BetweenRate: 20, Size: 100}

// runBurst runs Burst against a test relay with cfg that checks every
// EVENT's signature.
func runBurst(t *testing.T, cfg testrelay.Config, o BurstOptions) results.Phase {
	t.Helper()
	cfg.Verify = true
	r := testrelay.Start(t, cfg)
	ph, err := Burst(testCtx(t), r.URL(), testKeys(t), o)
	if err != nil {
		t.Fatal(err)
	}
	return ph
}

// checkBurstAccounts asserts the event account is balanced and that the
// groups' outcomes add up to it (that OK latency and the accepted counter
// credit accepted events only is TestEveryWorkloadKeepsTheBooks's).
func checkBurstAccounts(t *testing.T, ph results.Phase) results.Account {
	t.Helper()
	a := account(t, ph, results.OpEvent)
	sum := map[string]int64{}
	for _, g := range ph.Groups {
		var n int64
		for _, k := range []string{"accepted", "refused", "timed_out", "failed", "not_sent", "cancelled"} {
			sum[k] += g.Counts[k]
			n += g.Counts[k]
		}
		if n != g.Counts["requested"] {
			t.Errorf("group %s: outcomes %d for %d requested: %v", g.Name, n, g.Counts["requested"], g.Counts)
		}
		sum["requested"] += g.Counts["requested"]
	}
	want := map[string]int64{"requested": a.Requested, "accepted": a.Accepted, "refused": a.Refused, "timed_out": a.TimedOut,
		"failed": a.ConnLost, "not_sent": a.NotRun, "cancelled": a.Cancelled}
	for k, v := range want {
		if sum[k] != v {
			t.Errorf("groups sum %s = %d, account %d (%+v)", k, sum[k], v, a)
		}
	}
	return a
}

func TestBurstHonestRelayBalanced(t *testing.T) {
	ph := runBurst(t, testrelay.Config{}, smallBurst)
	a := checkBurstAccounts(t, ph)
	if a.Requested != 92 || a.Accepted != 92 || ph.Aborted != "" {
		t.Fatalf("account %+v aborted %q", a, ph.Aborted)
	}
}

func TestBurstRefusalsApartByClass(t *testing.T) {
	ph := runBurst(t, testrelay.Config{RefuseEvery: 4, RefuseReason: "rate-limited: slow down"}, smallBurst)
	a := checkBurstAccounts(t, ph)
	if a.Accepted != 69 || a.Refused != 23 || a.RefusedBy["rate-limited"] != 23 || ph.Refused["rate-limited"] != 23 {
		t.Fatalf("account %+v refused %v", a, ph.Refused)
	}
	if h := ph.Latency["ok_refused"]; h == nil || h.Count != 23 {
		t.Errorf("ok_refused %+v", h)
	}
	var byClass int64
	for _, g := range ph.Groups {
		byClass += g.Counts["refused_rate-limited"]
	}
	if byClass != 23 {
		t.Errorf("groups count %d rate-limited refusals, want 23", byClass)
	}
	if r := ph.Rates["burst_success_rate"]; r >= 1 || r <= 0 {
		t.Errorf("burst success rate %v", r)
	}
}

func TestBurstPerConnectionRateLimit(t *testing.T) {
	// Each connection: 10 events through, every later one refused.
	ph := runBurst(t, testrelay.Config{RateLimitAfter: 10}, smallBurst)
	a := checkBurstAccounts(t, ph)
	if a.Accepted != 30 || a.Refused != 62 || a.RefusedBy["rate-limited"] != 62 {
		t.Fatalf("account %+v", a)
	}
}

func TestBurstNeverOKAborts(t *testing.T) {
	o := smallBurst
	o.Bursts, o.Every, o.Timeout = 20, 300*time.Millisecond, 200*time.Millisecond
	ph := runBurst(t, testrelay.Config{NeverOK: true}, o)
	a := checkBurstAccounts(t, ph)
	if ph.Aborted == "" || a.Accepted != 0 || a.TimedOut == 0 || a.NotRun == 0 {
		t.Fatalf("account %+v aborted %q", a, ph.Aborted)
	}
	if ph.Counts["bursts_not_run"] == 0 {
		t.Errorf("bursts after the abort judged: %v", ph.Counts)
	}
}

func TestBurstConnectionsClosed(t *testing.T) {
	ph := runBurst(t, testrelay.Config{CloseAfter: 15}, smallBurst)
	a := checkBurstAccounts(t, ph)
	if a.ConnLost == 0 || a.ConnLost+a.NotRun+a.TimedOut != a.Requested-a.Accepted || a.Accepted > 3*14 {
		t.Fatalf("account %+v", a)
	}
}

func TestBurstCancelledMidPhase(t *testing.T) {
	o := smallBurst
	o.Bursts, o.Every, o.Timeout = 30, 500*time.Millisecond, 10*time.Second
	ph := runCancelled(t, testrelay.Config{OKDelay: 5 * time.Millisecond}, 50, func(ctx context.Context, url string) (results.Phase, error) {
		return Burst(ctx, url, testKeys(t), o)
	})
	a := checkBurstAccounts(t, ph)
	if a.Cancelled == 0 || a.TimedOut+a.ConnLost+a.NotRun > 0 || ph.Aborted != "" {
		t.Fatalf("account %+v aborted %q", a, ph.Aborted)
	}
}

// TestBurstOverlapNote: a burst still answered when the next one started
// is said with --every named as the burst command's (run --workloads burst
// has no such flag). Every OK comes 400 ms after its EVENT, the next burst
// 100 ms after the first: the overlap holds at any speed.
func TestBurstOverlapNote(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{OKDelay: 400 * time.Millisecond})
	ph, err := Burst(testCtx(t), r.URL(), testKeys(t), BurstOptions{Bursts: 2, BurstSize: 5, Every: 100 * time.Millisecond, Connections: 1, BetweenRate: 10, Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	want := "burst 1 was still being answered when burst 2 started: the relay needs longer than the burst command's --every (100ms) to absorb a burst of 5"
	if !slices.Contains(ph.Notes, want) {
		t.Errorf("notes %q\nwant %q", ph.Notes, want)
	}
}
