package workload

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/verify"
)

// An answer's events count as still being published when their OK had not
// come when the REQ was written (none yet, none ever, or later), each
// once; one acknowledged before the REQ, or not this load's, is stored.
func TestOKTimesLiveIn(t *testing.T) {
	raw := func(c byte) []byte { return []byte(`{"id":"` + strings.Repeat(string(c), 64) + `"}`) }
	id := func(c byte) string { return strings.Repeat(string(c), 64) }
	ts := newOKTimes(int64(time.Hour))
	for _, c := range []byte("abcd") {
		ts.sending(id(c))
	}
	ts.ended(id('a'), 50)  // OK before the REQ (sent 100): stored
	ts.ended(id('b'), 150) // OK after: live
	ts.ended(id('c'), 0)   // no OK ever: live
	// d: still awaiting its OK: live; e: not this load's: stored
	answer := [][]byte{raw('a'), raw('b'), raw('b'), raw('c'), raw('d'), raw('e'), []byte(`{}`)}
	if got := ts.liveIn(answer, 100); got != 3 {
		t.Errorf("live %d, want 3 (b once, c, d)", got)
	}
}

// Entries ended more than two timeouts ago are dropped as events are sent;
// those in flight, or ended lately, are kept.
func TestOKTimesBounded(t *testing.T) {
	ts := newOKTimes(1) // 1 ns: every ended entry is old by the next sweep
	ts.sending("pending")
	for i := range 1022 {
		k := fmt.Sprint(i)
		ts.sending(k)
		ts.ended(k, mono.Now())
	}
	ts.sending("last") // the 1,024th: sweeps
	if _, ok := ts.m["pending"]; len(ts.m) != 2 || !ok {
		t.Errorf("%d entries kept, want the two still awaiting their OK", len(ts.m))
	}
}

// A mixed load's events beyond their filter's limit get one note, mixed's
// (live events before EOSE told from stored ones). How many are live
// depends on timing, so this checks the note's form; TestOKTimesLiveIn
// checks the telling apart.
func TestLoadMixedOverLimitNote(t *testing.T) {
	ph, _ := runLoad(t, testrelay.Config{IgnoreLimit: true}, LoadOptions{Kind: LoadMixed, PublishParts: 1, QueryParts: 1,
		Pattern: constant(t, 200, time.Second), Pool: 200, MaxLateness: 20 * time.Second, Size: 100, Limit: 2})
	v := ph.Verification
	if v == nil || v.OverLimit == 0 {
		t.Fatalf("no event beyond the limit from a relay ignoring it: %+v", v)
	}
	var notes []string
	for _, n := range v.Notes {
		if strings.Contains(n, "beyond their filter's limit") {
			notes = append(notes, n)
		}
	}
	lead := numfmt.Count(v.OverLimit, "event") + " came back beyond their filter's limit"
	if len(notes) != 1 || !strings.HasPrefix(notes[0], lead) || notes[0] == verify.OverLimitNote(v.OverLimit) {
		t.Errorf("notes beyond the limit %q, want one of mixed's, starting %q", notes, lead)
	}
	if strings.Contains(notes[0], "still being published") && !strings.Contains(notes[0], "before its EOSE") {
		t.Errorf("live events not explained: %q", notes[0])
	}
}

// TestLoadSeriesSaysWhatItTimes: the live view (--web) labels each
// latency series with what it times; load's series said nothing, so the
// page labelled its latency "answer". A publish load's series times OKs,
// a query load's EOSEs, a mixed load's (one schedule for both) either.
func TestLoadSeriesSaysWhatItTimes(t *testing.T) {
	for kind, want := range map[string]string{LoadPublish: metrics.TimesOK, LoadQuery: metrics.TimesEOSE, LoadMixed: "OK or EOSE"} {
		var mu sync.Mutex
		var series []*metrics.Series
		stop := metrics.WatchSeries(func(s *metrics.Series) { mu.Lock(); series = append(series, s); mu.Unlock() })
		runLoad(t, testrelay.Config{}, LoadOptions{Kind: kind, PublishParts: 1, QueryParts: 1,
			Pattern: constant(t, 100, 300*time.Millisecond), Pool: 20, MaxLateness: 20 * time.Second, Size: 100})
		stop()
		var seen []string
		mu.Lock()
		for _, s := range series {
			seen = append(seen, s.Timing())
		}
		mu.Unlock()
		if len(seen) == 0 || slices.ContainsFunc(seen, func(s string) bool { return s != want }) {
			t.Errorf("%s load: series timing %q, want each %q", kind, seen, want)
		}
	}
}
