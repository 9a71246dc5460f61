package main

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/workload"
)

// TestLoadDropsNeverPass: a relay that takes 20 ms per event with one
// worker (50 events/s) offered 200/s through a pool of 2 with
// --load-max-lateness 20ms cannot start most slots in time. The run never
// says all requested work ran: the slots are booked by the load's own
// judgement, and the exit status, the outcomes line, the note and the
// verdict agree. The relay's slowness filled the pool (relay-limited: exit
// 4); on a machine so loaded that the client was judged the limit, exit 1
// with client-limited everywhere instead.
func TestLoadDropsNeverPass(t *testing.T) {
	t.Parallel() // beside the package's other parallel tests: either judgement (relay- or client-limited) is checked, as a loaded machine may give
	r := testrelay.Start(t, testrelay.Config{ProcessingTime: 20 * time.Millisecond, Workers: 1})
	res, f, _ := runRecorded(t, relaybenchBin(t), "load", "--relay", r.URL(), "--load-base", "200", "--load-duration", "2s",
		"--load-pool", "2", "--load-max-lateness", "20ms", "--size", "100", "--cache-dir", t.TempDir())
	ph := f.Runs[0].Phase("load")
	if ph == nil || ph.Account(results.OpEvent) == nil {
		t.Fatalf("exit %d, no load phase: %s", res.code, lastLines(res.stderr, 5))
	}
	a := *ph.Account(results.OpEvent)
	notes := strings.Join(ph.Notes, "\n")
	if workload.Drops(a) == 0 || ph.Counts["dropped"] != workload.Drops(a) {
		t.Fatalf("no drops at 4 × the relay's capacity: %+v, counts %v", a, ph.Counts)
	}
	why, status, note, not, reason := workload.WhyRelayDrop, judge.Incomplete, "relay-limited: ", "client-limited: ", "load: 400 events: "
	if a.NotRunBy[workload.WhyClientDrop] > 0 {
		why, status, note, not, reason = workload.WhyClientDrop, judge.Error, "client-limited: ", "relay-limited: ", "relaybench could not run the requested work: load: "
		t.Logf("judged client-limited on this machine:\n%s", notes)
	}
	if a.NotRunBy[why] != a.NotRun || res.code != status || f.Verdict == nil || f.Verdict.Status != status {
		t.Fatalf("booked %v, exit %d, want %d for %q\n%s", a.NotRunBy, res.code, status, why, lastLines(res.stderr, 5))
	}
	if !strings.Contains(notes, note) || strings.Contains(notes, not) {
		t.Errorf("booked %q, notes:\n%s", why, notes)
	}
	if !strings.Contains(res.stdout, "Outcomes: 400 events: ") || !strings.Contains(res.stdout, "not run ("+why) {
		t.Errorf("the outcomes line does not name %q:\n%s", why, res.stdout)
	}
	if !strings.Contains(strings.Join(f.Verdict.Reasons, "\n"), reason) || strings.Contains(res.stdout, "PASSED") ||
		strings.Contains(res.stdout, "all requested work ran") {
		t.Errorf("verdict %+v, summary:\n%s", f.Verdict, res.stdout)
	}
}
