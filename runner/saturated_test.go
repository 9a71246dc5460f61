package runner

import (
	"runtime"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/internal/sysinfo"
)

// A phase judged relay-limited on a saturated machine ends its note with
// the machine's load, as every other judgement does: the load average
// alone on a machine with no sign of other processes, OthersBusy's clause
// where they competed.
func TestMachineSaturatedQuotesLoad(t *testing.T) {
	const la = "the machine's 1-minute load average was 2.1 on 2 cores"
	const busy = "the machine's 1-minute load average was 9.0 on 2 cores: other processes competed for its cores, and their waits count in these figures"
	defer func() { machineOthersBusy, machineLoadClause = sysinfo.OthersBusy, sysinfo.LoadClause }()
	machineLoadClause = func() string { return la }
	n := float64(runtime.NumCPU())
	for _, loaded := range []bool{false, true} {
		machineOthersBusy = func(float64) string {
			if loaded {
				return busy
			}
			return ""
		}
		ph := phase(10, 0.3*n, 0.65*n)
		judgeClient(ph, 0)
		want := la
		if loaded {
			want = busy
		}
		if len(ph.Notes) != 1 || !strings.HasPrefix(ph.Notes[0], "relay-limited, machine saturated: ") || !strings.HasSuffix(ph.Notes[0], "than it would alone; "+want) {
			t.Errorf("loaded %v: notes %q, want the saturated note ending with %q", loaded, ph.Notes, want)
		}
	}
}
