package runner

import (
	"testing"

	"github.com/relaybench/relaybench/internal/sysinfo"
)

// A load phase carries its own judgement (workload.judgeLoad: lateness,
// slots, both sides' CPU, the machine's load); run adds no second one. A
// load under run on a busy machine read its note ending "the machine's
// 1-minute load average was …" and, in a row, "neither side saturated its
// CPU (…); the machine's 1-minute load average was …" again.
func TestJudgeClientLeavesLoadItsJudgement(t *testing.T) {
	defer func() { machineOthersBusy = sysinfo.OthersBusy }()
	machineOthersBusy = func(float64) string {
		return "the machine's 1-minute load average was 5.5 on 2 cores: other processes competed for its cores, and their waits count in these figures"
	}
	for _, relay := range []float64{0.04, 1.36} {
		ph := phase(60, 0.03, relay)
		ph.Workload = "load"
		ph.Notes = []string{"the client kept up (CPU: client 0.03 of 2 cores)"}
		judgeClient(ph, 2)
		if len(ph.Notes) != 1 || ph.ClientLimited {
			t.Errorf("relay %.2f cores: client-limited %v, notes %q", relay, ph.ClientLimited, ph.Notes)
		}
	}
}
