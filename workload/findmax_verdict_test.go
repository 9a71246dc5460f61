package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
)

// TestFindMaxVerdictFollowsTheStepThatStoppedIt: a search runs against the
// in-memory relay with each step's judgement given through the seam
// (stepJudge), none left to the machine's timing: 20/s passes, 40/s fails
// as the case says. A search stopped at a step the client limited did not
// find the relay's figure and the relay did not prevent it: error (exit
// 1), its reason naming the step and the lower bound, as load's
// client-limited drops are; late from outside the client's own work on a
// busy machine likewise, naming the machine's load. A step the relay's
// replies kept full on a busy machine is the relay's or the machine's:
// incomplete (exit 4), as load's relay- or machine-limited drops are. A
// step the relay failed on a quiet machine is the search's answer: passed.
func TestFindMaxVerdictFollowsTheStepThatStoppedIt(t *testing.T) {
	defer func() { stepJudge = judgeSteps }()
	client := stepVerdict{why: "p99 600ms > 50ms (the client's CPU was saturated)", client: true}
	late := stepVerdict{why: "p99 600ms > 50ms (late from outside: " + machineLoad + ")", client: true, machine: machineLoad}
	relayOrMachine := stepVerdict{why: "p99 600ms > 50ms (relay or machine: " + machineLoad + ")", client: true, machine: machineLoad, relayOrMachine: true}
	relay := stepVerdict{why: "p99 600ms > 50ms"}
	r := testrelay.Start(t, testrelay.Config{})
	for _, c := range []struct {
		name   string
		fail   stepVerdict
		answer string
		status int
		reason string
	}{
		{"client-limited", client, "≥ 20 events/s (client-limited)", judge.Error,
			"relaybench could not run the requested work: find-max: the search stopped at 40/s, a step the client limited: the answer ≥ 20 events/s is a lower bound"},
		{"late from outside on a busy machine", late, "≥ 20 events/s (" + machineBusyWords + ")", judge.Error,
			"relaybench could not run the requested work: find-max: the search stopped at 40/s, a step the busy machine limited (load average 7.5 on 2 cores): the answer ≥ 20 events/s is a lower bound"},
		{"relay or machine", relayOrMachine, "≥ 20 events/s (" + machineBusyWords + ")", judge.Incomplete,
			"find-max: the search stopped at 40/s, a step the relay or the busy machine limited (load average 7.5 on 2 cores): the answer ≥ 20 events/s is a lower bound"},
		{"the relay's failure on a quiet machine", relay, "between 20 and 40 events/s (--max-steps ended the search before it reached --precision 5%)", judge.Passed, ""},
	} {
		stepJudge = func(ph results.Phase, _ FindMaxOptions) stepVerdict {
			if strings.HasSuffix(ph.Name, "/20") {
				return stepVerdict{pass: true}
			}
			return c.fail
		}
		ph, res, err := FindMax(testCtx(t), r.URL(), smallCorpus(t), FindMaxOptions{
			Load:      LoadOptions{Pool: 8, Connections: 1, Size: 100, MaxLateness: 5 * time.Second},
			StartRate: 20, StepDuration: 500 * time.Millisecond, MaxSteps: 2,
		})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.Answer != c.answer || len(res.Steps) != 2 {
			t.Errorf("%s: answer %q after %d steps, want %q", c.name, res.Answer, len(res.Steps), c.answer)
		}
		f := &results.File{Runs: []results.Run{{Relay: results.Relay{URL: r.URL()}, Phases: []results.Phase{ph}}}}
		v := judge.Judge(f, false)
		if v.Status != c.status || c.reason != "" && (len(v.Reasons) != 1 || v.Reasons[0] != c.reason) {
			t.Errorf("%s: verdict %d %q\nwant %d %q", c.name, v.Status, v.Reasons, c.status, c.reason)
		}
	}
}
