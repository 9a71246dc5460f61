package main

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/workload"
)

// TestDiedDropsBookedToTheRelay: in a phase during which the limited relay
// died, the ops not started because every slot was waiting on it are not
// the client's limit: booked to the relay's death, the outcomes say so and
// the verdict counts them as work the relay prevented (exit 4), where
// "client-limited: pool full" let them pass.
func TestDiedDropsBookedToTheRelay(t *testing.T) {
	a := results.Account{Op: results.OpEvent, Requested: 10, Accepted: 4, NotRun: 6,
		NotRunBy: map[string]int64{workload.WhyClientDrop: 6}}
	ph := results.Phase{Name: "load", Accounts: []results.Account{a}}
	if _, inc, _ := judge.Phase(&ph); len(inc) != 0 {
		t.Fatalf("before: client drops judged %q (the test's premise changed)", inc)
	}
	diedDrops(&ph)
	got := ph.Accounts[0]
	if got.NotRunBy[whyDiedDrop] != 6 || got.NotRunBy[workload.WhyClientDrop] != 0 || !got.Balanced() {
		t.Fatalf("account after: %+v", got)
	}
	if s := outcome.Split(got); strings.Contains(s, "client-limited") || !strings.Contains(s, "6 not run (relay died") {
		t.Errorf("outcomes %q: want the not run booked to the relay's death", s)
	}
	if _, inc, _ := judge.Phase(&ph); len(inc) != 1 || !strings.Contains(inc[0], "relay died") {
		t.Errorf("judged %q: want the not run as work the relay prevented", inc)
	}
}
