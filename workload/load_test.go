package workload

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/schedule"
)

func constant(t *testing.T, rate float64, d time.Duration) schedule.Pattern {
	t.Helper()
	p, err := schedule.Constant(rate, d)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkBalance asserts every slot of the pattern ended in exactly one
// outcome: each account balances, the accounts cover every planned slot and
// the counts mirror them.
func checkBalance(t *testing.T, ph results.Phase) {
	t.Helper()
	c := ph.Counts
	var requested int64
	for _, a := range ph.Accounts {
		if !a.Balanced() {
			t.Errorf("account not balanced: %+v", a)
		}
		if a.Op != results.OpRead { // a mixed load's read-back, after the pattern's slots
			requested += a.Requested
		}
	}
	if len(ph.Accounts) == 0 || requested != c["planned"] {
		t.Errorf("accounts %+v cover %d slots, %d planned", ph.Accounts, requested, c["planned"])
	}
	if sum := opCount(c, "accepted") + opCount(c, "refused") + opCount(c, "failed") + c["dropped"] + opCount(c, "not_run") + opCount(c, "canceled"); sum != c["planned"] {
		t.Errorf("outcomes add up to %d, planned %d: %v", sum, c["planned"], c)
	}
}

// opCount is counter k of a load's ops: ops_k in a mixed load, queries for
// accepted in a query load, else k.
func opCount(c map[string]int64, k string) int64 {
	if n, ok := c["ops_"+k]; ok {
		return n
	}
	if _, ok := c[k]; !ok && k == "accepted" {
		return c[results.CountQueries]
	}
	return c[k]
}

func TestLoadPublishEmbeddedSendsEveryEvent(t *testing.T) {
	url := embeddedURL(t, "memory")
	p := constant(t, 100, 2*time.Second)
	var live bytes.Buffer
	// A pool and a lateness bound far beyond need: even a slow machine
	// (race detector, other load) sends every op.
	ph, err := Load(testCtx(t), url, smallCorpus(t), LoadOptions{Pattern: p, Pool: 200, Connections: 4, Size: 200,
		MaxLateness: 20 * time.Second, Live: &live})
	if err != nil {
		t.Fatal(err)
	}
	n := schedule.Count(p)
	if n != 200 {
		t.Fatalf("Count = %d, want 200", n)
	}
	for _, k := range []string{"intended", "sent", "accepted"} {
		if ph.Counts[k] != n {
			t.Errorf("%s = %d, want %d (counts %v; notes %v; errors %v)", k, ph.Counts[k], n, ph.Counts, ph.Notes, ph.Errors)
		}
	}
	for _, k := range []string{"refused", "failed", "dropped", "unfinished", "unmatched_oks"} {
		if ph.Counts[k] != 0 {
			t.Errorf("%s = %d, want 0", k, ph.Counts[k])
		}
	}
	checkBalance(t, ph)
	if ph.Name != "load" || ph.Workload != "load" || ph.Params["kind"] != LoadPublish {
		t.Errorf("phase %q workload %q kind %v", ph.Name, ph.Workload, ph.Params["kind"])
	}
	// The per-second series counts every intended and accepted op once.
	var intended, accepted int64
	for _, s := range ph.Series {
		intended += s.Counts["intended"]
		accepted += s.Counts["accepted"]
	}
	if intended != n || accepted != n {
		t.Errorf("series: intended %d, accepted %d, want %d each", intended, accepted, n)
	}
	for _, k := range []string{"ok", "ok_uncorrected", "lateness"} {
		if h := ph.Latency[k]; h == nil || h.Count != n {
			t.Errorf("latency %q: %+v, want %d samples", k, h, n)
		}
	}
	if ph.Resources == nil || ph.Resources.ClientCPUSecs <= 0 {
		t.Errorf("client CPU not measured: %+v", ph.Resources)
	}
	lines := strings.Split(strings.TrimSpace(live.String()), "\n")
	if len(lines) < 2 || !strings.Contains(lines[0], "load t=  0s intended ") || !strings.Contains(lines[1], "t=  1s intended     100/s") {
		t.Errorf("live lines:\n%s", live.String())
	}
	var liveAccepted int64
	for _, l := range lines {
		var acc int64
		if i := strings.Index(l, "accepted"); i >= 0 {
			f := strings.Fields(l[i+len("accepted"):])
			acc = atoi64(f[0])
		}
		liveAccepted += acc
	}
	if liveAccepted != n {
		t.Errorf("live lines count %d accepted, want %d:\n%s", liveAccepted, n, live.String())
	}
}

func atoi64(s string) int64 {
	var n int64
	for _, c := range strings.TrimSuffix(s, "/s") {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

// A relay with 2 workers × 5 ms (at most 400 events/s) offered 1000/s with
// 4 ops in flight: ops wait for a free slot, so the latency measured from
// the intended time grows far beyond the send→OK time, and ops that cannot
// start within MaxLateness are dropped and counted.
func TestLoadOverCapacityCorrectsLatencyAndCountsDrops(t *testing.T) {
	p := constant(t, 1000, 3*time.Second)
	ph, r := runLoad(t, testrelay.Config{ProcessingTime: 5 * time.Millisecond, Workers: 2}, LoadOptions{
		Pattern: p, Pool: 4, Connections: 2, MaxLateness: time.Second, Size: 100,
	})
	c := ph.Counts
	if c["intended"] != 3000 {
		t.Errorf("intended %d, want 3000", c["intended"])
	}
	// Capacity is at most 400/s: over 3 s (plus the drain) no more than
	// ~1,400 can be accepted, so well over 1,000 ops must be dropped.
	if c["accepted"] > 1600 || c["dropped"] < 1000 {
		t.Errorf("accepted %d, dropped %d: want ≤ 1600 accepted and ≥ 1000 dropped", c["accepted"], c["dropped"])
	}
	if got := int64(r.Stats().Events); got != c["sent"] {
		t.Errorf("relay received %d EVENTs, phase says %d sent", got, c["sent"])
	}
	corr, unc := ph.Latency["ok"], ph.Latency["ok_uncorrected"]
	if corr == nil || unc == nil || corr.Count == 0 {
		t.Fatalf("latency missing: %+v %+v", corr, unc)
	}
	if corr.Percentiles["99"] < 10*unc.Percentiles["50"] {
		t.Errorf("corrected p99 %v not far above uncorrected p50 %v", time.Duration(corr.Percentiles["99"]), time.Duration(unc.Percentiles["50"]))
	}
	if corr.Percentiles["99"] < int64(100*time.Millisecond) {
		t.Errorf("corrected p99 %v: ops waited for the pool, it should be ≥ 100 ms", time.Duration(corr.Percentiles["99"]))
	}
	// Lateness and drops came from the full pool (replies of ≥ 5 ms, the
	// pool fills in 4 ms at this rate): relay-limited, unless the client's
	// CPU was saturated (then it must say so).
	notes := strings.Join(ph.Notes, "\n")
	if ph.Resources.ClientCPUUtil < 0.9 {
		if ph.ClientLimited || !strings.Contains(notes, "relay-limited") {
			t.Errorf("want relay-limited (pool full waiting for the relay):\n%s", notes)
		}
	} else if !ph.ClientLimited {
		t.Errorf("client CPU saturated but not client-limited:\n%s", notes)
	}
	if !strings.Contains(notes, "dropped") {
		t.Errorf("notes do not explain the drops:\n%s", notes)
	}
}

func TestLoadMixedAndQuery(t *testing.T) {
	c := smallCorpus(t)
	ph, r := runLoad(t, testrelay.Config{}, LoadOptions{Kind: LoadMixed, PublishParts: 1, QueryParts: 1,
		Pattern: constant(t, 200, time.Second), Pool: 200, MaxLateness: 20 * time.Second, Size: 100})
	// A mixed load's counters are each side's (accepted: events, queries:
	// REQs ended with EOSE); the ops' totals are ops_ counters.
	if ph.Counts["ops_accepted"] != 200 || ph.Counts["accepted"] != 100 || ph.Counts["queries"] != 100 {
		t.Fatalf("ops accepted %d of 200, events %d, queries %d: %v %v", ph.Counts["ops_accepted"], ph.Counts["accepted"], ph.Counts["queries"], ph.Notes, ph.Errors)
	}
	if ph.Latency["ok"].Count != 100 || ph.Latency["eose"].Count != 100 || ph.Latency["op"].Count != 200 {
		t.Errorf("latency samples: ok %d, eose %d, op %d; want 100, 100, 200", ph.Latency["ok"].Count, ph.Latency["eose"].Count, ph.Latency["op"].Count)
	}
	if len(ph.Groups) != 2 || ph.Groups[0].Name != LoadPublish || ph.Groups[1].Name != LoadQuery {
		t.Fatalf("groups %+v", ph.Groups)
	}
	if ph.Groups[0].Counts["accepted"] != 100 || ph.Groups[1].Counts["queries"] != 100 {
		t.Errorf("publish %v, query %v: want 100 each", ph.Groups[0].Counts, ph.Groups[1].Counts)
	}
	// 100 queries and 1 read-back REQ (the 100 accepted events, by id).
	if r.Stats().Events != 100 || r.Stats().REQs != 101 {
		t.Errorf("relay saw %d EVENTs, %d REQs; want 100 and 101", r.Stats().Events, r.Stats().REQs)
	}
	if ph.Counts["events_returned"] < 100 {
		t.Errorf("queries returned %d events: the filters should match stored events", ph.Counts["events_returned"])
	}

	q, err := Load(testCtx(t), r.URL(), c, LoadOptions{Kind: LoadQuery, Pattern: constant(t, 100, time.Second), Pool: 100, MaxLateness: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if q.Counts["queries"] != 100 || q.Latency["eose"] == nil || q.Latency["ok"] != nil || q.Params["events_signed"] != nil {
		t.Errorf("query load: queries %d, eose %v, ok %v, events signed %v", q.Counts["queries"], q.Latency["eose"], q.Latency["ok"], q.Params["events_signed"])
	}
}

func TestLoadRefusesTooManyEvents(t *testing.T) {
	_, err := Load(testCtx(t), "ws://127.0.0.1:1", smallCorpus(t), LoadOptions{Pattern: constant(t, 1000, 10*time.Second), MaxEvents: 5000})
	if err == nil || !strings.HasPrefix(err.Error(), "--load-max-events") || !strings.Contains(err.Error(), "10000") {
		t.Fatalf("err = %v", err)
	}
	_, err = Load(testCtx(t), "ws://127.0.0.1:1", smallCorpus(t), LoadOptions{Kind: "write", Pattern: constant(t, 1, time.Second)})
	if err == nil || !strings.HasPrefix(err.Error(), "--load-kind") {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadHonestRelayPasses(t *testing.T) {
	ph, _ := runLoad(t, testrelay.Config{Verify: true}, LoadOptions{Pattern: constant(t, 200, time.Second), Pool: 200,
		MaxLateness: 20 * time.Second, Size: 100})
	a := account(t, ph, results.OpEvent)
	if a.Requested != 200 || a.Accepted != 200 || ph.Aborted != "" {
		t.Errorf("account %+v, aborted %q", a, ph.Aborted)
	}
	if h := ph.Latency["ok"]; h == nil || h.Count != 200 {
		t.Errorf("ok latency %+v, want 200 samples", h)
	}
	if v := phaseVerdict(ph, false); v.Status != judge.Passed {
		t.Errorf("verdict %+v", v)
	}
}

// Refusals ("rate-limited:") are booked by class, kept out of the latency
// of served ops and out of the accepted rate; the judge calls the phase
// incomplete.
func TestLoadRefusalsByClassNotInLatency(t *testing.T) {
	ph, _ := runLoad(t, testrelay.Config{RefuseEvery: 3, RefuseReason: "rate-limited: slow down"}, LoadOptions{Pattern: constant(t, 300, time.Second), Pool: 200,
		MaxLateness: 20 * time.Second, Size: 100})
	a := account(t, ph, results.OpEvent)
	if a.Accepted != 200 || a.Refused != 100 || a.RefusedBy["rate-limited"] != 100 {
		t.Errorf("account %+v", a)
	}
	for name, want := range map[string]int64{"ok": 200, "ok_uncorrected": 200, "ok_refused": 100} {
		if h := ph.Latency[name]; h == nil || h.Count != want {
			t.Errorf("latency %s: %+v, want %d samples", name, h, want)
		}
	}
	if v := phaseVerdict(ph, false); v.Status != judge.Incomplete || !strings.Contains(strings.Join(v.Reasons, "\n"), "100 refused (rate-limited)") {
		t.Errorf("verdict %+v", v)
	}
	if ph.Counts["refused"] != 100 || ph.Refused["rate-limited"] != 100 || ph.Counts["accepted"] != 200 {
		t.Errorf("refused %d (rate-limited %d), accepted %d; want 100, 100, 200", ph.Counts["refused"], ph.Refused["rate-limited"], ph.Counts["accepted"])
	}
	if got := ph.Rates["accepted_per_sec"] * float64(ph.Duration) / 1e9; got > 200.5 {
		t.Errorf("accepted rate counts refusals: %v", ph.Rates)
	}
}

// A relay that never answers stops the phase long before the pattern's
// end, with one Aborted line; every slot still has one outcome.
func TestLoadNeverOKAborts(t *testing.T) {
	p := constant(t, 100, 30*time.Second)
	ph, _ := runLoad(t, testrelay.Config{NeverOK: true}, LoadOptions{Base: Base{Timeout: 200 * time.Millisecond}, Pattern: p, Pool: 10, Size: 100,
		MaxLateness: 50 * time.Millisecond})
	a := account(t, ph, results.OpEvent)
	if ph.Aborted == "" || !strings.Contains(ph.Aborted, "no reply") {
		t.Fatalf("not aborted: %q (account %+v, notes %v)", ph.Aborted, a, ph.Notes)
	}
	if a.Requested != 3000 || a.Accepted != 0 || a.Cancelled != 0 || a.NotRunBy[outcome.WhyAborted] == 0 || a.TimedOut < 3 {
		t.Errorf("account %+v", a)
	}
	if ph.Counts["intended"] >= 3000 || ph.Duration >= int64(30*time.Second) {
		t.Errorf("ran the whole pattern: intended %d, duration %v", ph.Counts["intended"], time.Duration(ph.Duration))
	}
	if !strings.HasPrefix(ph.Notes[0], "stopped early") || strings.Contains(strings.Join(ph.Notes, "\n"), "interrupted after") {
		t.Errorf("notes %v", ph.Notes)
	}
	if v := phaseVerdict(ph, false); v.Status != judge.Incomplete {
		t.Errorf("verdict %+v", v)
	}
}

// A relay that stalls mid-run (query load: one REQ per op) is caught the
// same way.
func TestLoadStallAborts(t *testing.T) {
	ph, _ := runLoad(t, testrelay.Config{StallAfter: 40}, LoadOptions{Base: Base{Timeout: 200 * time.Millisecond}, Kind: LoadQuery, Pattern: constant(t, 100, 30*time.Second), Pool: 10,
		Connections: 2, MaxLateness: 50 * time.Millisecond})
	a := account(t, ph, results.OpQuery)
	if ph.Aborted == "" || a.Accepted == 0 || a.Accepted > 40 || a.NotRunBy[outcome.WhyAborted] == 0 {
		t.Errorf("aborted %q, account %+v", ph.Aborted, a)
	}
}

// A relay that closes every connection at its 60th message: the ops on
// them are connection lost, the pool redials and the load goes on.
func TestLoadConnLost(t *testing.T) {
	ph, r := runLoad(t, testrelay.Config{CloseAfter: 60}, LoadOptions{Pattern: constant(t, 200, 2*time.Second), Pool: 2,
		Connections: 2, MaxLateness: 20 * time.Second, Size: 100})
	a := account(t, ph, results.OpEvent)
	if a.ConnLost < 2 || a.Accepted <= 2*59 || a.TimedOut != 0 || a.Cancelled != 0 || ph.Aborted != "" {
		t.Errorf("account %+v, aborted %q", a, ph.Aborted)
	}
	if ph.Counts["conn_lost"] != a.ConnLost || ph.Counts["failed"] != a.ConnLost {
		t.Errorf("counts %v", ph.Counts)
	}
	if ph.Counts["reconnects"] < 1 || ph.Counts["accepted"] <= 2*59 || r.Stats().Connections < 3 {
		t.Errorf("reconnects %d, accepted %d, relay saw %d connections: want ≥ 1, > 118, ≥ 3 (%v; %v)", ph.Counts["reconnects"], ph.Counts["accepted"], r.Stats().Connections, ph.Notes, ph.Errors)
	}
	if v := phaseVerdict(ph, false); v.Status != judge.Incomplete || !strings.Contains(strings.Join(v.Reasons, "\n"), "connection lost") {
		t.Errorf("verdict %+v", v)
	}
}

// Ctrl-C mid-phase: the EVENTs awaiting their OK and the slots not reached
// are cancelled, at once (not after the minute-long timeout), nothing is
// blamed on the relay, and the judge says interrupted.
func TestLoadCancelledMidPhase(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{NeverOK: true})
	ctx := cancelWhen(t, func() bool { return r.Stats().Events >= 10 })
	start := time.Now()
	ph, err := Load(ctx, r.URL(), smallCorpus(t), LoadOptions{Base: Base{Timeout: time.Minute}, Pattern: constant(t, 100, 30*time.Second), Pool: 10, Size: 100,
		MaxLateness: time.Minute})
	checkCanceled(t, err)
	if el := time.Since(start); el >= time.Minute {
		t.Fatalf("returned after %v: waited for the timeout", el)
	}
	checkBalance(t, ph)
	a := account(t, ph, results.OpEvent)
	if a.Requested != 3000 || a.Cancelled != 3000 || ph.Aborted != "" {
		t.Errorf("account %+v, aborted %q", a, ph.Aborted)
	}
	v := phaseVerdict(ph, true)
	if v.Status != judge.Interrupted {
		t.Errorf("verdict %+v", v)
	}
	if w, inc, _ := judge.Phase(&ph); len(w)+len(inc) > 0 {
		t.Errorf("relay blamed: wrong %v, incomplete %v", w, inc)
	}
}

// The same for queries (one goroutine per op waiting for EOSE).
func TestLoadQueryCancelledMidPhase(t *testing.T) {
	c := smallCorpus(t)
	r := testrelay.Start(t, testrelay.Config{NoEOSE: true})
	r.Add(c.Events...)
	ctx := cancelWhen(t, func() bool { return r.Stats().REQs >= 10 })
	ph, err := Load(ctx, r.URL(), c, LoadOptions{Base: Base{Timeout: time.Minute}, Kind: LoadQuery, Pattern: constant(t, 100, 30*time.Second), Pool: 10,
		MaxLateness: time.Minute})
	checkCanceled(t, err)
	checkBalance(t, ph)
	if a := account(t, ph, results.OpQuery); a.Cancelled != a.Requested || a.Requested != 3000 {
		t.Errorf("account %+v", a)
	}
	if w, inc, _ := judge.Phase(&ph); len(w)+len(inc) > 0 {
		t.Errorf("relay blamed: wrong %v, incomplete %v", w, inc)
	}
}

// A mixed load books its queries in a query account, its publishes in an
// event account, by the pattern's mix.
func TestLoadMixedAccounts(t *testing.T) {
	ph, _ := runLoad(t, testrelay.Config{}, LoadOptions{Kind: LoadMixed, PublishParts: 3, QueryParts: 1,
		Pattern: constant(t, 200, time.Second), Pool: 200, MaxLateness: 20 * time.Second, Size: 100})
	ev, q := account(t, ph, results.OpEvent), account(t, ph, results.OpQuery)
	if ev.Requested != 150 || ev.Accepted != 150 || q.Requested != 50 || q.Accepted != 50 {
		t.Errorf("event %+v, query %+v", ev, q)
	}
	if v := phaseVerdict(ph, false); v.Status != judge.Passed {
		t.Errorf("verdict %+v", v)
	}
}

// runLoad runs Load, with o, against a test relay with cfg (holding the
// small corpus when the load queries it), and checks that every slot ended
// in one outcome (checkBalance).
func runLoad(t *testing.T, cfg testrelay.Config, o LoadOptions) (results.Phase, *testrelay.Relay) {
	t.Helper()
	r, c := testrelay.Start(t, cfg), smallCorpus(t)
	if o.Kind == LoadQuery || o.Kind == LoadMixed {
		r.Add(c.Events...)
	}
	ph, err := Load(testCtx(t), r.URL(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	checkBalance(t, ph)
	return ph, r
}

// A relay with 2 workers × 5 ms can do at most 400 events/s (less: timers
// overshoot). The search must land within a generous band of that.
func TestFindMaxFindsTestRelayCapacity(t *testing.T) {
	ph, res, progress := findMaxTestRelay(t)
	t.Logf("%s\n%s", progress, strings.Join(ph.Notes, "\n"))
	if res.ClientLimited {
		// Allowed only when the client really was the limit, and then the
		// answer must say it is a lower bound.
		if !strings.HasPrefix(res.Answer, "≥") && !strings.Contains(res.Answer, "client-limited") {
			t.Errorf("client-limited search answered %q", res.Answer)
		}
		t.Skipf("the client limited the search on this machine: %s", res.Answer)
	}
	// What a busy machine cannot change: the relay never takes more than its
	// capacity (other load only makes steps fail sooner), an offered rate of
	// several times the capacity always fails, and the search starts at the
	// start rate. How close the answer comes to the capacity depends on the
	// machine: BenchmarkFindMaxTestRelay reports it.
	if res.Max > 1.5*findMaxCapacity {
		t.Errorf("found %v events/s, above 1.5 × the relay's capacity %v", res.Max, findMaxCapacity)
	}
	if res.FirstFail == 0 || res.FirstFail <= res.Max || res.FirstFail > 4*findMaxCapacity {
		t.Errorf("first failing rate %v (max %v)", res.FirstFail, res.Max)
	}
	if ph.Rates["max_rate"] != res.Max || len(ph.Groups) != len(res.Steps) || int(ph.Counts["steps"]) != len(res.Steps) {
		t.Errorf("phase: rates %v, %d groups, %d steps", ph.Rates, len(ph.Groups), len(res.Steps))
	}
	// The steps double from the start rate until one fails, then bisect.
	if res.Steps[0].Rate != 50 || (res.Steps[0].Pass && (len(res.Steps) < 2 || res.Steps[1].Rate != 100)) {
		t.Errorf("first steps %+v; want 50, then 100 if 50 passed", res.Steps[:min(2, len(res.Steps))])
	}
	fails := 0
	for _, st := range res.Steps {
		if !st.Pass {
			fails++
		} else if st.Rate > res.Max {
			t.Errorf("passing step %v above the answer %v", st.Rate, res.Max)
		}
	}
	if fails == 0 {
		t.Errorf("no failing step in %d", len(res.Steps))
	}
	if !strings.Contains(strings.Join(ph.Notes, "\n"), "| offered/s |") {
		t.Error("no curve table in the notes")
	}
	checkFindMaxAccount(t, ph)
}

// findMaxCapacity is the events/s the test relay of findMaxTestRelay can
// take: 2 workers × 5 ms each.
const findMaxCapacity = 400.0

// findMaxTestRelay runs find-max against a test relay of findMaxCapacity.
func findMaxTestRelay(tb testing.TB) (results.Phase, *FindMaxResult, string) {
	tb.Helper()
	r := testrelay.Start(tb, testrelay.Config{ProcessingTime: 5 * time.Millisecond, Workers: 2})
	var progress bytes.Buffer
	ph, res, err := FindMax(testCtx(tb), r.URL(), smallCorpus(tb), FindMaxOptions{
		Load:      LoadOptions{Pool: 64, Connections: 4, Size: 100, MaxLateness: 500 * time.Millisecond},
		StartRate: 50, StepDuration: 1500 * time.Millisecond, P99: 50 * time.Millisecond, Precision: 0.15,
		Progress: &progress,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return ph, res, progress.String()
}

// BenchmarkFindMaxTestRelay reports how close find-max comes to a relay of
// known capacity (found/capacity; 0.3–1.5 on an idle 2-core machine), the
// accuracy that a test cannot assert on a busy machine.
func BenchmarkFindMaxTestRelay(b *testing.B) {
	for b.Loop() {
		_, res, _ := findMaxTestRelay(b)
		b.ReportMetric(res.Max/findMaxCapacity, "found/capacity")
		if res.ClientLimited {
			b.Logf("client-limited: %s", res.Answer)
		}
	}
}

// checkFindMaxAccount asserts the phase's event account balances and sums
// the steps' outcomes.
func checkFindMaxAccount(t *testing.T, ph results.Phase) results.Account {
	t.Helper()
	a := account(t, ph, results.OpEvent)
	var sum int64
	for _, g := range ph.Groups {
		sum += g.Counts["accepted"] + g.Counts["refused"] + g.Counts["dropped"] + g.Counts["failed"] + g.Counts["canceled"]
	}
	if sum != a.Requested || ph.Counts["accepted"] != a.Accepted {
		t.Errorf("steps' outcomes sum to %d, account %+v, counts %v", sum, a, ph.Counts)
	}
	return a
}

// Ctrl-C during the second step: the first step stands, the second is not
// judged (no failed step blamed on the relay), its work is cancelled, and
// the judge says interrupted.
func TestFindMaxCancelledMidSearch(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{})
	ctx := cancelWhen(t, func() bool { return r.Stats().Events >= 75 })
	ph, res, err := FindMax(ctx, r.URL(), smallCorpus(t), FindMaxOptions{
		Load:      LoadOptions{Pool: 64, Connections: 2, Size: 100, MaxLateness: 20 * time.Second},
		StartRate: 50, StepDuration: time.Second, P99: 5 * time.Second,
	})
	checkCanceled(t, err)
	if len(res.Steps) != 1 || !res.Steps[0].Pass || res.Cut == nil || res.Cut.Rate != 100 || res.Aborted != "" {
		t.Fatalf("steps %+v, cut %+v, aborted %q", res.Steps, res.Cut, res.Aborted)
	}
	a := checkFindMaxAccount(t, ph)
	if a.Requested != 150 || a.Cancelled == 0 || a.Accepted+a.Cancelled != 150 {
		t.Errorf("account %+v", a)
	}
	if w, inc, _ := judge.Phase(&ph); len(w)+len(inc) > 0 {
		t.Errorf("relay blamed: wrong %v, incomplete %v", w, inc)
	}
	if v := phaseVerdict(ph, true); v.Status != judge.Interrupted {
		t.Errorf("verdict %+v", v)
	}
	if !strings.Contains(res.Answer, "interrupted") {
		t.Errorf("answer %q", res.Answer)
	}
}

// A relay that answers nothing stops the search at its first step, with
// one Aborted line.
func TestFindMaxRelayStallsAborts(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{NeverOK: true})
	ph, res, err := FindMax(testCtx(t), r.URL(), smallCorpus(t), FindMaxOptions{
		Load:      LoadOptions{Base: Base{Timeout: 200 * time.Millisecond}, Pool: 10, Connections: 2, Size: 100, MaxLateness: 50 * time.Millisecond},
		StartRate: 100, StepDuration: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 1 || res.Steps[0].Pass || res.Aborted == "" || ph.Aborted != res.Aborted {
		t.Fatalf("steps %d, aborted %q / %q", len(res.Steps), res.Aborted, ph.Aborted)
	}
	a := checkFindMaxAccount(t, ph)
	if a.Requested != 2000 || a.Accepted != 0 || a.NotRunBy[outcome.WhyAborted] == 0 {
		t.Errorf("account %+v", a)
	}
	if v := phaseVerdict(ph, false); v.Status != judge.Incomplete {
		t.Errorf("verdict %+v", v)
	}
}

func TestJudgeStep(t *testing.T) {
	o := FindMaxOptions{P99: 50 * time.Millisecond, Load: LoadOptions{Pool: 100}}
	_ = o.defaults()
	hist := func(p99 int64) *results.Histogram {
		return &results.Histogram{Count: 1, Mean: float64(p99) / 2, Percentiles: map[string]int64{"50": p99 / 2, "99": p99}}
	}
	phase := func(corr, unc int64, counts map[string]int64, limited bool, notes ...string) results.Phase {
		c := map[string]int64{"intended": 1000}
		for k, v := range counts {
			c[k] = v
		}
		// The judgement reads the step's account: refusals, timeouts and
		// client drops (not run, WhyClientDrop).
		a := results.Account{Op: results.OpEvent, Requested: 1000, Refused: counts["refused"], TimedOut: counts["failed"],
			NotRun: counts["dropped"] + counts["aborted"]}
		if n := counts["dropped"]; n > 0 {
			a.NotRunBy = map[string]int64{WhyClientDrop: n}
		}
		if n := counts["aborted"]; n > 0 {
			a.NotRunBy = map[string]int64{outcome.WhyAborted: n}
		}
		a.Accepted = a.Requested - a.Total()
		return results.Phase{Duration: int64(time.Second), Counts: c, ClientLimited: limited, Notes: notes,
			Accounts: []results.Account{a},
			Latency:  map[string]*results.Histogram{"ok": hist(corr), "ok_uncorrected": hist(unc)}}
	}
	ms := int64(time.Millisecond)
	for _, c := range []struct {
		name         string
		ph           results.Phase
		pass, client bool
	}{
		{"on target", phase(10*ms, 5*ms, nil, false), true, false},
		{"relay slow", phase(90*ms, 80*ms, nil, false), false, false},
		{"refusals", phase(10*ms, 5*ms, map[string]int64{"refused": 3}, false), false, false},
		{"timeouts", phase(10*ms, 5*ms, map[string]int64{"failed": 1}, false), false, false},
		{"not run: step stopped", phase(10*ms, 5*ms, map[string]int64{"aborted": 5}, false), false, false},
		// Drops alone, with the client's CPU saturated: the client's doing.
		{"client drops", phase(10*ms, 5*ms, map[string]int64{"dropped": 5}, true, "client-limited: CPU"), false, true},
		{"client late", phase(90*ms, 5*ms, nil, true, "client-limited: the dispatcher handed ops out late"), false, true},
		{"pool full, relay slow", phase(90*ms, 40*ms, map[string]int64{"dropped": 10}, false, "relay-limited: all in-flight slots"), false, false},
		// 1000/s × 22.5 ms mean reply needs ~23 in flight: a pool of 100 is ample.
		{"pool ample, drops are the relay's", phase(300*ms, 45*ms, map[string]int64{"dropped": 10}, false, "relay-limited: all in-flight slots"), false, false},
	} {
		pass, why, client := judgeStep(c.ph, o)
		if pass != c.pass || client != c.client {
			t.Errorf("%s: pass %v client %v (%s); want %v %v", c.name, pass, client, why, c.pass, c.client)
		}
	}
	// 1000/s × 22.5 ms mean needs ~23 in flight of a pool of 25: too small.
	o.Load.Pool = 25
	if pass, why, client := judgeStep(phase(300*ms, 45*ms, map[string]int64{"dropped": 10}, false, "relay-limited: x"), o); pass || !client || !strings.Contains(why, "--load-pool") {
		t.Errorf("small pool: pass %v client %v (%s)", pass, client, why)
	}
}

// TestLoadSegmentsAddUp: three segments of a mixed open-loop load against
// one relay plan and send, together, exactly the single run's operations:
// publishes and queries requested add up to the pattern's, each segment with
// its share of the pool and connections, and no event is published twice.
func TestLoadSegmentsAddUp(t *testing.T) {
	url := embeddedURL(t, "memory")
	c := smallCorpus(t)
	p := constant(t, 90, time.Second)
	total := schedule.Count(p)
	base := LoadOptions{Kind: LoadMixed, PublishParts: 2, QueryParts: 1, Pattern: p, Pool: 30, Connections: 4,
		Size: 200, MaxLateness: 20 * time.Second, Source: c.Events}
	want := map[string]int64{results.OpEvent: 2 * total / 3, results.OpQuery: total / 3}
	got := map[string]int64{}
	for i := range 3 {
		o := base
		o.Segment = Segment{Index: i, Count: 3}
		ph, err := Load(testCtx(t), url, c, o)
		if err != nil {
			t.Fatal(err)
		}
		checkBalance(t, ph)
		if ph.Counts["planned"] != total/3 {
			t.Errorf("segment %d planned %d of %d", i, ph.Counts["planned"], total)
		}
		for _, a := range ph.Accounts {
			got[a.Op] += a.Requested
			if a.Op == results.OpEvent && a.Refused > 0 {
				t.Errorf("segment %d: %d events refused (published twice?): %v", i, a.Refused, a.RefusedBy)
			}
		}
		if c := ph.Params["connections"]; c != nil && c != 2 && c != 1 {
			t.Errorf("segment %d: connections %v, want its share of 4 (2, 1, 1)", i, c)
		}
	}
	for op, n := range want {
		if got[op] != n {
			t.Errorf("%s: segments requested %d, the pattern has %d", op, got[op], n)
		}
	}
}

// The queries of the segments of a mixed load are the single run's: each
// query operation's number among the queries (which picks its filter) is
// the same whichever segment sends it, so the segments together send every
// query number once.
func TestLoadSegmentQueriesAreTheSingleRunsQueries(t *testing.T) {
	o := LoadOptions{Kind: LoadMixed, PublishParts: 3, QueryParts: 2}
	const total = 1000
	var single []int64
	for k := int64(0); k < total; k++ {
		if o.publishes(k+1) == o.publishes(k) {
			single = append(single, o.queryOrdinal(k))
		}
	}
	seen := map[int64]int{}
	for i := range 4 {
		s := Segment{Index: i, Count: 4}
		for k := int64(0); k < total; k++ {
			if s.Owns(k) && o.publishes(k+1) == o.publishes(k) {
				seen[o.queryOrdinal(k)]++
			}
		}
	}
	if len(seen) != len(single) {
		t.Fatalf("segments sent %d distinct query numbers, a single run %d", len(seen), len(single))
	}
	for n, q := range single {
		if q != int64(n) || seen[q] != 1 {
			t.Fatalf("query %d: ordinal %d, sent %d times by the segments", n, q, seen[q])
		}
	}
}

// The live line of a second the run ended inside gives its counts over the
// part it lasted ("last 350ms: intended 31 sent 31 …"), not per-second
// rates; a second the run did not reach has no line. The pattern's ops are
// at 10 ms, 20 ms, … 2.3 s: 99, 100 and 31 in its seconds.
func TestLiveLastPartialSecond(t *testing.T) {
	for _, c := range []struct {
		end  time.Duration // the run's end, after t = 0
		sent []int64       // per second
		want []string      // one per line, in order
	}{
		{2350 * time.Millisecond, []int64{99, 100, 31}, []string{
			"load t=  0s intended      99/s dropped      0 sent      99/s in-flight     0 ended: accepted      99/s",
			"load t=  1s intended     100/s dropped      0 sent     100/s in-flight     0 ended: accepted     100/s",
			"load t=  2s last 350ms: intended 31 dropped 0 sent 31 in-flight 0 ended: accepted 30 refused 1 failed 0"}},
		// Stopped at 1.5 s: the ops intended after it were cancelled, not
		// dropped, and the seconds after it have no line.
		{1500 * time.Millisecond, []int64{99, 50}, []string{
			"load t=  0s intended      99/s dropped      0 sent      99/s in-flight     0 ended: accepted      99/s",
			"load t=  1s last 500ms: intended 50 dropped 0 sent 50 in-flight 0 ended: accepted 50 refused 0 failed 0"}},
	} {
		l := newLiveStats(constant(t, 100, 2300*time.Millisecond), time.Second)
		// t = 0 five seconds ago: every line is due at once.
		t0 := mono.Now() - int64(5*time.Second)
		l.t0.Store(t0)
		l.end.Store(t0 + int64(c.end))
		for s, n := range c.sent {
			l.started[s].Store(n)
			l.sent[s].Store(n)
			l.accepted[s].Store(n)
		}
		if c.end > 2*time.Second {
			l.accepted[2].Add(-1)
			l.refused[2].Store(1)
		}
		var out bytes.Buffer
		l.print(&out, "load")()
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != len(c.want) {
			t.Fatalf("end %v: %d lines, want %d:\n%s", c.end, len(lines), len(c.want), out.String())
		}
		for i, w := range c.want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("end %v: line %d\n%s\nwant it to begin\n%s", c.end, i, lines[i], w)
			}
		}
		if last := lines[len(lines)-1]; strings.Contains(last, "/s") {
			t.Errorf("end %v: the partial second given as rates: %s", c.end, last)
		}
	}
}
