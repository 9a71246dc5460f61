package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
)

func TestMixedEmbedded(t *testing.T) {
	url := embeddedURL(t, "memory")
	c := testKeys(t)
	ctx := testCtx(t)
	// The relay must hold what the queries are drawn from.
	pr, err := Publish(ctx, url, c, all(c), PublishOptions{Connections: 2})
	if err != nil || pr.Phase.Counts["accepted"] == 0 {
		t.Fatalf("preload: %v", err)
	}
	ph, err := Mixed(ctx, url, c, MixedOptions{Duration: 600 * time.Millisecond, PublishRate: 300, QueryRate: 40, Size: 200, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, g := range ph.Groups {
		names[g.Name] = true
	}
	for _, n := range []string{"publish/alone", "query/alone", "publish/together", "query/together"} {
		if !names[n] {
			t.Fatalf("group %s missing: %v", n, names)
		}
	}
	// Open loop: each part's 180 scheduled events end in exactly one
	// outcome; on a machine too loaded to send them all before the part
	// ends, those left unsent are not run (not_sent). The honest relay
	// refuses nothing and drops no connection.
	var accepted int64
	for _, part := range []string{"alone", "together"} {
		c := func(k string) int64 { return ph.Counts["publish_"+part+"_"+k] }
		sum := c("accepted") + c("refused") + c("timed_out") + c("failed") + c("not_sent") + c("cancelled")
		if c("accepted") == 0 || sum != 180 || c("refused") != 0 || c("failed") != 0 {
			t.Fatalf("%s: counts %v errors %v", part, ph.Counts, ph.Errors)
		}
		accepted += c("accepted")
	}
	queries := ph.Counts["query_alone_queries"] + ph.Counts["query_together_queries"]
	for _, g := range ph.Groups {
		if strings.HasPrefix(g.Name, "query/") && (g.Counts["requested"] != 24 || g.Counts["queries"] == 0) {
			t.Fatalf("%s: counts %v errors %v", g.Name, g.Counts, ph.Errors)
		}
	}
	// The queries, and the accepted events read back by id in 4 REQs (an
	// event whose OK was cut at a part's end and that was stored after all
	// is expected too).
	if v := ph.Verification; v == nil || !v.Passed || v.Checked != queries+4 || v.Expected < accepted || v.Expected > 360 || v.Missing != 0 || v.Returned == 0 {
		t.Fatalf("verification %+v (queries %d, accepted %d)", ph.Verification, queries, accepted)
	}
	for _, k := range []string{"publish_throughput_ratio", "query_throughput_ratio", "ok_p50_ratio", "eose_p99_ratio"} {
		if ph.Rates[k] <= 0 {
			t.Errorf("rate %s missing: %v", k, ph.Rates)
		}
	}
	checkLatency(t, "ok", ph.Latency["ok"], ph.Counts["publish_together_accepted"])
	checkLatency(t, "eose", ph.Latency["eose"], ph.Counts["query_together_queries"])
}

// smallMixed: parts of 600 ms, 180 events and 24 queries each.
var smallMixed = MixedOptions{Duration: 600 * time.Millisecond, PublishRate: 300, QueryRate: 40, Size: 200, Limit: 20}

// runMixed runs Mixed against a test relay holding the corpus the queries
// are drawn from.
func runMixed(t *testing.T, cfg testrelay.Config, o MixedOptions) (results.Phase, *testrelay.Relay) {
	t.Helper()
	r, c := testrelay.Start(t, cfg), testKeys(t)
	r.Add(c.Events...)
	ph, err := Mixed(testCtx(t), r.URL(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	return ph, r
}

// mixedSplit asserts the phase's accounts of events, queries and
// read-backs: balanced, and with the outcomes given (-1: not checked).
func mixedSplit(t *testing.T, ph results.Phase, op string, requested, accepted int64) results.Account {
	t.Helper()
	a := account(t, ph, op)
	if (requested >= 0 && a.Requested != requested) || (accepted >= 0 && a.Accepted != accepted) {
		t.Errorf("%s account %+v, want %d requested, %d accepted", op, a, requested, accepted)
	}
	return a
}

// eventSplit asserts the event account requests the plan's 180 events
// per part and returns the account of those sent: the events an open-loop
// part could not send before its end (a slow machine, e.g. under the race
// detector, falls behind) are not run, for one of the two reasons a part's
// end gives (unsent), and left out of it, so that every sent one ends as
// the caller asserts.
func eventSplit(t *testing.T, ph results.Phase, parts int64) results.Account {
	t.Helper()
	a := account(t, ph, results.OpEvent)
	if a.Requested != 180*parts || !a.Balanced() || unsent(a) > a.Requested/2 {
		t.Errorf("event account %+v: want %d requested, at most half left unsent at a part's end", a, 180*parts)
	}
	a.Requested -= unsent(a)
	a.NotRun -= unsent(a)
	return a
}

// unsent is the events of a an open-loop part's end left unsent.
func unsent(a results.Account) int64 {
	var n int64
	for why, c := range a.NotRunBy {
		if isMixedUnsent(why) {
			n += c
		}
	}
	return n
}

// verdictUnlessUnsent asserts ph's verdict is want when every event was
// sent; one a part's end left unsent is work not run (the relay's or the
// client's limit, by senderLag's evidence): then only that may be the
// verdict's reason.
func verdictUnlessUnsent(t *testing.T, ph results.Phase, want int) {
	t.Helper()
	v := phaseVerdict(ph, false)
	if unsent(account(t, ph, results.OpEvent)) == 0 {
		if v.Status != want {
			t.Errorf("verdict %+v, want status %d", v, want)
		}
		return
	}
	for _, r := range v.Reasons {
		if !strings.Contains(r, mixedUnsentHead) {
			t.Errorf("verdict %+v: a reason beside the events left unsent at a part's end", v)
		}
	}
}

func TestMixedHonestRelayPasses(t *testing.T) {
	ph, _ := runMixed(t, testrelay.Config{Verify: true}, smallMixed)
	ev := eventSplit(t, ph, 2)
	nRead := (ev.Accepted + readBackChunk - 1) / readBackChunk
	if ev.Accepted != ev.Requested {
		t.Errorf("event account of those sent %+v: want every one accepted", ev)
	}
	mixedSplit(t, ph, results.OpQuery, 48, 48)
	mixedSplit(t, ph, results.OpRead, nRead, nRead)
	if v := ph.Verification; !v.Passed || v.Expected != ev.Accepted || v.Missing != 0 || v.Checked != 48+nRead {
		t.Errorf("verification %+v", v)
	}
	for _, g := range ph.Groups {
		if strings.HasPrefix(g.Name, "query/") && (g.Counts["requested"] != 24 || g.Counts["queries"] != 24) {
			t.Errorf("group %s: %v", g.Name, g.Counts)
		}
	}
	verdictUnlessUnsent(t, ph, judge.Passed)
	if ph.Aborted != "" {
		t.Errorf("aborted %q", ph.Aborted)
	}
}

// A relay that answers OK true but keeps nothing: the read-back after the
// publishers stopped finds the events missing.
func TestMixedLostEventsFailVerification(t *testing.T) {
	ph, r := runMixed(t, testrelay.Config{DropEvery: 10}, smallMixed)
	ev := eventSplit(t, ph, 2)
	if ev.Accepted != ev.Requested {
		t.Errorf("event account of those sent %+v: want every one accepted", ev)
	}
	if v := ph.Verification; v.Passed || v.Missing != int64(r.Stats().Dropped) || v.Missing < 17 || v.Expected != ev.Accepted {
		t.Errorf("verification %+v", v)
	}
	if v := phaseVerdict(ph, false); v.Status != judge.WrongAnswers {
		t.Errorf("verdict %+v", v)
	}
}

// Refusals are booked by class and kept out of the OK latency and the rate.
func TestMixedRefusalsByClass(t *testing.T) {
	ph, r := runMixed(t, testrelay.Config{RefuseEvery: 3, RefuseReason: "rate-limited: slow down"}, smallMixed)
	a := eventSplit(t, ph, 2)
	refused := int64(r.Stats().Refused)
	if a.Refused != refused || a.RefusedBy["rate-limited"] != refused || a.Accepted != a.Requested-refused || refused != a.Requested/3 {
		t.Errorf("event account %+v", a)
	}
	var okSamples, refSamples int64
	for _, g := range ph.Groups {
		if strings.HasPrefix(g.Name, "publish/") {
			okSamples += g.Latency["ok"].Count
			if h := g.Latency["ok_refused"]; h != nil {
				refSamples += h.Count
			}
		}
	}
	if okSamples != a.Accepted || refSamples != a.Refused {
		t.Errorf("ok samples %d, refused samples %d", okSamples, refSamples)
	}
	if h := ph.Latency["ok"]; h.Count != ph.Counts["publish_together_accepted"] {
		t.Errorf("ok latency %d samples, %d accepted together", h.Count, ph.Counts["publish_together_accepted"])
	}
	if v := ph.Verification; !v.Passed || v.Expected != a.Accepted {
		t.Errorf("verification %+v", v)
	}
	if v := phaseVerdict(ph, false); v.Status != judge.Incomplete {
		t.Errorf("verdict %+v", v)
	}
}

// A relay that never answers one part's requests (no EOSE: the query
// part; no OK: the publishing part) stops that part early; the parts after
// it do not run (not run: phase aborted), nothing waits unbounded, and the
// phase is incomplete.
func TestMixedUnansweredPartAborts(t *testing.T) {
	for _, tc := range []struct {
		name, part string
		cfg        testrelay.Config
		check      func(t *testing.T, ph results.Phase)
	}{
		{"no-eose", "query/alone: ", testrelay.Config{NoEOSE: true}, func(t *testing.T, ph results.Phase) {
			ev := eventSplit(t, ph, 2)
			q := mixedSplit(t, ph, results.OpQuery, 48, 0)
			rb := account(t, ph, results.OpRead)
			if ev.NotRunBy[outcome.WhyAborted] != 180 || ev.Accepted != ev.Requested-180 || q.TimedOut < 3 || q.NotRunBy[outcome.WhyAborted] < 24 ||
				rb.NotRun != rb.Requested || rb.Requested != (ev.Accepted+readBackChunk-1)/readBackChunk {
				t.Errorf("event %+v, query %+v, read %+v", ev, q, rb)
			}
		}},
		{"never-ok", "publish/alone: ", testrelay.Config{NeverOK: true}, func(t *testing.T, ph results.Phase) {
			ev := account(t, ph, results.OpEvent)
			mixedSplit(t, ph, results.OpQuery, 48, 0)
			if ev.Accepted != 0 || ev.TimedOut == 0 || ev.NotRunBy[outcome.WhyAborted] < 180 {
				t.Errorf("event %+v", ev)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := smallMixed
			o.Timeout = 200 * time.Millisecond
			ph, _ := runMixed(t, tc.cfg, o)
			if !strings.HasPrefix(ph.Aborted, tc.part) {
				t.Fatalf("aborted %q, want %q…", ph.Aborted, tc.part)
			}
			tc.check(t, ph)
			if v := phaseVerdict(ph, false); v.Status != judge.Incomplete {
				t.Errorf("verdict %+v", v)
			}
		})
	}
}

// A relay that drops connections: the EVENTs on them are connection lost,
// the connections are redialed for the next part.
func TestMixedConnLost(t *testing.T) {
	ph, r := runMixed(t, testrelay.Config{CloseAfter: 50}, smallMixed)
	ev := account(t, ph, results.OpEvent)
	account(t, ph, results.OpQuery)
	account(t, ph, results.OpRead)
	if ev.ConnLost < 2 || ev.Accepted < 2*49 || ev.Cancelled != 0 {
		t.Errorf("event %+v", ev)
	}
	if r.Stats().Connections <= 4 {
		t.Errorf("no redial: %d connections", r.Stats().Connections)
	}
	if v := phaseVerdict(ph, false); v.Status != judge.Incomplete || !strings.Contains(strings.Join(v.Reasons, "\n"), "connection lost") {
		t.Errorf("verdict %+v", v)
	}
}

// Ctrl-C during the query part: the queries awaiting EOSE and the work not
// done are cancelled, at once (not after the minute-long timeout), nothing
// is blamed on the relay and nothing fails verification.
func TestMixedCancelledMidPhase(t *testing.T) {
	o := smallMixed
	o.Timeout = time.Minute
	var r *testrelay.Relay
	ready := make(chan struct{})
	ctx := cancelWhen(t, func() bool {
		select {
		case <-ready:
			return r.Stats().REQs >= 2 // one per querier: each waits for its EOSE
		default:
			return false
		}
	})
	r = testrelay.New(testrelay.Config{NoEOSE: true})
	defer r.Close()
	c := testKeys(t)
	r.Add(c.Events...)
	close(ready)
	start := time.Now()
	ph, err := Mixed(ctx, r.URL(), c, o)
	checkCanceled(t, err)
	if el := time.Since(start); el >= time.Minute {
		t.Fatalf("returned after %v", el)
	}
	ev := eventSplit(t, ph, 2)
	q := mixedSplit(t, ph, results.OpQuery, 48, 0)
	rb := account(t, ph, results.OpRead)
	if ev.Cancelled != 180 || ev.Accepted != ev.Requested-180 || q.Cancelled != 48 || rb.Cancelled != rb.Requested || rb.Requested == 0 {
		t.Errorf("event %+v, query %+v, read %+v", ev, q, rb)
	}
	if w, inc, _ := judge.Phase(&ph); len(w) > 0 || len(inc) > 0 && unsent(account(t, ph, results.OpEvent)) == 0 || ph.Aborted != "" {
		t.Errorf("relay blamed: wrong %v, incomplete %v, aborted %q", w, inc, ph.Aborted)
	}
	if v := phaseVerdict(ph, true); v.Status != judge.Interrupted {
		t.Errorf("verdict %+v", v)
	}
}

// The ratio notes write their labels as the summary does (OK, EOSE) and
// their figures grouped ("1,000 events/s").
func TestMixedRatioNotesLabels(t *testing.T) {
	ph := &results.Phase{Rates: map[string]float64{}}
	mixedRatio(ph, "publish_throughput_ratio", 1000, 1500, "events/s")
	mixedLatRatio(ph, "ok_p99_ratio", int64(time.Millisecond), int64(2*time.Millisecond))
	mixedLatRatio(ph, "eose_p50_ratio", int64(time.Millisecond), int64(time.Millisecond))
	want := []string{"publish throughput ratio together/alone: 1.50× (1,000 events/s alone, 1,500 together)",
		"OK p99 ratio together/alone: 2.00× (1.00ms alone, 2.00ms together)", "EOSE p50 ratio together/alone: 1.00× (1.00ms alone, 1.00ms together)"}
	if strings.Join(ph.Notes, "|") != strings.Join(want, "|") {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(ph.Notes, "\n"), strings.Join(want, "\n"))
	}
}
