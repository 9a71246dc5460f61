package main

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/schedule"
)

// TestUnderLoadNamesTheLoadCommandsFlags: conformance --under-load has
// none of load's --load-pool, --load-max-lateness or --load-max-events,
// so what its background load says names no flag a conformance user
// cannot set: the pool and the lateness limit are conformance's fixed
// ones ("not started within conformance's fixed lateness limit"), said so
// in --under-load's help; its own --load-duration and --load-timeout stay
// bare. A relay whose OKs take 100 ms keeps the default 10 in-flight
// slots full at 400/s: ops wait past the 1 s lateness limit and are
// dropped, whatever the machine's speed (a slower client only makes them
// later), so the reasons name the limit.
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
		rest := strings.ReplaceAll(strings.ReplaceAll(l, "--load-duration", ""), "--load-timeout", "")
		if strings.Contains(rest, "--load-") {
			t.Errorf("a flag conformance does not have: %q", l)
		}
	}
	if !strings.Contains(all, "not started within conformance's fixed lateness limit") || !strings.Contains(all, "(conformance's fixed pool)") {
		t.Errorf("the fixed pool and lateness limit are not named (the test shows nothing):\n%s", all)
	}
}

// --under-load's help says the pool and the lateness limit its notes call
// fixed, as the load's defaults are.
func TestUnderLoadHelpSaysWhatIsFixed(t *testing.T) {
	f, _ := reflect.TypeFor[conformanceCmd]().FieldByName("UnderLoad")
	want := fmt.Sprintf("its pool (%d in flight) and lateness limit (%v) are fixed", schedule.DefaultPool, schedule.DefaultMaxLateness)
	if help := f.Tag.Get("help"); !strings.Contains(help, want) {
		t.Errorf("--under-load help %q lacks %q", help, want)
	}
}
