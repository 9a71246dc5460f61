package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/results"
)

// TestLoadUnderRunNamesTheCommandsFlags: run and compare --workloads load
// have none of load's flags, so what the workload says names them as the
// load command's ("both in-flight slots (the load command's --load-pool)",
// "not started within the load command's --load-max-lateness"): the
// notes and the reasons operations did not run, which the verdict quotes.
// A relay whose OKs take 50 ms fills a pool of 2 at 400/s, and ops not
// started within 10 ms are dropped: the notes and reasons name both flags.
func TestLoadUnderRunNamesTheCommandsFlags(t *testing.T) {
	r, c := testrelay.Start(t, testrelay.Config{OKDelay: 50 * time.Millisecond}), smallCorpus(t)
	s := LoadSpec{Base: Base{Timeout: 5 * time.Second}, LoadTuning: LoadTuning{Pool: 2, Connections: 1, MaxLateness: 10 * time.Millisecond},
		Pattern: "constant", Duration: time.Second, BaseRate: 400, Peak: 400, Kind: LoadPublish, Mix: "4:1", PatternSeed: 1, Size: 100}
	phs, err := s.Run(testCtx(t), Env{URL: r.URL(), Corpus: c})
	if err != nil || len(phs) != 1 {
		t.Fatalf("%d phases, %v", len(phs), err)
	}
	said := append([]string(nil), phs[0].Notes...)
	for _, a := range phs[0].Accounts {
		for why := range a.NotRunBy {
			said = append(said, why)
		}
	}
	all := strings.Join(said, "\n")
	for _, l := range said {
		if strings.Contains(l, "--load-") && strings.Contains(strings.ReplaceAll(l, "the load command's --load-", ""), "--load-") {
			t.Errorf("a flag of load not named as the load command's: %q", l)
		}
	}
	if !strings.Contains(all, "the load command's --load-pool") || !strings.Contains(all, "the load command's --load-max-lateness") {
		t.Errorf("nothing names load's flags (the test shows nothing):\n%s", all)
	}
}

// loadCommandsFlag names each bare flag once, never twice.
func TestLoadCommandsFlag(t *testing.T) {
	for in, want := range map[string]string{
		"all 2 slots (--load-pool) busy; within --load-max-lateness": "all 2 slots (the load command's --load-pool) busy; within the load command's --load-max-lateness",
		"the load command's --load-pool":                             "the load command's --load-pool",
		"no flag":                                                    "no flag",
	} {
		if got := loadCommandsFlag(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

// LoadCommandsFlags names load's flags as the load command's in every
// text of a phase that may name one, but those the command running the
// load has itself (conformance's --load-duration), left bare.
func TestLoadCommandsFlagsKeepsTheCommandsOwn(t *testing.T) {
	ph := results.Phase{Notes: []string{"slots (--load-pool) busy; raise --load-duration"}, Aborted: "over --load-max-events",
		Accounts: []results.Account{{NotRunBy: map[string]int64{"not started within --load-max-lateness": 2}}}}
	LoadCommandsFlags(&ph, map[string]string{"--load-duration": "--load-duration"})
	if ph.Notes[0] != "slots (the load command's --load-pool) busy; raise --load-duration" || ph.Aborted != "over the load command's --load-max-events" ||
		ph.Accounts[0].NotRunBy["not started within the load command's --load-max-lateness"] != 2 {
		t.Errorf("%q, %q, %v", ph.Notes, ph.Aborted, ph.Accounts[0].NotRunBy)
	}
	// A flag the command fixes is said in its words; one named already
	// stays as it was; a flag is never matched as part of a longer one.
	ph = results.Phase{Notes: []string{"all 2 slots (--load-pool) busy; every op started within --load-max-lateness (1s); --load-pool-x; the load command's --load-mix"}}
	LoadCommandsFlags(&ph, map[string]string{"--load-pool": "conformance's fixed pool", "--load-max-lateness": "conformance's fixed lateness limit", "--load-pool-x": "X"})
	if want := "all 2 slots (conformance's fixed pool) busy; every op started within conformance's fixed lateness limit (1s); X; the load command's --load-mix"; ph.Notes[0] != want {
		t.Errorf("got  %q\nwant %q", ph.Notes[0], want)
	}
}
