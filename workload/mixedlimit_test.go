package workload

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
)

// The progress names each part as it starts: the three timed parts with
// their duration, the read-back as not timed (it has no duration: it reads
// every accepted event by id, each REQ within --timeout).
func TestMixedProgressReadBackNotTimed(t *testing.T) {
	r, c := testrelay.Start(t, testrelay.Config{Verify: true}), testKeys(t)
	r.Add(c.Events...)
	var log bytes.Buffer
	bars := &progressBars{}
	phs, err := smallMixed.Run(testCtx(t), Env{URL: r.URL(), Corpus: c, Log: &log, Progress: bars.progress})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"mixed: publish/alone (600ms)", "mixed: query/alone (600ms)", "mixed: together (600ms)",
		"mixed: read-back (not timed: every accepted event by id, each REQ within 10s)"}
	if got := strings.Split(strings.TrimSpace(log.String()), "\n"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("progress lines:\n%s\nwant:\n%s", log.String(), strings.Join(want, "\n"))
	}
	// The read-back's REQs count in the plan's progress as they end: no
	// bar of its own, with another total (TestMixedAnnouncesItsWholePlan).
	labels, last := bars.get()
	if wantBar := fmt.Sprintf("mixed: %s in three parts of 600ms each, then the read-back of %d", numfmt.Count(smallMixedPlan, "operation"), smallMixedPlan); len(labels) != 1 || labels[0] != wantBar || last[0] != smallMixedPlan || phs[0].Counts["read_back_events"] == 0 {
		t.Errorf("progress: bars %q ending at %v, want %q alone ending at %d, the events read back", labels, last, wantBar, smallMixedPlan)
	}
	// Its query groups' Late start column is explained when it is shown
	// (a REQ started late), and only then.
	late := slices.ContainsFunc(phs[0].Groups, func(g results.Group) bool { return g.Counts["late_start"] > 0 })
	if containsPrefix(phs[0].Notes, "Late start (query groups): REQs sent more than 1 ms after their scheduled time") != late {
		t.Errorf("a REQ started late: %v, but the notes %q", late, phs[0].Notes)
	}
}

// An answer beyond its limit while the part publishes: the fresh events of
// this part it holds are kept (distinct), others (the corpus, an earlier
// part's) are not; an answer within its limit, or not ended by EOSE, is none.
func TestOverLimitOf(t *testing.T) {
	fresh, err := NewFresh(testCtx(t), testKeys(t), FreshSpec{Count: 6, Size: 10}, RunNonce())
	if err != nil {
		t.Fatal(err)
	}
	c := testKeys(t)
	raws := [][]byte{fresh.Raw[0], fresh.Raw[3], fresh.Raw[3], fresh.Raw[4], c.Events[0].AppendJSON(nil)}
	r := &queryRecord{ended: "eose", sent: 7, raws: raws}
	r.filter.Limit = 2
	a, ok := overLimitOf(r, fresh, 2, 5) // this part published fresh events 2…5
	if !ok || a.sent != 7 || len(a.fresh) != 2 || a.fresh[0] != 3 || a.fresh[1] != 4 {
		t.Errorf("over-limit answer %+v %v, want fresh [3 4] sent 7", a, ok)
	}
	for _, lim := range []int{0, 5} {
		r.filter.Limit = lim
		if _, ok := overLimitOf(r, fresh, 2, 5); ok {
			t.Errorf("limit %d: an answer of 5 events reported beyond it", lim)
		}
	}
	r.filter.Limit, r.ended = 2, ""
	if _, ok := overLimitOf(r, fresh, 2, 5); ok {
		t.Error("an answer without EOSE reported beyond its limit")
	}
	r.ended = "eose"
	if _, ok := overLimitOf(r, nil, 2, 5); ok {
		t.Error("a part that does not publish reported an answer beyond its limit")
	}
}

// Of each answer's excess, the events whose OK came back after the REQ was
// written (or never) count, at most the excess; one acknowledged before
// the REQ is a stored event beyond the limit.
func TestStillPublishing(t *testing.T) {
	okRecv := []int64{0, 50, 150, 0, 200}
	answers := []overLimitAnswer{
		{sent: 100, over: 1, fresh: []int{1, 2, 3}}, // 2 and 3 still publishing, excess 1
		{sent: 100, over: 3, fresh: []int{1, 4}},    // 4 only: 1 of 3
		{sent: 100, over: 2, fresh: []int{1}},       // acknowledged before: none
	}
	if got := stillPublishing(answers, okRecv); got != 2 {
		t.Errorf("still publishing %d, want 2", got)
	}
}

// The note beyond the limit says how many were still being published, and
// what that means for the verdict (not failed); none leaves verify's note.
func TestMixedOverLimitNote(t *testing.T) {
	base := func() []string { return []string{"other", verify.OverLimitNote(5)} }
	if got := mixedOverLimitNote(base(), 5, 0); got[1] != verify.OverLimitCheckedNote(5) {
		t.Errorf("no live event: note %q, want the one of answers judged without an expected set", got[1])
	}
	all := mixedOverLimitNote(base(), 5, 9)[1]
	if !strings.HasPrefix(all, "5 events came back beyond their filter's limit, all of them events still being published when their REQ was sent") ||
		!strings.Contains(all, "before its EOSE") || !strings.Contains(all, "not failed") || strings.Contains(all, "the other") {
		t.Errorf("all live: %q", all)
	}
	part := mixedOverLimitNote(base(), 5, 3)[1]
	if !strings.HasPrefix(part, "5 events came back beyond their filter's limit: 3 of them events still being published") ||
		!strings.Contains(part, "the other 2 stored events beyond the limit (NIP-01 SHOULD, not failed") {
		t.Errorf("partly live: %q", part)
	}
}
