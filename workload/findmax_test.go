package workload

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
)

// A relay with 2 workers × 5 ms can do at most 400 events/s (less: timers
// overshoot). The search must land within a generous band of that.
func TestFindMaxFindsTestRelayCapacity(t *testing.T) {
	const capacity = 400.0
	r := testrelay.Start(t, testrelay.Config{ProcessingTime: 5 * time.Millisecond, Workers: 2})
	var progress bytes.Buffer
	ph, res, err := FindMax(testCtx(t), r.URL(), smallCorpus(t), FindMaxOptions{
		Load:      LoadOptions{Pool: 64, Connections: 4, Size: 100, MaxLateness: 500 * time.Millisecond},
		StartRate: 50, StepDuration: 1500 * time.Millisecond, P99: 50 * time.Millisecond, Precision: 0.15,
		Progress: &progress,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s\n%s", progress.String(), strings.Join(ph.Notes, "\n"))
	if res.ClientLimited {
		// Allowed only when the client really was the limit, and then the
		// answer must say it is a lower bound.
		if !strings.HasPrefix(res.Answer, "≥") && !strings.Contains(res.Answer, "client-limited") {
			t.Errorf("client-limited search answered %q", res.Answer)
		}
		t.Skipf("the client limited the search on this machine: %s", res.Answer)
	}
	if res.Max < 0.3*capacity || res.Max > 1.5*capacity {
		t.Errorf("found %v events/s, want between %v and %v", res.Max, 0.3*capacity, 1.5*capacity)
	}
	if res.FirstFail <= res.Max || res.FirstFail > 4*capacity {
		t.Errorf("first failing rate %v (max %v)", res.FirstFail, res.Max)
	}
	if ph.Rates["max_rate"] != res.Max || len(ph.Groups) != len(res.Steps) || int(ph.Counts["steps"]) != len(res.Steps) {
		t.Errorf("phase: rates %v, %d groups, %d steps", ph.Rates, len(ph.Groups), len(res.Steps))
	}
	// The steps double from the start rate until one fails, then bisect.
	if res.Steps[0].Rate != 50 || res.Steps[1].Rate != 100 {
		t.Errorf("first steps %v, %v; want 50, 100", res.Steps[0].Rate, res.Steps[1].Rate)
	}
	var passes, fails int
	for _, st := range res.Steps {
		if st.Pass {
			passes++
			if st.Rate > res.Max {
				t.Errorf("passing step %v above the answer %v", st.Rate, res.Max)
			}
		} else {
			fails++
		}
	}
	if passes == 0 || fails == 0 {
		t.Errorf("%d passing, %d failing steps", passes, fails)
	}
	if !strings.Contains(strings.Join(ph.Notes, "\n"), "| offered/s |") {
		t.Error("no curve table in the notes")
	}
	checkFindMaxAccount(t, ph)
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
