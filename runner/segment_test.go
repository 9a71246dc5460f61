package runner

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/workload"
)

// TestRelayClockOffset: a relay whose clock is 3.4 s behind ours is found
// 3.4 s behind, within the error the estimate states. The bound holds by
// construction (the relay's second tick lies between the two fetches that
// saw it), whatever the machine's load.
func TestRelayClockOffset(t *testing.T) {
	const skew = -3400 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", time.Now().Add(skew).UTC().Format(http.TimeFormat))
		w.Header().Set("Content-Type", "application/nostr+json")
		w.Write([]byte(`{"name":"clock"}`))
	}))
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	off, e, ok := RelayClockOffset(context.Background(), url)
	if !ok {
		t.Fatal("offset not measured")
	}
	if d := off - (-skew); d > e || -d > e || e <= 0 || e > time.Second {
		t.Errorf("offset %v ± %v, want %v within the stated error", off, e, -skew)
	}

	noDate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil // net/http then sends none
		w.Write([]byte(`{}`))
	}))
	defer noDate.Close()
	if _, _, ok := RelayClockOffset(context.Background(), "ws"+strings.TrimPrefix(noDate.URL, "http")); ok {
		t.Error("offset claimed from a relay that sends no Date header")
	}
}

// TestStartGate: the first timed window waits for the start time and
// records how late it began; later windows do not wait again; a start
// already past is recorded as lateness, with a note.
func TestStartGate(t *testing.T) {
	seg := &results.Segment{}
	at := time.Now().Add(150 * time.Millisecond)
	g := newStartGate(context.Background(), at, "--start-at", &seg.StartLateNs)
	calls := 0
	begin := g.sampler(func() func() *results.Resources { calls++; return nil })
	begin()
	if now := time.Now(); now.Before(at) {
		t.Fatalf("window began %v before --start-at", at.Sub(now))
	}
	if seg.StartLateNs < 0 || calls != 1 {
		t.Fatalf("late %d ns, sampler called %d times", seg.StartLateNs, calls)
	}
	ph := results.Phase{SetupSecs: 5}
	g.settle(&ph)
	g.settle(&ph)
	if ph.SetupSecs >= 5 || ph.SetupSecs < 5-time.Since(at.Add(-150*time.Millisecond)).Seconds() || len(ph.Notes) != 1 || !strings.Contains(ph.Notes[0], "waited") {
		t.Errorf("the wait is not taken out of the set-up time once: %v s, notes %q", ph.SetupSecs, ph.Notes)
	}
	again := time.Now()
	begin()
	if calls != 2 || seg.StartLateNs > int64(time.Since(at)) || time.Since(again) > time.Second {
		t.Errorf("second window: calls %d, late %v", calls, time.Duration(seg.StartLateNs))
	}

	past := &results.Segment{}
	pg := newStartGate(context.Background(), time.Now().Add(-time.Second), "--start-at", &past.StartLateNs)
	pg.sampler(nil)()
	if past.StartLateNs < int64(time.Second) || !strings.Contains(pg.note(), "after --start-at") {
		t.Errorf("late start: %v, note %q", time.Duration(past.StartLateNs), pg.note())
	}
	var none *startGate
	if none.sampler(nil) != nil || none.note() != "" {
		t.Error("a nil gate must change nothing")
	}
}

func TestSegmentStartSpread(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	segs := []*results.Segment{
		{StartAt: &at, StartLateNs: 5e6, ClockOffsetNs: 2e6, ClockOffsetSource: "relay-date"},
		{StartAt: &at, StartLateNs: 1e6, ClockOffsetNs: -40e6, ClockOffsetSource: "relay-date"},
	}
	if d, corr, ok := results.SegmentStartSpread(segs); !ok || !corr || d != 38*time.Millisecond {
		t.Errorf("spread %v corrected %v ok %v, want 38ms corrected", d, corr, ok)
	}
	segs[1].ClockOffsetSource = ""
	if d, corr, ok := results.SegmentStartSpread(segs); !ok || corr || d != 4*time.Millisecond {
		t.Errorf("spread %v corrected %v ok %v, want 4ms uncorrected", d, corr, ok)
	}
}

// TestSegmentQueryGivesItsPartialReason: a segment that published checks
// its answers for validity and filter match alone because it is a segment
// before the merge, and its verification says so where the query workload
// (given no model) said "nothing was published in this run"; a segment
// that published nothing keeps that reason, and a whole run is untouched.
func TestSegmentQueryGivesItsPartialReason(t *testing.T) {
	const unpublished = "nothing was published in this run, so missing and extra events cannot be known: only validity and filter match were checked"
	phase := func() results.Phase {
		return results.Phase{Name: "query", Verification: &results.Verification{Notes: []string{"a cap note", unpublished}}}
	}
	seg := Config{Segment: workload.Segment{Index: 0, Count: 2}}
	ph := phase()
	seg.segmentQueryNote(&ph, true)
	got := strings.Join(ph.Verification.Notes, "\n")
	if strings.Contains(got, "nothing was published") || !strings.Contains(got, "a segment before the merge") || !strings.Contains(got, "a cap note") {
		t.Errorf("published segment's verification notes:\n%s", got)
	}
	ph = phase()
	seg.segmentQueryNote(&ph, false)
	if ph.Verification.Notes[1] != unpublished {
		t.Errorf("a segment that published nothing lost its reason: %q", ph.Verification.Notes)
	}
	ph = phase()
	Config{}.segmentQueryNote(&ph, true)
	if ph.Verification.Notes[1] != unpublished || len(ph.Notes) != 0 {
		t.Errorf("a whole run changed: %q %q", ph.Verification.Notes, ph.Notes)
	}
}
