package workload

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/sysinfo"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/schedule"
)

// machineLoad is sysinfo.OthersBusy's clause for a machine busy with other
// processes, as tests give it through machineOthersBusy.
const machineLoad = "the machine's 1-minute load average was 7.5 on 2 cores: " + sysinfo.OthersCompeted + ", and their waits count in these figures"

// TestStepOnBusyMachineIsNoRelayFigure: a step that failed by lateness or
// slowness only carries load's judgement of who limited it. Its replies
// slow while the client kept up is the relay's on a quiet machine, but on
// one where other processes competed for the cores (load's note ends with
// the machine's load) the relay may have waited for a CPU: the step is
// no relay figure (relay or machine, the load quoted). A client-limited
// step late from outside the client's own work says so with the load; a
// client-limited step's slow replies are no relay figure either; the
// relay's own answers (refusals) stay the relay's whatever the machine.
func TestStepOnBusyMachineIsNoRelayFigure(t *testing.T) {
	o := findMaxP99(1000)
	ms := int64(time.Millisecond)
	step := func(unc int64, refused int64, limited bool, notes ...string) results.Phase {
		a := results.Account{Op: results.OpEvent, Requested: 1000, Refused: refused}
		a.Accepted = a.Requested - a.Total()
		return results.Phase{Duration: int64(time.Second), Counts: map[string]int64{"intended": 1000}, ClientLimited: limited,
			Notes: notes, Accounts: []results.Account{a},
			Latency: map[string]*results.Histogram{"ok": p99Hist(600 * ms), "ok_uncorrected": p99Hist(unc)}}
	}
	quiet := quietLateNote(&schedule.Result{Pool: 10, MaxInFlight: 2}, "CPU: client 0.09 of 2 cores, relay 0.25 cores")
	for _, c := range []struct {
		name         string
		ph           results.Phase
		client       bool
		machine      bool
		want, reject string
	}{
		{"slow replies, quiet machine", step(460*ms, 0, false, "the client kept up (CPU: client 0.09 of 2 cores, relay 0.25 cores)"),
			false, false, "p99 600ms > 50ms", "machine"},
		{"slow replies, busy machine", step(460*ms, 0, false, "the client kept up (CPU: client 0.09 of 2 cores, relay 0.25 cores); "+machineLoad),
			true, true, "p99 600ms > 50ms (relay or machine: " + machineLoad + ")", ""},
		{"late from outside, replies on target, busy machine", step(20*ms, 0, true, quiet+"; "+machineLoad),
			true, true, "p99 600ms > 50ms (late from outside: " + machineLoad + ")", ""},
		// The replies alone missed the target: the relay's side, however
		// late the client was (the machine's too when it was busy).
		{"late from outside, replies over target, busy machine", step(460*ms, 0, true, quiet+"; "+machineLoad),
			true, true, "p99 600ms > 50ms (relay or machine: the replies alone took p99 460ms from the actual send, over the 50ms target; " + machineLoad + ")", "late from outside"},
		{"late from outside, replies over target, quiet machine", step(460*ms, 0, true, quiet+"; the machine's 1-minute load average was 0.4 on 2 cores"),
			false, false, "p99 600ms > 50ms (the replies alone took p99 460ms from the actual send, over the 50ms target)", "late from outside"},
		{"client-limited, slow replies, quiet machine", step(460*ms, 0, true, "client-limited: the client's CPU was saturated (CPU: client 1.95 of 2 cores)"),
			true, false, "p99 600ms > 50ms (the client's CPU was saturated", "machine"},
		{"refusals, busy machine", step(5*ms, 20, false, "the client kept up (CPU: client 0.09 of 2 cores); "+machineLoad),
			false, false, "20 refused", "machine"},
	} {
		v := judgeSteps(c.ph, o)
		if v.pass || v.client != c.client || (v.machine != "") != c.machine || !strings.Contains(v.why, c.want) ||
			v.relayOrMachine != strings.Contains(c.want, "(relay or machine: ") ||
			c.reject != "" && strings.Contains(v.why, c.reject) {
			t.Errorf("%s: %+v\nwant client %v, machine %v, why with %q", c.name, v, c.client, c.machine, c.want)
		}
	}
}

// TestFindMaxOnBusyMachineIsALowerBound: a relay whose OKs take 200 ms
// fails every step of a 50 ms target. On a machine where other processes
// competed for the cores (the load average, given through the seam, with
// the relay's CPU known), its slow replies cannot be told from a relay
// waiting for a CPU: the search ends as a lower bound that names the busy
// machine, never "no rate passed" as the relay's answer; the verdict is
// the relay's or the machine's (incomplete, naming both) when the relay's
// replies kept the pool full or alone took longer than the target
// (200 ms: so whenever the client's own work was not in them), the
// client's (error) when it was late (a step load judged client-limited
// for the client's own work in its reply times, as a saturated CPU may
// give, is client-limited, its reason ending with the machine's load). Which of these load finds depends on the machine's
// timing: each is checked as found; TestFindMaxVerdictFollowsTheStepThatStoppedIt
// gives each one in turn. The same search on a quiet machine is never said
// to be the machine's.
func TestFindMaxOnBusyMachineIsALowerBound(t *testing.T) {
	defer func() { machineOthersBusy = sysinfo.OthersBusy }()
	relayCPU := func() func() *results.Resources {
		return func() *results.Resources { return &results.Resources{RelayCPUSecs: 0.05, RelayPeakRSS: 1 << 20} }
	}
	for _, busy := range []bool{true, false} {
		machineOthersBusy = func(float64) string {
			if busy {
				return machineLoad
			}
			return ""
		}
		r := testrelay.Start(t, testrelay.Config{OKDelay: 200 * time.Millisecond})
		var progress bytes.Buffer
		ph, res, err := FindMax(testCtx(t), r.URL(), smallCorpus(t), FindMaxOptions{
			Load:      LoadOptions{Base: Base{Begin: relayCPU}, Pool: 64, Connections: 2, Size: 100, MaxLateness: 5 * time.Second},
			StartRate: 20, StepDuration: time.Second, P99: 50 * time.Millisecond, MaxSteps: 3, Progress: &progress,
		})
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(ph.Notes, "\n")
		if len(res.Steps) == 0 || res.Steps[0].Pass {
			t.Fatalf("busy %v: a 200 ms relay passed a 50 ms target: %+v\n%s", busy, res.Steps, notes)
		}
		st := res.Steps[0]
		if !busy {
			if all := res.Answer + notes + progress.String(); res.MachineBusy != "" || strings.Contains(all, "machine busy") || strings.Contains(all, "relay or machine") {
				t.Errorf("a quiet machine blamed: %q\n%s\n%s", res.Answer, progress.String(), notes)
			}
			continue
		}
		w, inc, _ := judge.Phase(&ph)
		short := judge.ClientShort(&ph)
		if st.RelayOrMachine {
			// The relay's replies kept the step's pool full: the relay or
			// the machine, never the relay alone nor the client.
			want := "the search stopped at 20/s, a step the relay or the busy machine limited (load average 7.5 on 2 cores): no rate passed (capacity unknown)"
			if len(w) > 0 || len(inc) != 1 || inc[0] != want || short != "" {
				t.Errorf("relay or machine: wrong %v, incomplete %q, client short %q\nwant incomplete %q", w, inc, short, want)
			}
		} else if len(w)+len(inc) > 0 || short == "" {
			t.Errorf("the client's or the machine's step: wrong %v, incomplete %v, client short %q: want the client's only", w, inc, short)
		}
		if st.Phase.ClientLimited && clientReadLate(strings.Join(st.Phase.Notes, "\n")) {
			// The client's own work limited the step, its reply times
			// too: client-limited, the machine's load in its reason.
			if !st.ClientLimited || st.Machine != "" || !strings.Contains(st.Why, machineLoad) || res.Answer != "no rate passed (client-limited: see the notes)" {
				t.Errorf("client-limited step on a busy machine: answer %q, step %+v", res.Answer, st.Why)
			}
			t.Logf("the client limited the step on this machine: %s", st.Why)
			continue
		}
		if !st.ClientLimited || st.Machine != machineLoad || res.MachineBusy != machineLoad || !res.ClientLimited || !ph.ClientLimited ||
			res.Answer != "no rate passed (machine busy: other processes competed for its cores: see the notes)" {
			t.Fatalf("busy machine: answer %q, step %+v\n%s", res.Answer, st.Why, notes)
		}
		for _, want := range []string{"| fail: p99 ", machineLoad + ") |", "machine busy: the answer is a lower bound on the relay's capacity, not a relay figure; at 20/s the client used ",
			"a quieter machine, or the relay and relaybench on cores of their own"} {
			if !strings.Contains(notes, want) {
				t.Errorf("notes lack %q:\n%s", want, notes)
			}
		}
		if !strings.Contains(progress.String(), "find-max: 20/s → FAIL (machine busy: other processes competed for its cores): p99 ") {
			t.Errorf("progress:\n%s", progress.String())
		}
		if g := ph.Groups[0]; g.Counts["machine_busy"] != 1 || g.Counts["client_limited"] != 1 {
			t.Errorf("step group counts %v", g.Counts)
		}
	}
}
