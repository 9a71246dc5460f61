package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
)

func reasonsMention(v results.Verdict, s string) bool {
	for _, r := range v.Reasons {
		if strings.Contains(r, s) {
			return true
		}
	}
	return false
}

// OKs for ids never sent are a NIP-01 violation (exit 3), never credited
// and never taken for late OKs.
func TestForeignOKsAreAViolation(t *testing.T) {
	c := smallCorpus(t)
	for _, mode := range []string{ModeWait, ModePipeline} {
		t.Run(mode, func(t *testing.T) {
			r := testrelay.New(testrelay.Config{ForeignOKEvery: 3})
			defer r.Close()
			pr, err := Publish(ctxT(t), r.URL(), c, all(c)[:60], PublishOptions{Base: Base{Timeout: 5 * time.Second}, Connections: 2, Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			p := pr.Phase
			// Each connection reads every foreign OK sent before its last real one.
			if p.Counts["foreign_oks"] == 0 || p.Counts["late_oks"] != 0 || p.Counts["accepted"] != 60 {
				t.Fatalf("counts %v (relay sent %d foreign OKs)", p.Counts, r.Stats().ForeignOKs)
			}
			if v := phaseVerdict(p, false); v.Status != judge.WrongAnswers || !reasonsMention(v, "never sent") {
				t.Errorf("verdict %+v, want wrong answers naming OKs for events never sent", v)
			}
		})
	}
}

// OKs that come after their events timed out are late, never foreign,
// however the timing falls (they may also beat the expiry and be accepted).
func TestLateOKsAreNotAViolation(t *testing.T) {
	r := testrelay.New(testrelay.Config{OKDelay: 60 * time.Millisecond})
	defer r.Close()
	c := smallCorpus(t)
	pr, err := Publish(ctxT(t), r.URL(), c, all(c)[:8], PublishOptions{Base: Base{Timeout: 40 * time.Millisecond}, Connections: 1, Mode: ModeWait})
	if err != nil {
		t.Fatal(err)
	}
	p := pr.Phase
	if p.Counts["foreign_oks"] != 0 || p.Counts["late_oks"] > p.Counts["timed_out"] {
		t.Fatalf("counts %v: a late OK is never foreign, and each belongs to a timed-out event", p.Counts)
	}
	if v := phaseVerdict(p, false); v.Status == judge.WrongAnswers {
		t.Errorf("verdict %+v: late OKs are no violation", v)
	}
}

// EVENTs under a subscription id never opened are a NIP-01 violation in
// the publish and the query phase alike; events after a CLOSE are only
// named, and neither reaches an answer.
func TestUnsolicitedEventsAreAViolation(t *testing.T) {
	r := testrelay.New(testrelay.Config{UnsolicitedEvents: true})
	defer r.Close()
	pr, q := publishAndQuery(t, r.URL(), ModePipeline, QueryOptions{Limit: 50, Queries: 10})
	p := pr.Phase
	if p.Counts["unsolicited_events"] == 0 {
		t.Errorf("publish phase: counts %v (relay sent %d unsolicited events)", p.Counts, r.Stats().UnsolicitedEvents)
	}
	if q.Counts["unsolicited_events"] == 0 || q.Counts["events_after_close"] == 0 {
		t.Errorf("query phase: counts %v", q.Counts)
	}
	if v := q.Verification; v == nil || !v.Passed || v.Checked != 10 {
		t.Errorf("verification %+v: the stray events must not reach any answer", v)
	}
	for _, ph := range []results.Phase{p, q} {
		if v := phaseVerdict(ph, false); v.Status != judge.WrongAnswers || !reasonsMention(v, "never opened") {
			t.Errorf("%s: verdict %+v, want wrong answers naming EVENTs under ids never opened", ph.Name, v)
		}
	}
}

// A relay that streams events into every REQ without end is cut at the
// cap: each query is refused "answer over cap", none is verified (neither
// passed nor wrong), and the phase is incomplete, not failed.
func TestEndlessAnswersAreCutAtTheCap(t *testing.T) {
	r := testrelay.New(testrelay.Config{EndlessAnswers: true})
	defer r.Close()
	_, q := publishAndQuery(t, r.URL(), ModePipeline, QueryOptions{Limit: 10, Queries: 6})
	a := q.Account(results.OpQuery)
	if a == nil || a.Refused != 6 || a.RefusedBy[outcome.OverCap] != 6 || !a.Balanced() {
		t.Fatalf("account %+v, want 6 refused %q", a, outcome.OverCap)
	}
	if q.Counts["answers_over_cap"] != 6 || q.Counts["events_returned"] != 0 {
		t.Errorf("counts %v", q.Counts)
	}
	if v := q.Verification; v != nil && (v.Checked != 0 || v.Missing != 0 || v.Extra != 0) {
		t.Errorf("verification %+v: nothing over the cap is verified", v)
	}
	v := phaseVerdict(q, false)
	if v.Status != judge.Incomplete || !reasonsMention(v, outcome.OverCap) {
		t.Errorf("verdict %+v, want incomplete naming %q", v, outcome.OverCap)
	}
}
