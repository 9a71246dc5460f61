package workload

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
)

// phaseVerdict is the judge's verdict on a results file holding ph alone.
func phaseVerdict(ph results.Phase, interrupted bool) results.Verdict {
	f := &results.File{Runs: []results.Run{{Phases: []results.Phase{ph}}}}
	return judge.Judge(f, interrupted)
}

// cancelWhen cancels the returned context once cond holds (polled).
func cancelWhen(t *testing.T, cond func() bool) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(ctxT(t))
	t.Cleanup(cancel)
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if cond() {
					cancel()
					return
				}
			}
		}
	}()
	return ctx
}

func TestLoadHonestRelayPasses(t *testing.T) {
	r := testrelay.New(testrelay.Config{Verify: true})
	defer r.Close()
	ph, err := Load(ctxT(t), r.URL(), smallCorpus(t), LoadOptions{Pattern: constant(t, 200, time.Second), Pool: 200,
		MaxLateness: 20 * time.Second, Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	checkBalance(t, ph)
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

// Refusals are booked by class, kept out of the latency of served ops and
// out of the accepted rate; the judge calls the phase incomplete.
func TestLoadRefusalsByClassNotInLatency(t *testing.T) {
	r := testrelay.New(testrelay.Config{RefuseEvery: 3, RefuseReason: "rate-limited: slow down"})
	defer r.Close()
	ph, err := Load(ctxT(t), r.URL(), smallCorpus(t), LoadOptions{Pattern: constant(t, 300, time.Second), Pool: 200,
		MaxLateness: 20 * time.Second, Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	checkBalance(t, ph)
	a := account(t, ph, results.OpEvent)
	if a.Accepted != 200 || a.Refused != 100 || a.RefusedBy["rate-limited"] != 100 {
		t.Errorf("account %+v", a)
	}
	for name, want := range map[string]int64{"ok": 200, "ok_uncorrected": 200, "ok_refused": 100} {
		if h := ph.Latency[name]; h == nil || h.Count != want {
			t.Errorf("latency %s: %+v, want %d samples", name, h, want)
		}
	}
	if v := phaseVerdict(ph, false); v.Status != judge.Incomplete || !strings.Contains(strings.Join(v.Reasons, "\n"), "rate-limited 100") {
		t.Errorf("verdict %+v", v)
	}
}

// A relay that never answers stops the phase long before the pattern's
// end, with one Aborted line; every slot still has one outcome.
func TestLoadNeverOKAborts(t *testing.T) {
	r := testrelay.New(testrelay.Config{NeverOK: true})
	defer r.Close()
	p := constant(t, 100, 30*time.Second)
	ph, err := Load(ctxT(t), r.URL(), smallCorpus(t), LoadOptions{Base: Base{Timeout: 200 * time.Millisecond}, Pattern: p, Pool: 10, Size: 100,
		MaxLateness: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	checkBalance(t, ph)
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
	c := smallCorpus(t)
	r := testrelay.New(testrelay.Config{StallAfter: 40})
	defer r.Close()
	r.Add(c.Events...)
	ph, err := Load(ctxT(t), r.URL(), c, LoadOptions{Base: Base{Timeout: 200 * time.Millisecond}, Kind: LoadQuery, Pattern: constant(t, 100, 30*time.Second), Pool: 10,
		Connections: 2, MaxLateness: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	checkBalance(t, ph)
	a := account(t, ph, results.OpQuery)
	if ph.Aborted == "" || a.Accepted == 0 || a.Accepted > 40 || a.NotRunBy[outcome.WhyAborted] == 0 {
		t.Errorf("aborted %q, account %+v", ph.Aborted, a)
	}
}

// A relay that drops connections: the ops on them are connection lost, the
// pool redials and the load goes on.
func TestLoadConnLost(t *testing.T) {
	r := testrelay.New(testrelay.Config{CloseAfter: 60})
	defer r.Close()
	ph, err := Load(ctxT(t), r.URL(), smallCorpus(t), LoadOptions{Pattern: constant(t, 200, 2*time.Second), Pool: 2,
		Connections: 2, MaxLateness: 20 * time.Second, Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	checkBalance(t, ph)
	a := account(t, ph, results.OpEvent)
	if a.ConnLost < 2 || a.Accepted <= 2*59 || a.TimedOut != 0 || a.Cancelled != 0 || ph.Aborted != "" {
		t.Errorf("account %+v, aborted %q", a, ph.Aborted)
	}
	if ph.Counts["conn_lost"] != a.ConnLost || ph.Counts["failed"] != a.ConnLost {
		t.Errorf("counts %v", ph.Counts)
	}
	if v := phaseVerdict(ph, false); v.Status != judge.Incomplete || !strings.Contains(strings.Join(v.Reasons, "\n"), "connection lost") {
		t.Errorf("verdict %+v", v)
	}
}

// Ctrl-C mid-phase: the EVENTs awaiting their OK and the slots not reached
// are cancelled, at once (not after the minute-long timeout), nothing is
// blamed on the relay, and the judge says interrupted.
func TestLoadCancelledMidPhase(t *testing.T) {
	r := testrelay.New(testrelay.Config{NeverOK: true})
	defer r.Close()
	ctx := cancelWhen(t, func() bool { return r.Stats().Events >= 10 })
	start := time.Now()
	ph, err := Load(ctx, r.URL(), smallCorpus(t), LoadOptions{Base: Base{Timeout: time.Minute}, Pattern: constant(t, 100, 30*time.Second), Pool: 10, Size: 100,
		MaxLateness: time.Minute})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
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
	r := testrelay.New(testrelay.Config{NoEOSE: true})
	defer r.Close()
	r.Add(c.Events...)
	ctx := cancelWhen(t, func() bool { return r.Stats().REQs >= 10 })
	ph, err := Load(ctx, r.URL(), c, LoadOptions{Base: Base{Timeout: time.Minute}, Kind: LoadQuery, Pattern: constant(t, 100, 30*time.Second), Pool: 10,
		MaxLateness: time.Minute})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
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
	c := smallCorpus(t)
	r := testrelay.New(testrelay.Config{})
	defer r.Close()
	r.Add(c.Events...)
	ph, err := Load(ctxT(t), r.URL(), c, LoadOptions{Kind: LoadMixed, PublishParts: 3, QueryParts: 1,
		Pattern: constant(t, 200, time.Second), Pool: 200, MaxLateness: 20 * time.Second, Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	checkBalance(t, ph)
	ev, q := account(t, ph, results.OpEvent), account(t, ph, results.OpQuery)
	if ev.Requested != 150 || ev.Accepted != 150 || q.Requested != 50 || q.Accepted != 50 {
		t.Errorf("event %+v, query %+v", ev, q)
	}
	if v := phaseVerdict(ph, false); v.Status != judge.Passed {
		t.Errorf("verdict %+v", v)
	}
}

// Slots the client could not start within MaxLateness are not run, with
// the client's why, and counted as dropped.
func TestLoadClientDropsAreNotRun(t *testing.T) {
	r := testrelay.New(testrelay.Config{OKDelay: 50 * time.Millisecond})
	defer r.Close()
	ph, err := Load(ctxT(t), r.URL(), smallCorpus(t), LoadOptions{Pattern: constant(t, 400, time.Second), Pool: 2,
		Connections: 1, MaxLateness: 10 * time.Millisecond, Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	checkBalance(t, ph)
	a := account(t, ph, results.OpEvent)
	if a.NotRunBy[WhyClientDrop] == 0 || a.NotRunBy[WhyClientDrop] != ph.Counts["dropped"] || a.NotRun != ph.Counts["dropped"] ||
		a.Accepted+a.NotRun != 400 {
		t.Errorf("account %+v, counts %v", a, ph.Counts)
	}
}
