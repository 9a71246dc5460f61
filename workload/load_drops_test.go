package workload

import (
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/schedule"
)

// TestDropsBookedByWhoLimited: the slots a load could not start within
// --load-max-lateness are booked by the load's own judgement of who limited
// it. Every slot of the pool waiting on slow replies while the client had
// CPU to spare is the relay's doing (relay-limited: incomplete, exit 4);
// the client's saturated CPU, its goroutines waiting to run or its late
// dispatcher are the client's (client-limited: the requested work did not
// run, exit 1, never "all requested work ran" and never blamed on the
// relay). The relay's full pool on a machine where other processes
// competed for the cores (sysinfo.OthersBusy's clause given) is the
// relay's or the machine's: booked WhyMachineDrop (work not run,
// incomplete, exit 4), the note and the verdict's reason say both and quote
// the machine's load average (7.5 on 2 cores, the constructed input: a quiet
// machine is never forced into this branch), never "relay-limited" alone; a client-limited
// judgement on such a machine ends its note with the machine's load, and a
// client that used under half its cores was late from outside its own
// work (its goroutines waited for CPUs the other processes held).
func TestDropsBookedByWhoLimited(t *testing.T) {
	const busy = "the machine's 1-minute load average was 7.5 on 2 cores: other processes competed for its cores, and their waits count in these figures"
	cores := float64(runtime.GOMAXPROCS(0))
	ms := int64(time.Millisecond)
	for _, c := range []struct {
		name      string
		clientCPU float64 // seconds over the 3 s phase
		sched     time.Duration
		maxIn     int64
		dispatch  int64 // dispatch lateness of every op, ns
		want      string
		note      string
		status    int
		busy      string // the machine's load: sysinfo.OthersBusy's clause
	}{
		{"slots waiting on the relay, client CPU to spare", 0.3, 0, 2, 0, WhyRelayDrop,
			"relay-limited: ops were late or dropped because both in-flight slots (--load-pool) were waiting", judge.Incomplete, ""},
		{"slots waiting on the relay, other processes busy", 0.3, 0, 2, 0, machineDropWhy(busy),
			RelayOrMachine + " ops were late or dropped because both in-flight slots (--load-pool) were waiting for the relay's replies while the client had CPU to spare (CPU: client 0.10 of", judge.Incomplete, busy},
		{"the client's CPU saturated, other processes busy", 3 * cores, 0, 2, 0, WhyClientDrop, "client-limited: the client's CPU was saturated", judge.Error, busy},
		{"the client's goroutines waited to run, other processes busy", 0.3, 40 * time.Millisecond, 2, 0, WhyClientDrop,
			"client-limited: both in-flight slots filled, but the client's own goroutines waited", judge.Error, busy},
		{"the client's CPU saturated", 3 * cores, 0, 2, 0, WhyClientDrop, "client-limited: the client's CPU was saturated", judge.Error, ""},
		{"the client's goroutines waited to run", 0.3, 40 * time.Millisecond, 2, 0, WhyClientDrop,
			"client-limited: both in-flight slots filled, but the client's own goroutines waited", judge.Error, ""},
		{"the dispatcher woke late, the pool never full, the client idle", 0.3, 0, 1, 5 * ms, WhyClientDrop,
			"client-limited: the dispatcher handed ops out late (its share of the lateness over 1ms at p99, as the lateness note says) and 2,044 were dropped (not started within 0s) with at most 1 of 2 in-flight slots busy, while the client itself was not busy", judge.Error, ""},
		{"the dispatcher woke late, the pool never full, the client busy", 0.6 * 3 * cores, 0, 1, 5 * ms, WhyClientDrop,
			"client-limited: the dispatcher handed ops out late (its share of the lateness over 1ms at p99, as the lateness note says; CPU: client", judge.Error, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := &schedule.Result{Pool: 2, MaxInFlight: c.maxIn, Intended: 9000, Dropped: 2044, ClientLimited: true,
				ClientLimitedWhy: "2,044 operations dropped", Uncorrected: metrics.NewHistogram()}
			for range 100 {
				res.Uncorrected.Record(50 * ms) // replies far slower than the 0.67 ms the pool takes to fill
			}
			if c.dispatch > 0 {
				res.DispatchLateness = metrics.NewHistogram()
				res.DispatchLateness.Record(c.dispatch)
			}
			ph := results.Phase{Name: "load", Duration: int64(3 * time.Second), ClientLimited: true,
				Resources: &results.Resources{ClientCPUSecs: c.clientCPU},
				Accounts: []results.Account{{Op: results.OpEvent, Requested: 9000, Accepted: 6956, NotRun: 2044,
					NotRunBy: map[string]int64{whyLateDrop: 2044}}}}
			bookDrops(&ph, judgeLoad(&ph, res, c.sched, c.busy))
			a := ph.Accounts[0]
			if a.NotRunBy[c.want] != 2044 || len(a.NotRunBy) != 1 || Drops(a) != 2044 || !a.Balanced() {
				t.Fatalf("not run by %v, want 2,044 %q", a.NotRunBy, c.want)
			}
			notes := strings.Join(ph.Notes, "\n")
			if !strings.Contains(notes, c.note) || ph.ClientLimited != (c.want == WhyClientDrop) {
				t.Errorf("client-limited %v, notes:\n%s\nwant %q", ph.ClientLimited, notes, c.note)
			}
			if c.busy != "" && (len(ph.Notes) != 1 || !strings.HasSuffix(notes, "; "+c.busy) || strings.Contains(notes, "relay-limited") || strings.Count(notes, "competed for") != 1) {
				t.Errorf("a busy machine: the judgement does not end with its load, or blames the relay alone:\n%s", notes)
			}
			if outside := c.want == WhyClientDrop && c.clientCPU/3 < cores/2; c.busy != "" && outside != strings.Contains(notes, LateFromOutside) {
				t.Errorf("late from outside the client's own work %v, notes:\n%s", outside, notes)
			}
			checkDropVerdict(t, ph, c.status)
		})
	}
}

// quotesLoad is a relay- or machine-limited not-run reason quoting the
// machine's load average, as the note does.
var quotesLoad = regexp.MustCompile(`not run \(` + regexp.QuoteMeta(WhyMachineDrop) + ` \(the machine's 1-minute load average was [0-9.]+ on [0-9]+ cores; the relay may have waited for a CPU`)

// checkDropVerdict checks that ph's verdict is status and its reasons say
// who limited the drops: the relay (work it prevented, naming
// relay-limited) or the client (relaybench could not run the work).
func checkDropVerdict(t *testing.T, ph results.Phase, status int) {
	t.Helper()
	v := phaseVerdict(ph, false)
	reasons := strings.Join(v.Reasons, "\n")
	switch {
	case v.Status != status:
		t.Errorf("verdict %d %v, want %d", v.Status, v.Reasons, status)
	case status == judge.Incomplete && !strings.Contains(reasons, "not run ("+WhyRelayDrop) && !strings.Contains(reasons, "not run ("+WhyMachineDrop):
		t.Errorf("incomplete without the relay- (or machine-) limited not run: %v", v.Reasons)
	case strings.Contains(reasons, WhyMachineDrop) && (strings.Contains(reasons, "not run (relay-limited") ||
		!quotesLoad.MatchString(reasons)):
		t.Errorf("relay- or machine-limited, the reason does not say both or quote the load average: %v", v.Reasons)
	case status == judge.Error && (!strings.Contains(reasons, "relaybench could not run the requested work: load: ") ||
		!strings.Contains(reasons, "operations not started, the client was the limit") || strings.Contains(reasons, "relay-limited")):
		t.Errorf("error without the client's share: %v", v.Reasons)
	}
	if strings.Contains(judge.Summary(v), "all requested work ran") {
		t.Errorf("summary %q with drops", judge.Summary(v))
	}
}

// Slots a load could not start within MaxLateness are not run, counted as
// dropped, and booked as the phase's judgement says: a relay whose OKs
// take 50 ms filling a pool of 2 at 400/s is relay-limited unless this
// machine's load made the client the limit (then its note says so); either
// way the booking, the note and the verdict agree.
func TestLoadDropsAreNotRunBookedByWhoLimited(t *testing.T) {
	ph, _ := runLoad(t, testrelay.Config{OKDelay: 50 * time.Millisecond}, LoadOptions{Pattern: constant(t, 400, time.Second), Pool: 2,
		Connections: 1, MaxLateness: 10 * time.Millisecond, Size: 100})
	a := account(t, ph, results.OpEvent)
	if Drops(a) == 0 || Drops(a) != ph.Counts["dropped"] || a.NotRun != ph.Counts["dropped"] || a.Accepted+a.NotRun != 400 {
		t.Fatalf("account %+v, counts %v", a, ph.Counts)
	}
	notes := strings.Join(ph.Notes, "\n")
	t.Logf("booked %v; notes:\n%s", a.NotRunBy, notes)
	if a.NotRunBy[WhyRelayDrop] == a.NotRun {
		if ph.ClientLimited || !strings.Contains(notes, "relay-limited: ") {
			t.Errorf("booked relay-limited, judged otherwise (client-limited %v):\n%s", ph.ClientLimited, notes)
		}
		checkDropVerdict(t, ph, judge.Incomplete)
		return
	}
	if a.NotRunBy[WhyClientDrop] != a.NotRun || strings.Contains(notes, "relay-limited: ") || !strings.Contains(notes, "client-limited: ") {
		t.Fatalf("booked %v, notes:\n%s", a.NotRunBy, notes)
	}
	checkDropVerdict(t, ph, judge.Error)
}

// Ops that started late while every in-flight slot waited on the relay,
// none dropped: the note says so plainly, never "relay-limited" or "did
// not keep up", and the phase is neither relay- nor client-limited; with
// drops it is relay-limited.
func TestLateWithoutDropsIsNotRelayLimited(t *testing.T) {
	ms := int64(time.Millisecond)
	for _, dropped := range []int64{0, 30} {
		res := &schedule.Result{Pool: 2, MaxInFlight: 2, Intended: 900, Dropped: dropped, ClientLimited: true, MaxLateness: time.Second,
			ClientLimitedWhy: "lateness p99 5ms above 1ms: the pool of 2 was full", Uncorrected: metrics.NewHistogram(), Lateness: metrics.NewHistogram()}
		for range 100 {
			res.Uncorrected.Record(50 * ms) // replies far slower than the 6.7 ms the pool takes to fill
			res.Lateness.Record(5 * ms)
		}
		ph := results.Phase{Name: "load", Duration: int64(3 * time.Second), ClientLimited: true, Resources: &results.Resources{ClientCPUSecs: 0.3}}
		relay := judgeLoad(&ph, res, 0, "") == WhyRelayDrop
		notes := strings.Join(ph.Notes, "\n")
		switch {
		case ph.ClientLimited:
			t.Errorf("dropped %d: client-limited:\n%s", dropped, notes)
		case dropped == 0 && (relay || strings.Contains(notes, "relay-limited") || strings.Contains(notes, "did not keep up") ||
			!strings.HasPrefix(notes, SlotWaitPrefix) || !strings.Contains(notes, "lateness p99 5.00ms") || !strings.Contains(notes, "none was dropped")):
			t.Errorf("no drops: relay-limited %v, notes:\n%s", relay, notes)
		case dropped > 0 && (!relay || !strings.HasPrefix(notes, "relay-limited: ")):
			t.Errorf("%d dropped: relay-limited %v, notes:\n%s", dropped, relay, notes)
		}
	}
}

// TestSlotWaitSaysWhoWasLate: ops that started late while every in-flight
// slot was busy at times, beside a dispatcher that handed ops out late,
// get one judgement from the evidence. The dispatcher's share of the
// lateness (the lateness note's) half of it or more while the client was
// busy or its goroutines waited for a CPU is the client late to start work
// (client-limited, no slot-wait note, and drops are the client's too).
// Otherwise the slots, held by the relay's replies, made ops wait, and the
// slot-wait note says so: with the client idle and its goroutines run at
// once, the dispatcher's share is its wait for room in the queue in front
// of the full pool (load --load-base 50 on a relay answering in 190 ms read
// "dispatcher's share p99 110ms" beside lateness p99 154ms, client 0.02
// cores). Never two notes naming different culprits.
func TestSlotWaitSaysWhoWasLate(t *testing.T) {
	ms := int64(time.Millisecond)
	const slots = "the slots, held by the relay's replies, made ops wait, not the client"
	for _, c := range []struct {
		dispatch, dropped int64
		sched             time.Duration // the client's goroutines' wait for a CPU, p99
		client            bool
		note              string
	}{
		{4 * ms, 0, 2 * time.Millisecond, true, "client-limited: some ops started late (lateness p99 5.00ms, max 5.00ms) because the dispatcher handed them out late (its share of the lateness p99 4.00ms, half of it or more) while the client was busy or its goroutines waited for a CPU: the client was late to start work, not the relay; both in-flight slots (--load-pool) were busy at times too"},
		{4 * ms, 0, 100 * time.Microsecond, false, SlotWaitPrefix + " some started late (lateness p99 5.00ms, max 5.00ms) while both in-flight slots (--load-pool) were busy waiting for replies; none was dropped: every op started within --load-max-lateness (1s); the dispatcher's share of the lateness (p99 4.00ms) was its wait for room in the queue in front of the full pool, not a late wake-up: the client had CPU to spare and its goroutines waited far less than that for one: " + slots},
		{3 * ms / 2, 0, 2 * time.Millisecond, false, "the dispatcher's share of the lateness (p99 1.50ms) was the smaller part: " + slots},
		{ms / 5, 0, 2 * time.Millisecond, false, "the dispatcher handed ops out on time (its share of the lateness p99 200µs): " + slots},
		{4 * ms, 30, 2 * time.Millisecond, true, "client-limited: "},
		{4 * ms, 30, 100 * time.Microsecond, false, "relay-limited: ops were late or dropped because both in-flight slots"},
	} {
		res := &schedule.Result{Pool: 2, MaxInFlight: 2, Intended: 900, Dropped: c.dropped, ClientLimited: true, MaxLateness: time.Second,
			ClientLimitedWhy: "lateness p99 5ms above 1ms: the pool of 2 was full", Uncorrected: metrics.NewHistogram(), Lateness: metrics.NewHistogram(),
			DispatchLateness: metrics.NewHistogram()}
		for range 100 {
			res.Uncorrected.Record(50 * ms) // replies far slower than the 6.7 ms the pool takes to fill
			res.Lateness.Record(5 * ms)
			res.DispatchLateness.Record(c.dispatch)
		}
		ph := results.Phase{Name: "load", Duration: int64(3 * time.Second), ClientLimited: true, Resources: &results.Resources{ClientCPUSecs: 0.3}}
		relay := judgeLoad(&ph, res, c.sched, "") == WhyRelayDrop
		notes := strings.Join(ph.Notes, "\n")
		blames := strings.Contains(notes, "client-limited") || strings.Contains(notes, "client was late")
		if !strings.Contains(notes, c.note) || ph.ClientLimited != c.client || relay != (!c.client && c.dropped > 0) || blames != c.client ||
			c.client == strings.Contains(notes, "relay's replies") {
			t.Errorf("dispatcher p99 %v, client's goroutines waited p99 %v, %d dropped: client-limited %v, relay-limited %v, notes:\n%s\nwant %q",
				time.Duration(c.dispatch), c.sched, c.dropped, ph.ClientLimited, relay, notes, c.note)
		}
	}
}

// TestFullPoolDropsJudgedOnce: a load whose drops the schedule put down to
// a full pool gets one judgement from the evidence, which books the drops,
// writes the judgement's note and agrees with the drop note. A mixed load
// on a busy machine read the dispatcher's share of the lateness p99 737ms
// (p50 8.49ms) beside lateness p50 789ms while the client used 0.13 of 2
// cores and its goroutines waited p99 1.31ms for a CPU: a wait that short
// cannot hold ops back 737ms; the dispatcher was waiting for room in the
// queue in front of the pool the relay's replies kept full. Those drops
// are the relay's (or the busy machine's), never "the client was the
// limit" beside "the pool of 10 was full". Goroutines that waited long
// enough to account for the share are the client's, and the drop note then
// says the full pool did not keep the ops from starting by itself.
func TestFullPoolDropsJudgedOnce(t *testing.T) {
	const busy = "the machine's 1-minute load average was 13.0 on 2 cores: other processes competed for its cores, and their waits count in these figures"
	const dropNote = "1,739 operations dropped (not started within 1s of their intended time): the pool of 10 was full"
	ms := int64(time.Millisecond)
	for _, c := range []struct {
		name  string
		sched time.Duration
		busy  string
		want  string
	}{
		{"goroutines waited little, quiet machine", 1310 * time.Microsecond, "", WhyRelayDrop},
		{"goroutines waited little, busy machine", 1310 * time.Microsecond, busy, machineDropWhy(busy)},
		{"goroutines waited as long as the share", 300 * time.Millisecond, "", WhyClientDrop},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := &schedule.Result{Pool: 10, MaxInFlight: 10, Intended: 5000, Dropped: 1739, ClientLimited: true, MaxLateness: time.Second,
				ClientLimitedWhy: "1,739 operations dropped (not started within 1s): the pool of 10 was full", Uncorrected: metrics.NewHistogram(),
				Lateness: metrics.NewHistogram(), DispatchLateness: metrics.NewHistogram()}
			for i := range 100 {
				res.Uncorrected.Record(cmpInt(i < 95, 5*ms, 300*ms))
				res.Lateness.Record(cmpInt(i < 50, 789*ms, 999*ms))
				res.DispatchLateness.Record(cmpInt(i < 50, 8*ms, 737*ms))
			}
			ph := results.Phase{Name: "load", Duration: int64(5660 * time.Millisecond), ClientLimited: true,
				Resources: &results.Resources{ClientCPUSecs: 0.72}, Notes: []string{dropNote},
				Accounts: []results.Account{{Op: results.OpEvent, Requested: 5000, Accepted: 3261, NotRun: 1739,
					NotRunBy: map[string]int64{whyLateDrop: 1739}}}}
			bookDrops(&ph, judgeLoad(&ph, res, c.sched, c.busy))
			a := ph.Accounts[0]
			notes := strings.Join(ph.Notes, "\n")
			if a.NotRunBy[c.want] != 1739 || len(a.NotRunBy) != 1 {
				t.Fatalf("not run by %v, want 1,739 %q; notes:\n%s", a.NotRunBy, c.want, notes)
			}
			client := c.want == WhyClientDrop
			if ph.ClientLimited != client || client != strings.Contains(notes, "client-limited") ||
				client != strings.Contains(ph.Notes[0], dropNote+", but the client, not the relay's replies, kept them") {
				t.Errorf("booked %q, client-limited %v, notes:\n%s", c.want, ph.ClientLimited, notes)
			}
			status := judge.Incomplete
			if client {
				status = judge.Error
			}
			checkDropVerdict(t, ph, status)
		})
	}
}

func cmpInt(cond bool, a, b int64) int64 {
	if cond {
		return a
	}
	return b
}
