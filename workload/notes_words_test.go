package workload

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/schedule"
)

// resultsKeyWord matches a results key in a note ("ok_refused"), as the
// brief summary finds the keys it puts in words.
var resultsKeyWord = regexp.MustCompile(`\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b`)

// heldKeys are the figures ph and its groups hold: the keys a note may
// name, since the brief summary says those in words.
func heldKeys(ph results.Phase) map[string]bool {
	held := map[string]bool{}
	add := func(c map[string]int64, r map[string]float64, l map[string]*results.Histogram) {
		for k := range c {
			held[k] = true
		}
		for k := range r {
			held[k] = true
		}
		for k := range l {
			held[k] = true
		}
	}
	add(ph.Counts, ph.Rates, ph.Latency)
	for _, g := range ph.Groups {
		add(g.Counts, g.Rates, g.Latency)
	}
	return held
}

// checkNotesNameHeldKeys fails when a note of ph names a results key ph
// does not hold: the brief summary could not say it in words ("refusals
// apart, as ok_refused" in a run without refusals).
func checkNotesNameHeldKeys(t *testing.T, ph results.Phase) {
	t.Helper()
	held := heldKeys(ph)
	for _, n := range ph.Notes {
		for _, k := range resultsKeyWord.FindAllString(n, -1) {
			if !held[k] {
				t.Errorf("%s: note names %q, a figure the phase does not hold: %s", ph.Name, k, n)
			}
		}
	}
}

// A closed-loop publish and a burst without refusals: their notes say that
// refusals are timed apart in words, not by a results key they do not hold.
func TestNotesNameOnlyHeldKeys(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{})
	pr, err := Publish(testCtx(t), r.URL(), smallCorpus(t), nil, PublishOptions{Base: Base{Timeout: 10 * time.Second}, Connections: 2, Mode: ModeWait})
	if err != nil {
		t.Fatal(err)
	}
	burst := runBurst(t, testrelay.Config{}, smallBurst)
	for _, ph := range []results.Phase{pr.Phase, burst} {
		if !strings.Contains(strings.Join(ph.Notes, "\n"), "refusals are timed apart") {
			t.Errorf("%s: no note says refusals are timed apart: %q", ph.Name, ph.Notes)
		}
		checkNotesNameHeldKeys(t, ph)
	}
}

// judgedSteadyLoad is the judged phase of a load of 1,000 operations in a
// second, all accepted, each with the same latency (ok), latency from the
// actual send (uncorrected), lateness and dispatcher's share of it, with
// its notes joined.
func judgedSteadyLoad(ok, uncorrected, lateness, dispatch time.Duration) (results.Phase, string) {
	res := &schedule.Result{Pool: 100, MaxInFlight: 3, Intended: 1000, Sent: 1000, Accepted: 1000,
		Latency: metrics.NewHistogram(), Uncorrected: metrics.NewHistogram(), RefusedLatency: metrics.NewHistogram(),
		Lateness: metrics.NewHistogram(), DispatchLateness: metrics.NewHistogram(), Series: metrics.NewSeries(0), End: int64(time.Second)}
	for range 1000 {
		res.Latency.Record(int64(ok))
		res.Uncorrected.Record(int64(uncorrected))
		res.Lateness.Record(int64(lateness))
		res.DispatchLateness.Record(int64(dispatch))
	}
	ph := res.Phase("load")
	ph.Resources = &results.Resources{ClientCPUSecs: 0.04}
	judgeLoad(&ph, res, 0, "")
	return ph, strings.Join(ph.Notes, "\n")
}

// A load whose dispatcher was late gives the dispatcher's share of the
// lateness once: in the lateness note, not again in the client-limited one.
func TestDispatchLatenessSaidOnce(t *testing.T) {
	ph, notes := judgedSteadyLoad(9*time.Millisecond, 2*time.Millisecond, 7430*time.Microsecond, 7400*time.Microsecond)
	if !ph.ClientLimited || !strings.Contains(notes, "client-limited: the dispatcher handed ops out late (its share of the lateness over 1ms at p99") {
		t.Fatalf("client-limited %v, notes:\n%s", ph.ClientLimited, notes)
	}
	if n := strings.Count(notes, "7.40ms"); n != 1 || !strings.Contains(notes, "dispatcher's share p99 7.40ms") {
		t.Errorf("the dispatcher's share is given %d times, want once in the lateness note:\n%s", n, notes)
	}
}

// A load that went out on schedule says so once: in the lateness note,
// not again in the judgement's (which says only that the client kept up).
func TestOnScheduleSaidOnce(t *testing.T) {
	ph, notes := judgedSteadyLoad(900*time.Microsecond, 800*time.Microsecond, 40*time.Microsecond, 20*time.Microsecond)
	if ph.ClientLimited || strings.Count(notes, "on schedule") != 1 || !strings.Contains(notes, "the client kept up (CPU: client") {
		t.Errorf("client-limited %v; want 'on schedule' once and the client keeping up:\n%s", ph.ClientLimited, notes)
	}
}

// The steps table of find-max heads its latencies as the summary's tables
// label them (OK p50, OK p99, and the p99 from the actual send), and gives
// durations as the group table does: 4.80ms, not 4.8ms.
func TestFindMaxStepsTableWords(t *testing.T) {
	h := func(p50, p99 int64) *results.Histogram {
		return &results.Histogram{Count: 100, Percentiles: map[string]int64{"50": p50, "99": p99}, Max: p99}
	}
	us := int64(time.Microsecond)
	sp := results.Phase{Name: "find-max/200", Duration: int64(time.Second), Counts: map[string]int64{"intended": 200, results.CountSent: 200},
		Accounts: []results.Account{{Op: results.OpEvent, Requested: 200, Accepted: 200}},
		Latency:  map[string]*results.Histogram{"ok": h(480*us, 26000*us), "ok_uncorrected": h(400*us, 4800*us), "lateness": h(10*us, 48000*us)}}
	res := &FindMaxResult{Max: 200, Answer: "≥ 200 events/s", Steps: []Step{{Rate: 200, Phase: sp, Pass: true}}}
	var ph results.Phase
	buildFindMaxPhase(&ph, res, FindMaxOptions{P99: 50 * time.Millisecond, StepDuration: time.Second}, "")
	var rows []string
	for _, n := range ph.Notes {
		if strings.HasPrefix(n, "| ") {
			rows = append(rows, n)
		}
	}
	if len(rows) != 2 || !strings.HasPrefix(rows[0], "| offered/s | achieved/s | OK p50 | OK p99 | OK p99 from actual send | lateness p99 |") {
		t.Fatalf("steps table: %q", rows)
	}
	if want := "| 480µs | 26.0ms | 4.80ms | 48.0ms |"; !strings.Contains(rows[1], want) {
		t.Errorf("step row %q lacks %q", rows[1], want)
	}
	// A failing step's verdict gives its p99 as the row does.
	o := FindMaxOptions{P99: 20 * time.Millisecond, Load: LoadOptions{Pool: 100}}
	_ = o.defaults()
	if pass, why, _ := judgeStep(sp, o); pass || !strings.HasPrefix(why, "p99 26.0ms > 20ms") {
		t.Errorf("pass %v why %q", pass, why)
	}
}
