package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/sysinfo"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
)

// TestSubscribeBehindMachineLimited: events subscribe --rate left unsent
// because the publisher's window was full of EVENTs awaiting OKs are
// relay-limited on a quiet machine; when the load average shows other
// processes competing for the cores (load's rule, constructed here through
// the seam) and relaybench knows the relay's CPU, they are relay- or
// machine-limited in the note and in the not-run reason, which quotes the
// load average (still incomplete, exit 4). With the relay's CPU unknown
// (it may be the other process) the judgement stays the relay's and the
// note only ends with the machine's load, as before. Events the client
// held back stay client-limited.
func TestSubscribeBehindMachineLimited(t *testing.T) {
	const busy = "the machine's 1-minute load average was 7.0 on 2 cores: " + sysinfo.OthersCompeted + ", and their waits count in these figures"
	defer func() { machineOthersBusy = sysinfo.OthersBusy }()
	ms := int64(time.Millisecond)
	relayLag := senderLag{behind: 5, lag: 800 * ms, fullWait: 700 * ms, inFlight: 1024}
	clientLag := senderLag{behind: 19, lag: 1200 * ms, inFlight: 87}
	o := SubscribeOptions{Window: 1024, Duration: 30 * time.Second}
	relayWhy := o.behindWhy(true)
	for _, c := range []struct {
		name       string
		loaded     bool
		relayCPU   float64
		lags       []senderLag
		note       string // the note's beginning
		reason     string // the relay's events' not-run reason ("": none)
		status     int
		quotesLoad bool
	}{
		{"quiet machine", false, 0.4, []senderLag{relayLag}, "relay-limited: publishing fell behind", relayWhy, judge.Incomplete, false},
		{"busy machine", true, 0.4, []senderLag{relayLag}, "relay- or machine-limited: publishing fell behind",
			machineLimitedWhy(relayWhy, "the machine's 1-minute load average was 7.0 on 2 cores"), judge.Incomplete, true},
		{"busy machine, some the client's", true, 0.4, []senderLag{relayLag, clientLag},
			"publishing fell behind the --rate schedule: 24 events due before --sub-duration 30s ended were still unsent then (not run): 5 relay- or machine-limited: ",
			machineLimitedWhy(relayWhy, "the machine's 1-minute load average was 7.0 on 2 cores"), judge.Incomplete, true},
		{"busy machine, the relay's CPU unknown", true, 0, []senderLag{relayLag}, "relay-limited: publishing fell behind", relayWhy, judge.Incomplete, true},
		{"the client's on a busy machine", true, 0.4, []senderLag{clientLag}, "client-limited: publishing fell behind", "", judge.Error, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			machineOthersBusy = func(float64) string {
				if c.loaded {
					return busy
				}
				return ""
			}
			r := &subRun{o: o, out: &liveOut{lags: c.lags}}
			a := results.Account{Op: results.OpEvent, Requested: 1000, NotRunBy: map[string]int64{}}
			for _, l := range c.lags {
				a.NotRunBy[o.behindWhy(l.relayLimited())] += l.behind
				a.NotRun += l.behind
			}
			a.Accepted = a.Requested - a.NotRun
			ph := results.Phase{Name: "subscribe", Workload: "subscribe", Duration: int64(30 * time.Second),
				Resources: &results.Resources{ClientCPUSecs: 3, RelayCPUSecs: c.relayCPU * 30}, Accounts: []results.Account{a}}
			r.behind = r.behindNote(&ph)
			ph.Notes = []string{r.behind}
			r.behindOthersBusy(&ph)
			if !strings.HasPrefix(ph.Notes[0], c.note) {
				t.Errorf("note\n%s\nwant it to begin\n%s", ph.Notes[0], c.note)
			}
			if got := strings.Contains(ph.Notes[0], "load average was 7.0"); got != c.quotesLoad {
				t.Errorf("note %q quotes the load %v, want %v", ph.Notes[0], got, c.quotesLoad)
			}
			if c.loaded && !strings.HasSuffix(ph.Notes[0], "; "+busy) {
				t.Errorf("note %q: want it to end with the machine's load", ph.Notes[0])
			}
			got := ph.Accounts[0]
			if c.reason != "" && got.NotRunBy[c.reason] != relayLag.behind || !got.Balanced() {
				t.Errorf("not run by %v, want %d %q", got.NotRunBy, relayLag.behind, c.reason)
			}
			if v := phaseVerdict(ph, false); v.Status != c.status || (c.reason != "" && !reasonsMention(v, c.reason)) {
				t.Errorf("verdict %+v, want status %d naming %q", v, c.status, c.reason)
			}
		})
	}
}
