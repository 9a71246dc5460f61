package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
)

// One idle subscription is "1 idle subscription", not "1 idle subscriptions".
func TestConnScaleNoteSingular(t *testing.T) {
	ph := &results.Phase{Counts: map[string]int64{}}
	connScale(ph, 1, 1<<20, 1<<20+9<<20, nil, "the subscribe command's --subscribers")
	if len(ph.Notes) != 1 || !strings.HasPrefix(ph.Notes[0], "client memory for 1 idle subscription (") {
		t.Errorf("memory note: %q", ph.Notes)
	}
}

// The memory per subscription is given only when the idle subscriptions
// hold enough that the resident memory's noise does not dominate it (10
// subscriptions of a few KiB each: not given, and the note says why), in
// binary units scaled to the figure with three significant digits (MiB,
// not 1524.0 KiB; 20.0 KiB, not 20.00 KiB).
func TestConnScaleMeasurable(t *testing.T) {
	ph := &results.Phase{Counts: map[string]int64{}}
	connScale(ph, 10, 1<<20, 1<<20+1524<<10, nil, "the subscribe command's --subscribers")
	if _, ok := ph.Counts["client_bytes_per_subscription"]; ok || ph.Counts["client_rss_idle_bytes"] != 1524<<10 {
		t.Errorf("10 subscriptions in 1.49 MiB: counts %v", ph.Counts)
	}
	if len(ph.Notes) != 1 || ph.Notes[0] != "client memory per subscription not measurable: 10 idle subscriptions held less than 8 MiB, the least that stands out from the noise of the process's resident memory (more subscriptions: the subscribe command's --subscribers)" {
		t.Errorf("not measurable: notes %q", ph.Notes)
	}
	ph = &results.Phase{Counts: map[string]int64{}}
	connScale(ph, 1000, 1<<20, 1<<20+20000<<10, nil, "the subscribe command's --subscribers")
	if ph.Counts["client_bytes_per_subscription"] != 20480 || len(ph.Notes) != 1 ||
		ph.Notes[0] != "client memory for 1,000 idle subscriptions (connection, reader, subscription state; measured before publishing): 19.5 MiB resident, 20.0 KiB each: about 52,400 connections per GiB" {
		t.Errorf("1,000 subscriptions in 19.53 MiB: counts %v notes %q", ph.Counts, ph.Notes)
	}
}

// A reading under the floor is noise however it came out: grown a little
// (sweep's 256 B size: "1 idle subscription held 16.00 KiB, under …"), not
// at all or shrunk (its other sizes: "did not grow while …"). One note in
// the same words for all, without the noisy figure (no report shows it as
// one); the results keep a reading that grew, never a negative size; the
// note names the flag of the command that ran (sweep's --subscribers, not
// subscribe's --subscribers).
func TestConnScaleNoiseOneWording(t *testing.T) {
	want := "client memory per subscription not measurable: 4 idle subscriptions held less than 8 MiB, the least that stands out from the noise of the process's resident memory (more subscriptions: the sweep command's --subscribers)"
	for _, grew := range []int64{16 << 10, 0, -148 << 10} {
		ph := &results.Phase{Counts: map[string]int64{}}
		connScale(ph, 4, 64<<20, 64<<20+grew, nil, "the sweep command's --subscribers")
		if wantCounts := max(0, grew); ph.Counts["client_rss_idle_bytes"] != wantCounts || len(ph.Counts) != min(1, int(wantCounts)) {
			t.Errorf("grew %d: counts %v, want the reading kept only when it grew", grew, ph.Counts)
		}
		if len(ph.Notes) != 1 || ph.Notes[0] != want {
			t.Errorf("grew %d: notes %q, want %q", grew, ph.Notes, want)
		}
	}
}

// A client-limited find-max step's verdict says "client-limited" once, not
// again in the note it quotes.
func TestFindMaxStepClientLimitedOnce(t *testing.T) {
	o := findMaxP99(100)
	ms := int64(time.Millisecond)
	ph := results.Phase{Duration: int64(time.Second), Counts: map[string]int64{"intended": 1000}, ClientLimited: true,
		Notes:    []string{"client-limited: the dispatcher handed ops out late"},
		Accounts: []results.Account{{Op: results.OpEvent, Requested: 1000, Accepted: 1000}},
		Latency:  map[string]*results.Histogram{"ok": p99Hist(90 * ms), "ok_uncorrected": p99Hist(5 * ms)}}
	pass, why, client := judgeStep(ph, o)
	if pass || !client {
		t.Fatalf("pass %v client %v (%s)", pass, client, why)
	}
	st := Step{Rate: 2000, Phase: ph, Why: why, ClientLimited: client}
	row := findMaxStepRow(st, results.Group{Counts: map[string]int64{}, Rates: map[string]float64{}}, false)
	if n := strings.Count(row, "client-limited"); n != 1 || !strings.Contains(row, "the dispatcher handed ops out late") {
		t.Errorf("step row says client-limited %d times: %s", n, row)
	}
}

// A note both of mixed's publishing parts have is given once: the same
// text once, figures that differ side by side.
func TestMixedPairPartNotes(t *testing.T) {
	got := pairPartNotes([]string{
		"publish/alone: events went out late: p99 18.8ms behind the schedule (client timer wake-ups); ok_from_intended counts from the scheduled time",
		"other",
		"publish/together: events went out late: p99 5.26ms behind the schedule (client timer wake-ups); ok_from_intended counts from the scheduled time",
		"publish/alone: closed loop", "publish/together: closed loop", "publish/together: only together"})
	want := []string{
		"publish: events went out late: p99 18.8ms alone, 5.26ms together behind the schedule (client timer wake-ups); ok_from_intended counts from the scheduled time",
		"other", "publish (alone and together): closed loop", "publish/together: only together"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
