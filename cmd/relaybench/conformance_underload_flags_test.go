package main

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
)

// TestUnderLoadNamesTheLoadCommandsFlags: conformance --under-load has
// none of load's --load-pool, --load-max-lateness or --load-max-events,
// so what its background load says names them as the load command's
// ("not started within the load command's --load-max-lateness"), as run
// and compare --workloads load do; its own --load-duration and
// --load-timeout stay bare. A relay whose OKs take 100 ms keeps the
// default 10 in-flight slots full at 400/s: ops wait past the 1 s
// lateness limit and are dropped, whatever the machine's speed (a slower
// client only makes them later), so the reasons name the flags.
func TestUnderLoadNamesTheLoadCommandsFlags(t *testing.T) {
	t.Parallel()
	integration(t)
	r := testrelay.Start(t, testrelay.Config{OKDelay: 100 * time.Millisecond})
	res, f := runConformance(t, "--relay", r.URL(), "--check", "req.limit-zero", "--under-load", "400", "--load-duration", "2s")
	ph := f.Runs[0].Phase("under-load")
	if ph == nil {
		t.Fatalf("no under-load phase\n%s", lastLines(res.stdout+res.stderr, 30))
	}
	said := append(append(append([]string{ph.Aborted}, ph.Notes...), ph.Errors...), f.Runs[0].Notes...)
	for _, a := range ph.Accounts {
		for why := range a.NotRunBy {
			said = append(said, why)
		}
	}
	said = append(said, res.stdout, res.stderr)
	all := strings.Join(said, "\n")
	for _, l := range strings.Split(all, "\n") {
		rest := strings.ReplaceAll(l, "the load command's --load-", "")
		rest = strings.ReplaceAll(strings.ReplaceAll(rest, "--load-duration", ""), "--load-timeout", "")
		if strings.Contains(rest, "--load-") {
			t.Errorf("a flag conformance does not have, named bare: %q", l)
		}
		if strings.Contains(l, "the load command's --load-duration") || strings.Contains(l, "the load command's --load-timeout") {
			t.Errorf("a flag of conformance's own named as the load command's: %q", l)
		}
	}
	if !strings.Contains(all, "the load command's --load-max-lateness") {
		t.Errorf("nothing names load's flags (the test shows nothing):\n%s", all)
	}
}
