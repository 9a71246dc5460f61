package runner

import (
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/sysinfo"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/workload"
)

func TestCheckTarget(t *testing.T) {
	for _, ok := range []string{"ws://127.0.0.1:7777", "ws://127.8.9.10:1/path", "ws://localhost:7447", "ws://[::1]:7447", "wss://127.0.0.1"} {
		if err := CheckTarget(ok, false); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"ws://192.0.2.1:7777", "wss://relay.example.com", "ws://10.0.0.1", "ws://128.0.0.1"} {
		err := CheckTarget(bad, false)
		if err == nil || !strings.Contains(err.Error(), "--i-operate-this-relay") {
			t.Errorf("%s not refused: %v", bad, err)
		}
		if err := CheckTarget(bad, true); err != nil {
			t.Errorf("%s refused despite the flag: %v", bad, err)
		}
	}
	for _, malformed := range []string{"http://127.0.0.1", "127.0.0.1:7777", "ws://", "ws://%zz"} {
		if err := CheckTarget(malformed, true); err == nil {
			t.Errorf("%q accepted", malformed)
		}
	}
}

func phase(secs, client, relay float64) *results.Phase {
	return &results.Phase{Duration: int64(secs * 1e9), Resources: &results.Resources{ClientCPUSecs: client * secs, RelayCPUSecs: relay * secs}}
}

func TestJudgeClient(t *testing.T) {
	machine := float64(runtime.NumCPU())
	cores := runtime.GOMAXPROCS(0)
	// The client kept all its cores busy: its figure, not the relay's.
	ph := phase(10, 0.95*float64(cores), 0.2)
	judgeClient(ph, cores)
	if !ph.ClientLimited || !strings.Contains(strings.Join(ph.Notes, " "), "client-limited") {
		t.Fatalf("busy client not flagged: %+v", ph)
	}
	// A busy relay with an idle client is the relay's figure.
	ph = phase(10, 0.1, 0.9)
	judgeClient(ph, cores)
	if ph.ClientLimited || !strings.Contains(strings.Join(ph.Notes, " "), "relay-limited") {
		t.Fatalf("busy relay: %+v", ph.Notes)
	}
	if machine >= 2 {
		// Saturated machine, client the bigger user: client-limited.
		ph = phase(10, machine*0.5, machine*0.45)
		judgeClient(ph, 0)
		if !ph.ClientLimited {
			t.Fatalf("saturated machine with client ≥ relay not flagged: %+v", ph.Notes)
		}
	}
	// An unobserved relay: only the client's CPU is known, and said so.
	ph = phase(10, 0.3, 0)
	judgeClient(ph, cores)
	if ph.ClientLimited || !strings.Contains(strings.Join(ph.Notes, " "), "relay CPU unknown") {
		t.Fatalf("unobserved relay: %+v", ph.Notes)
	}
	if got := ph.Resources.ClientCPUUtil; got <= 0 || got > 1 {
		t.Fatalf("client utilisation %v", got)
	}
}

// A phase of a few milliseconds is not judged: one 10 ms tick of the
// relay's CPU reads as 2.5 cores over 4 ms, so no side is named as the
// limit and the note says why; from ten ticks on the judgement is made.
func TestJudgeClientShortPhase(t *testing.T) {
	machine := float64(runtime.NumCPU())
	cores := runtime.GOMAXPROCS(0)
	for _, ph := range []*results.Phase{
		phase(0.004, 0.2, 2.38),
		phase(0.004, 0.95*float64(cores), 0.1),
		phase(0.004, machine*0.5, machine*0.45),
		phase(0.099, 0.1, 0.9),
	} {
		judgeClient(ph, cores)
		notes := strings.Join(ph.Notes, " ")
		if ph.ClientLimited || strings.Contains(notes, "limited:") || strings.Contains(notes, "limited,") || strings.Contains(notes, "saturated") {
			t.Errorf("%v phase judged: %q", time.Duration(ph.Duration), ph.Notes)
		}
		if len(ph.Notes) != 1 || !strings.HasPrefix(notes, "too short to judge what limited it: the timed window of ") {
			t.Errorf("%v phase: notes %q, want the one too-short note", time.Duration(ph.Duration), ph.Notes)
		}
	}
	ph := phase(0.004, 0.2, 2.38)
	judgeClient(ph, cores)
	if want := "the timed window of 4.00ms is under 100 ms, ten ticks of the 10 ms CPU clocks, so its CPU figures are tick noise (one tick is 2.50 cores here)"; !strings.Contains(ph.Notes[0], want) {
		t.Errorf("note %q, want %q", ph.Notes[0], want)
	}
	ph = phase(float64(minJudgedPhase)/1e9, 0.1, 0.9)
	judgeClient(ph, cores)
	if !strings.Contains(strings.Join(ph.Notes, " "), "relay-limited:") {
		t.Errorf("a phase of %v not judged: %q", minJudgedPhase, ph.Notes)
	}
}

// dyingProbe is a managed relay's probe whose process exits after a delay.
type dyingProbe struct {
	exited chan struct{}
}

func (p *dyingProbe) Begin() func() *results.Resources {
	return func() *results.Resources { return nil }
}
func (p *dyingProbe) Exited() <-chan struct{} { return p.exited }
func (p *dyingProbe) ExitErr() error          { return errors.New("signal: aborted") }

// A relay that crashed while a phase lost its connections is reported as
// dead even when its exit is noticed a moment after the phase ended; a
// phase that lost nothing does not wait for it.
func TestRelayDeathNoticedAfterLostConnections(t *testing.T) {
	p := &dyingProbe{exited: make(chan struct{})}
	died := relayDied(Target{Probe: p})
	calm := results.Run{Phases: []results.Phase{{Name: "subscribe", Accounts: []results.Account{{Requested: 5, Accepted: 5}}}}}
	if err := died(&calm); err != nil {
		t.Fatalf("no connection lost, relay alive: %v", err)
	}
	lost := results.Run{Phases: []results.Phase{{Name: "subscribe", Accounts: []results.Account{{Requested: 5, ConnLost: 5}}}}}
	time.AfterFunc(200*time.Millisecond, func() { close(p.exited) })
	err := died(&lost)
	if err == nil || !strings.Contains(err.Error(), "signal: aborted") {
		t.Fatalf("relay died after the phase: %v", err)
	}
	if !strings.Contains(lost.Phases[0].Aborted, "the relay process exited: signal: aborted") {
		t.Fatalf("phase not marked: %q", lost.Phases[0].Aborted)
	}
}

// Neither side busy on average: the note says the CPU figures are averages
// over the timed window (a burst may have kept a side busy for its
// moments) and does not call the figures latency-bound alone; a machine
// whose load average exceeds what both sides account for by a core says
// other processes competed (othersBusy: "" below that).
func TestJudgeClientNeitherSide(t *testing.T) {
	ph := phase(10, 0.04, 0.15)
	judgeClient(ph, runtime.GOMAXPROCS(0))
	n := strings.Join(ph.Notes, " ")
	if ph.ClientLimited || !strings.Contains(n, "neither side saturated its CPU (client 0.04, relay 0.15 cores, averages over the timed window)") ||
		!strings.Contains(n, "a burst may still have kept a side busy") {
		t.Fatalf("idle sides: %q", n)
	}
	if s := othersBusy(1e9); s != "" {
		t.Fatalf("load average above a billion cores of the two sides: %q", s)
	}
}

// A burst phase is judged on its CPU during the bursts (read at each
// burst's start and last answer), not on averages the idle time between
// bursts dilutes: a relay busy only while the bursts ran is named, and the
// note says which figures it judged.
func TestJudgeClientBurstMoments(t *testing.T) {
	burst := func(client, relay float64) *results.Phase {
		ph := phase(10, 0.04, 0.15) // idle on average
		ph.Counts = map[string]int64{workload.CountBurstCPUTime: int64(time.Second)}
		ph.Rates = map[string]float64{workload.RateBurstClientCores: client, workload.RateBurstRelayCores: relay}
		return ph
	}
	ph := burst(0.3, 0.9)
	judgeClient(ph, runtime.GOMAXPROCS(0))
	if n := strings.Join(ph.Notes, " "); !strings.Contains(n, "relay-limited: the relay kept 0.90 cores busy during the bursts") {
		t.Fatalf("relay busy in the bursts: %q", n)
	}
	ph = burst(0.1, 0.2)
	judgeClient(ph, runtime.GOMAXPROCS(0))
	n := strings.Join(ph.Notes, " ")
	if !strings.Contains(n, "(client 0.10, relay 0.20 cores, during the bursts: CPU time read at each burst's start and at its last answer, 1.00s in all)") ||
		strings.Contains(n, "averages") || strings.Contains(n, "a burst may still") {
		t.Fatalf("idle in the bursts: %q", n)
	}
	if r := ph.Resources.ClientCPUUtil; r <= 0 || r > 0.04 {
		t.Fatalf("client utilisation %v: the average over the window", r)
	}
}

// A relay judged the limit of a closed-loop phase on a machine where other
// processes competed for the cores says so, as the "neither side" note
// does: the relay may have waited for a CPU rather than been slow
// (sysinfo.OthersBusy's clause, from the two sides' cores). On a quiet
// machine the judgement is unchanged; neither marks the client the limit.
func TestJudgeClientRelayLimitedBusyMachine(t *testing.T) {
	const busy = "the machine's 1-minute load average was 11.2 on 2 cores: other processes competed for its cores, and their waits count in these figures"
	defer func() { machineOthersBusy = sysinfo.OthersBusy }()
	var sides float64
	for _, loaded := range []bool{true, false} {
		machineOthersBusy = func(s float64) string {
			sides = s
			if loaded {
				return busy
			}
			return ""
		}
		ph := phase(10, 0.13, 1.36)
		judgeClient(ph, 2)
		want := "relay-limited: the relay kept 1.36 cores busy while the client had spare CPU (0.13 of 2 cores)"
		if loaded {
			want += ", but it may have waited for a CPU rather than been slow; " + busy
		}
		if ph.ClientLimited || len(ph.Notes) != 1 || ph.Notes[0] != want {
			t.Errorf("loaded %v: client-limited %v, notes %q, want %q", loaded, ph.ClientLimited, ph.Notes, want)
		}
		if math.Abs(sides-1.49) > 1e-9 {
			t.Errorf("loaded %v: sides %v, want the two sides' 1.49 cores", loaded, sides)
		}
	}
}

// A long set-up is said in the duration format of every other note
// ("310ms", "1.38s"), not "0.31 s" (a walk read both side by side).
func TestNoteSetupDurationFormat(t *testing.T) {
	for _, c := range []struct {
		setup float64
		want  string
	}{{0.31, "took 310ms ("}, {1.381, "took 1.38s ("}} {
		ph := results.NewPhase("p", "publish")
		ph.Duration = 1e9
		ph.SetupSecs = c.setup
		noteSetup(&ph)
		if got := strings.Join(ph.Notes, "\n"); !strings.Contains(got, c.want) {
			t.Errorf("set-up %v s: %q, want %q", c.setup, got, c.want)
		}
	}
}
