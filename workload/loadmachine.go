package workload

import (
	"fmt"
	"strings"
	"time"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/sysinfo"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/schedule"
)

// RelayOrMachine begins the judgement of a load whose pool the relay's
// replies kept full while other processes competed for the machine's cores
// (relayOrMachineNote, WhyMachineDrop): the relay may have been slow, or
// starved of CPU; the figures cannot tell which.
const RelayOrMachine = "relay- or machine-limited:"

// machineBusy is the machine's load over a load phase (sysinfo.OthersBusy,
// through the seam a test sets: machineOthersBusy), given the cores the
// client and the relay kept busy over its timed window: "" when no other
// process competed for the cores, or when the relay's CPU is unknown
// (relaybench did not start it: what it used cannot be told from other
// processes).
func machineBusy(ph results.Phase) string {
	r := ph.Resources
	if r == nil || ph.Duration <= 0 || (r.RelayCPUSecs <= 0 && r.RelayPeakRSS == 0) {
		return ""
	}
	return machineOthersBusy((r.ClientCPUSecs + r.RelayCPUSecs) / (float64(ph.Duration) / 1e9))
}

// relayOrMachineNote is the note of a load whose ops were late or dropped
// because every in-flight slot waited on the relay's replies while the
// client had CPU to spare, on a machine where other processes competed
// for the cores (busy: sysinfo.OthersBusy's clause): the relay's replies
// were slow, but it may have been waiting for a CPU, not slow of itself.
// Both are said, neither is claimed.
func relayOrMachineNote(pool int, cpuNote, busy string) string {
	return fmt.Sprintf("%s ops were late or dropped because %s (--load-pool) %s waiting for the relay's replies while the client had CPU to spare (%s), but on a busy machine the relay may have waited for a CPU rather than been slow, which these figures cannot tell apart (a quieter machine, or the relay on cores of its own, can); %s",
		RelayOrMachine, numfmt.AllOf(pool, "in-flight slot"), numfmt.Were(pool), cpuNote, busy)
}

// endWithMachineLoad ends a load's judgement (its last note) with the
// machine's load when other processes competed for its cores (busy:
// sysinfo.OthersBusy's clause): a client judged the limit while it used
// under half its cores (client of cores) was late from outside its own
// work (LateFromOutside): its goroutines waited for CPUs the other
// processes held, as the quiet-late note says of a client not kept from a
// CPU.
//
// Every judgement on a machine where the load average is no sign of
// other processes competing (busy "") still quotes it (sysinfo.LoadClause,
// OthersBusy's words without the judgement), "the client kept up (…)" as
// much as "late from outside": the reader sees how busy the machine was.
func endWithMachineLoad(ph *results.Phase, busy string, client, cores float64) {
	if len(ph.Notes) == 0 {
		return
	}
	n := &ph.Notes[len(ph.Notes)-1]
	if busy == "" {
		if la := machineLoadClause(); la != "" {
			*n += "; " + la
		}
		return
	}
	if ph.ClientLimited && client < cores/2 && !strings.Contains(*n, LateFromOutside) {
		*n += "; " + LateFromOutside
	}
	*n += "; " + busy
}

// machineLoadClause is sysinfo.LoadClause (a test sets the machine's load).
var machineLoadClause = sysinfo.LoadClause

// busyClause is the machine's load a load phase's judgement quoted
// (sysinfo.OthersBusy's clause, from the note that ends with it), "" when
// its machine was not busy with other processes.
func busyClause(ph results.Phase) string {
	const start = "the machine's 1-minute load average"
	for _, n := range ph.Notes {
		if strings.Contains(n, sysinfo.OthersCompeted) {
			if i := strings.LastIndex(n, start); i >= 0 {
				return n[i:]
			}
		}
	}
	return ""
}

// intendedRate is the rate a load's pattern intended: the ops intended
// over the pattern's own length, not over the phase's window, which runs
// on through the drain until the last reply (a constant 1,000/s for 10 s
// read 927.44/s over a 10.8 s window); over the time it ran when the
// phase stopped before the pattern's end.
func intendedRate(res *schedule.Result, p schedule.Pattern) float64 {
	span := p.Duration()
	if ran := time.Duration(res.End - res.Start); res.Interrupted && ran < span {
		span = ran
	}
	if span <= 0 {
		return 0
	}
	return float64(res.Intended) / span.Seconds()
}
