package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/sysinfo"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
)

// TestOthersCompeting: other processes competed for the cores over a part
// when the load average says so (load's rule: sysinfo.OthersBusy's
// clause) or when they kept at least a core busy with the two sides
// making nine tenths of the cores; the evidence quotes the load average
// and the others' cores when known. A quiet machine, or one whose other
// processes left cores free, is not busy.
func TestOthersCompeting(t *testing.T) {
	const byLoad = "the machine's 1-minute load average was 18.1 on 2 cores: " + sysinfo.OthersCompeted + ", and their waits count in these figures"
	const la = "the machine's 1-minute load average was 1.2 on 2 cores"
	for _, c := range []struct {
		name                 string
		byLoad               string
		sides, others, cores float64
		want                 string
	}{
		{"the load average and the others' cores", byLoad, 0.21, 1.90, 2, "the machine's 1-minute load average was 18.1 on 2 cores, other processes kept 1.90 cores busy over the part"},
		{"the load average, the others' cores unknown", byLoad, 0.21, -1, 2, "the machine's 1-minute load average was 18.1 on 2 cores"},
		{"the others' cores while the load average lagged", "", 0.21, 1.90, 2, la + ", other processes kept 1.90 cores busy over the part"},
		{"a quiet machine", "", 0.21, 0.05, 2, ""},
		{"others under a core", "", 1.2, 0.8, 2, ""},
		{"a core of others, cores to spare", "", 0.5, 1.2, 16, ""},
		{"nothing known", "", 0.21, -1, 2, ""},
	} {
		got := othersCompeting(c.byLoad, la, c.sides, c.others, c.cores).over("the part")
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// unsentPart is a publishing part that left relay and client events
// unsent of the 10,000 it scheduled at 1,000/s.
func unsentPart(relay, client int64) *mixedPart {
	why := mixedBehindWhy(1000)
	a := results.Account{Op: results.OpEvent, Requested: 10000, Accepted: 10000 - relay - client, NotRun: relay + client, NotRunBy: map[string]int64{}}
	if relay > 0 {
		a.NotRunBy[why(true)] = relay
	}
	if client > 0 {
		a.NotRunBy[why(false)] = client
	}
	ph := results.NewPhase("", "")
	ph.Accounts = []results.Account{a}
	return &mixedPart{mixedSpec: mixedSpec{name: "publish/alone", pub: true}, ran: true, pub: &ph}
}

// TestMixedUnsentMachineLimited: events a part left unsent because its
// publishers' window was full of EVENTs awaiting OKs are relay-limited on
// a quiet machine and relay- or machine-limited, quoting the load average
// and the others' cores, when other processes competed for the cores, in
// the not-run reason (the verdict's) and in the part's note; still
// incomplete (exit 4) either way. Events the client sent late stay
// client-limited. The reason reads plainly: "not sent within 1s after
// the part's --duration ended (--publish-rate 1,000/s)".
func TestMixedUnsentMachineLimited(t *testing.T) {
	const busy = "the machine's 1-minute load average was 18.1 on 2 cores, other processes kept 1.90 cores busy over the part"
	const head = "not sent within 1s after the part's --duration ended (--publish-rate 1,000/s): "
	for _, c := range []struct {
		name           string
		relay, client  int64
		busy           string
		reason, note   string
		status         int
		quotesTheLoad  bool
		keepsClientWhy bool
	}{
		{"quiet machine", 1920, 0, "", "relay-limited: " + head + mixedUnsentRelay,
			"relay-limited: 1,920 of the 10,000 events scheduled in the part were still unsent 1s after its --duration ended (not run): " + mixedUnsentRelay, judge.Incomplete, false, false},
		{"busy machine", 1920, 0, busy, RelayOrMachine + " " + head + mixedUnsentRelay + ", while other processes competed for the machine's cores (" + busy + "; the relay may have waited for a CPU, not been slow)",
			"relay- or machine-limited: 1,920 of the 10,000 events scheduled in the part were still unsent 1s after its --duration ended (not run): " + mixedUnsentRelay + ", " + relayMayHaveWaited + "; " + busy + ": " + sysinfo.OthersCompeted, judge.Incomplete, true, false},
		{"busy machine, some the client's", 1500, 420, busy, RelayOrMachine + " " + head,
			"1,920 of the 10,000 events scheduled in the part were still unsent 1s after its --duration ended (not run): 1,500 relay- or machine-limited: " + mixedUnsentRelay + ", " + relayMayHaveWaited + "; 420 client-limited: " + mixedUnsentClient + "; " + busy, judge.Incomplete, true, true},
		{"the client's on a busy machine", 0, 420, busy, "client-limited: " + head + mixedUnsentClient,
			"client-limited: 420 of the 10,000 events scheduled in the part were still unsent 1s after its --duration ended (not run): " + mixedUnsentClient + "; " + busy, judge.Error, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := unsentPart(c.relay, c.client)
			p.judgeUnsent(10000, c.busy)
			a := p.pub.Accounts[0]
			var reason string
			var unsentN int64
			for why, n := range a.NotRunBy {
				if (c.relay > 0) != strings.HasPrefix(why, "client-limited") {
					reason = why
				}
				if isMixedUnsent(why) {
					unsentN += n
				}
			}
			if !a.Balanced() || unsentN != c.relay+c.client || !strings.HasPrefix(reason, c.reason) {
				t.Fatalf("not run by %v, want %d unsent, the reason %q", a.NotRunBy, c.relay+c.client, c.reason)
			}
			if c.keepsClientWhy && a.NotRunBy[mixedBehindWhy(1000)(false)] != c.client {
				t.Errorf("not run by %v: the client's %d not kept", a.NotRunBy, c.client)
			}
			if len(p.pub.Notes) != 1 || !strings.HasPrefix(p.pub.Notes[0], c.note) {
				t.Fatalf("notes %q, want one beginning %q", p.pub.Notes, c.note)
			}
			if got := strings.Contains(p.pub.Notes[0], "load average") || strings.Contains(reason, "load average"); got != c.quotesTheLoad {
				t.Errorf("note %q, reason %q: quote the machine's load %v, want %v", p.pub.Notes[0], reason, got, c.quotesTheLoad)
			}
			ph := *p.pub
			ph.Name, ph.Workload = "mixed", "mixed"
			if v := phaseVerdict(ph, false); v.Status != c.status || (c.relay > 0 && !reasonsMention(v, strings.TrimSuffix(c.reason, ": "))) {
				t.Errorf("verdict %+v, want status %d naming %q", v, c.status, c.reason)
			}
		})
	}
}

// TestMixedPartBusyNeedsTheRelaysCPU: a part's machine is judged from its
// own figures (constructed here, through the seams a test sets): the two
// sides' cores over the part given to the load average's rule, busy by it
// (the others' cores: TestOthersCompeting); never when the relay's CPU is
// unknown (relaybench did not start it: it may be the other process).
func TestMixedPartBusyNeedsTheRelaysCPU(t *testing.T) {
	defer func() { machineOthersBusy, machineLoadClause = sysinfo.OthersBusy, sysinfo.LoadClause }()
	var sides float64
	machineOthersBusy = func(s float64) string { sides = s; return "" } // the load average shows no contention
	machineLoadClause = func() string { return "the machine's 1-minute load average was 1.2 on 2 cores" }
	p := &mixedPart{start: 0, end: int64(10 * time.Second), cpu: time.Second, relay: &results.Resources{RelayCPUSecs: 1}, others: 0.1}
	if got := p.partBusy().over("the part"); got != "" || sides < 0.2-1e-9 || sides > 0.2+1e-9 {
		t.Errorf("a quiet part: %q (sides %.2f), want \"\" (sides 0.20)", got, sides)
	}
	machineOthersBusy = func(float64) string {
		return "the machine's 1-minute load average was 18.1 on 2 cores: " + sysinfo.OthersCompeted
	}
	p.others = -1
	if got := p.partBusy().over("the part"); got != "the machine's 1-minute load average was 18.1 on 2 cores" {
		t.Errorf("by the load average: %q", got)
	}
	p.relay = nil
	if got := p.partBusy().over("the part"); got != "" {
		t.Errorf("the relay's CPU unknown: %q, want \"\"", got)
	}
}

// TestMixedUnsentOneReason: both publishing parts' events left unsent on
// a busy machine are one reason in the phase's account (the verdict's),
// each part's figures in it, not two reasons of 400 characters that
// differ in their figures; the relay's on a quiet machine and the
// client's keep theirs.
func TestMixedUnsentOneReason(t *testing.T) {
	alone, tog := unsentPart(1500, 0), unsentPart(1800, 20)
	tog.name = "together" // the part's name; its publishing group is publish/together
	alone.busy = &machineEvidence{load: "the machine's 1-minute load average was 1.8 on 2 cores", others: 1.33}
	tog.busy = &machineEvidence{load: "the machine's 1-minute load average was 1.9 on 2 cores", others: 1.36}
	var a results.Account
	for _, p := range []*mixedPart{alone, tog} {
		p.judgeUnsent(10000, p.busy.over("the part"))
		addToAccount(&a, p.pub.Account(results.OpEvent))
	}
	coalesceUnsent(&a, []*mixedPart{alone, tog}, 1000)
	want := machineLimitedWhy(mixedBehindWhy(1000)(true), "the machine's 1-minute load average was 1.8 on 2 cores, other processes kept 1.33 cores busy over publish/alone; the machine's 1-minute load average was 1.9 on 2 cores, other processes kept 1.36 cores busy over publish/together")
	if a.NotRunBy[want] != 3300 || a.NotRunBy[mixedBehindWhy(1000)(false)] != 20 || len(a.NotRunBy) != 2 || !a.Balanced() {
		t.Errorf("not run by %v, want 3,300 %q and the client's 20", a.NotRunBy, want)
	}
	q := unsentPart(1500, 0)
	q.judgeUnsent(10000, "")
	b := *q.pub.Account(results.OpEvent)
	coalesceUnsent(&b, []*mixedPart{q}, 1000)
	if b.NotRunBy[mixedBehindWhy(1000)(true)] != 1500 || len(b.NotRunBy) != 1 {
		t.Errorf("a quiet machine: not run by %v", b.NotRunBy)
	}
}
