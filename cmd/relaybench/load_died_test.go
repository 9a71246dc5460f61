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
// died, the ops not started because every slot was waiting on it are
// booked to the relay's death, however the load judged them (relay- or
// client-limited): the outcomes say so and the verdict counts them as work
// the relay prevented (exit 4), where client-limited would make it
// relaybench's error (exit 1).
func TestDiedDropsBookedToTheRelay(t *testing.T) {
	a := results.Account{Op: results.OpEvent, Requested: 10, Accepted: 4, NotRun: 6,
		NotRunBy: map[string]int64{workload.WhyClientDrop: 4, workload.WhyRelayDrop: 2}}
	ph := results.Phase{Name: "load", Accounts: []results.Account{a}}
	if judge.ClientShort(&ph) == "" {
		t.Fatal("before: client drops not judged the client's (the test's premise changed)")
	}
	diedDrops(&ph)
	got := ph.Accounts[0]
	if got.NotRunBy[whyDiedDrop] != 6 || len(got.NotRunBy) != 1 || !got.Balanced() || judge.ClientShort(&ph) != "" {
		t.Fatalf("account after: %+v", got)
	}
	if s := outcome.Split(got); strings.Contains(s, "client-limited") || !strings.Contains(s, "6 not run (relay died") {
		t.Errorf("outcomes %q: want the not run booked to the relay's death", s)
	}
	if _, inc, _ := judge.Phase(&ph); len(inc) != 1 || !strings.Contains(inc[0], "relay died") {
		t.Errorf("judged %q: want the not run as work the relay prevented", inc)
	}
}
