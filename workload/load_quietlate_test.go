package workload

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/sysinfo"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/schedule"
)

// TestClientLimitedQuotesItsEvidence: a load whose ops started late while
// the client used little CPU and its goroutines waited little for one (the
// sine load on a machine busy with other processes) is client-limited on
// the evidence of its lateness: the note quotes that lateness and the
// dispatcher's share, and says the CPU figures put the delay outside the
// client's own work, never that the client's CPU could not keep up. With
// the client's goroutines waiting to run, the note is the dispatcher's.
func TestClientLimitedQuotesItsEvidence(t *testing.T) {
	ms := int64(time.Millisecond)
	cores := float64(runtime.GOMAXPROCS(0))
	for _, c := range []struct {
		name      string
		clientCPU float64 // seconds over the 20 s phase
		sched     time.Duration
		dispatch  bool
		want      []string
		not       []string
	}{
		{"dispatcher late, client idle", 2.4, 98 * time.Microsecond, true,
			[]string{"client-limited: the dispatcher handed ops out late (its share of the lateness over 1ms at p99, as the lateness note says) with at most 3 of 10 in-flight slots busy, while the client itself was not busy (CPU: client 0.12 of",
				"waited p99 98.0µs for a CPU", "outside its own work"},
			[]string{"could not keep up", "saturated", "dropped"}},
		{"workers late, client idle", 2.4, 98 * time.Microsecond, false,
			[]string{"client-limited: ops started late (lateness p99 over 1ms, as the lateness note says) with at most 3 of 10", "outside its own work"},
			[]string{"could not keep up", "dispatcher"}},
		{"dispatcher late, client's goroutines waited", 2.4, 4 * time.Millisecond, true,
			[]string{"client-limited: the dispatcher handed ops out late", "waited p99 4.00ms for a CPU"},
			[]string{"outside its own work"}},
		{"dispatcher late, client busy", 0.7 * cores * 20, 0, true,
			[]string{"client-limited: the dispatcher handed ops out late"},
			[]string{"outside its own work"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := &schedule.Result{Pool: 10, MaxInFlight: 3, Intended: 22000, ClientLimited: true, MaxLateness: time.Second,
				ClientLimitedWhy: "lateness p99 3ms above 1ms: workers picked ops up late with the pool never full: the client's CPU could not keep up",
				Uncorrected:      metrics.NewHistogram(), Lateness: metrics.NewHistogram()}
			if c.dispatch {
				res.DispatchLateness = metrics.NewHistogram()
			}
			for range 100 {
				res.Uncorrected.Record(ms / 3)
				res.Lateness.Record(3 * ms)
				if c.dispatch {
					res.DispatchLateness.Record(3 * ms)
				}
			}
			ph := results.Phase{Name: "load", Duration: int64(20 * time.Second), ClientLimited: true,
				Resources: &results.Resources{ClientCPUSecs: c.clientCPU}}
			if judgeLoad(&ph, res, c.sched, "") != WhyClientDrop || !ph.ClientLimited {
				t.Fatalf("relay-limited or not client-limited (%v): %q", ph.ClientLimited, ph.Notes)
			}
			notes := strings.Join(ph.Notes, "\n")
			for _, w := range c.want {
				if !strings.Contains(notes, w) {
					t.Errorf("notes lack %q:\n%s", w, notes)
				}
			}
			for _, n := range c.not {
				if strings.Contains(notes, n) {
					t.Errorf("notes say %q:\n%s", n, notes)
				}
			}
		})
	}
}

// TestLateFromOutsideQuotesLoadAverage: a load judged late from outside
// the client's own work on a machine whose load average is no sign of
// other processes competing (standalone load, load average 1.6 on 2
// cores) quotes that load average in the judgement, in the words
// conformance --under-load's quotes it (sysinfo), so the warning says how
// busy the machine was; so does every other judgement ("the client kept
// up (…); the machine's 1-minute load average was …"), as the README says
// of load's notes, once.
func TestLateFromOutsideQuotesLoadAverage(t *testing.T) {
	const la = "the machine's 1-minute load average was 1.6 on 2 cores"
	machineLoadClause = func() string { return la }
	defer func() { machineLoadClause = sysinfo.LoadClause }()
	ms := int64(time.Millisecond)
	for _, late := range []bool{true, false} {
		res := &schedule.Result{Pool: 10, MaxInFlight: 3, Intended: 22000, ClientLimited: late, MaxLateness: time.Second,
			ClientLimitedWhy: "lateness p99 3ms above 1ms", Uncorrected: metrics.NewHistogram(), Lateness: metrics.NewHistogram(),
			DispatchLateness: metrics.NewHistogram()}
		for range 100 {
			res.Uncorrected.Record(ms / 3)
			if late {
				res.Lateness.Record(3 * ms)
				res.DispatchLateness.Record(3 * ms)
			}
		}
		ph := results.Phase{Name: "load", Duration: int64(20 * time.Second), ClientLimited: late,
			Resources: &results.Resources{ClientCPUSecs: 0.4}}
		judgeLoad(&ph, res, 98*time.Microsecond, "")
		last := ph.Notes[len(ph.Notes)-1]
		if outside := strings.Contains(last, LateFromOutside); outside != late || !strings.HasSuffix(last, "; "+la) || strings.Count(strings.Join(ph.Notes, "\n"), la) != 1 {
			t.Errorf("late %v: judgement %q: want it to end with the load average, said once", late, last)
		}
	}
}

// On a quiet machine (load average below its cores) the quiet-late
// judgement does not blame other processes, and find-max's advice is not
// "a quieter machine": a walk read "other processes busy on this machine …
// a quieter machine avoids it" beside a load average of 0.9 on 2 cores.
func TestQuietLateOnAQuietMachine(t *testing.T) {
	machineQuiet = func() bool { return true }
	defer func() { machineQuiet = func() bool { return false } }()
	n := quietLateNote(&schedule.Result{Pool: 10, MaxInFlight: 2}, "CPU: client 0.04 of 2 cores")
	if !strings.Contains(n, LateFromOutside+LateFromOS) || strings.Contains(n, "other processes busy") || strings.Contains(n, "quieter machine") {
		t.Errorf("quiet machine: %q", n)
	}
	ph := results.Phase{Duration: int64(10 * time.Second), Resources: &results.Resources{ClientCPUSecs: 0.4}, Notes: []string{n}}
	adv := clientLimitedNote(&FindMaxResult{Steps: []Step{{Rate: 100, Pass: true}, {Rate: 110, Phase: ph, ClientLimited: true}}, ClientLimited: true})
	if strings.Contains(adv, "quieter machine") || !strings.Contains(adv, "timer and scheduling latency") {
		t.Errorf("find-max's advice on a quiet machine: %q", adv)
	}
}
