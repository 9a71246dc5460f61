package workload

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/results"
)

// shown records the progress displays a load makes (LoadOptions.Show,
// Env.Progress): each label with its count lines' form, its total and the
// last count reported.
type shown struct {
	mu     sync.Mutex
	labels []string
	forms  map[string]string
	totals map[string]int64
	last   map[string]int64
}

func newShown() *shown {
	return &shown{forms: map[string]string{}, totals: map[string]int64{}, last: map[string]int64{}}
}

func (s *shown) show(label string, total int64) func(int64) {
	l, form := progress.Split(label)
	s.mu.Lock()
	s.labels = append(s.labels, l)
	s.forms[l], s.totals[l] = form, total
	s.mu.Unlock()
	return func(done int64) {
		s.mu.Lock()
		s.last[l] = max(s.last[l], done)
		s.mu.Unlock()
	}
}

// ended checks that label was shown, counting form, and reached want of
// want.
func (s *shown) ended(t *testing.T, label, form string, want int64) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.totals[label]; !ok {
		t.Errorf("no display %q among %q", label, s.labels)
		return
	}
	if s.forms[label] != form || s.totals[label] != want || s.last[label] != want {
		t.Errorf("%q: counts %q to %d of %d, want %q to %d", label, s.forms[label], s.last[label], s.totals[label], form, want)
	}
}

// A load says its plan and how far it is as every workload does: without
// per-second lines (run and compare --workloads load), one display of the
// operations ended under its plan, a mixed load's read-back REQs in it (a
// REQ per 100 events it publishes), which reaches its total; with
// per-second lines (the load command), a mixed load announces its
// read-back of the events accepted and counts them.
func TestLoadShowsPlanAndProgress(t *testing.T) {
	for _, c := range []struct {
		kind, plan string
		total      int64
		live       bool
	}{
		{LoadPublish, "load: constant 200/s for 1.00s: 200 operations (200 EVENTs)", 200, false},
		{LoadMixed, "load: constant 200/s for 1.00s: 200 operations (100 EVENTs, 100 REQs), then the read-back", 201, false},
		{LoadMixed, "", 0, true},
	} {
		t.Run(fmt.Sprintf("%s live=%v", c.kind, c.live), func(t *testing.T) {
			s := newShown()
			o := LoadOptions{Kind: c.kind, PublishParts: 1, QueryParts: 1, Pattern: constant(t, 200, time.Second), Pool: 200,
				MaxLateness: 20 * time.Second, Size: 100, Show: s.show}
			var live bytes.Buffer
			if c.live {
				o.Live = &live
			}
			ph, _ := runLoad(t, testrelay.Config{}, o)
			if c.plan != "" {
				s.ended(t, c.plan, "Ended %d of "+numfmt.Group(c.total)+" operations...", c.total)
				if rb := ph.Account(results.OpRead); rb != nil && ph.Counts["ops_accepted"]+rb.Requested != c.total {
					t.Errorf("accounts request %d operations and %d read-backs, the plan said %d", ph.Counts["ops_accepted"], rb.Requested, c.total)
				}
			}
			if c.live {
				n := account(t, ph, results.OpEvent).Accepted
				s.ended(t, "load: reading back "+numfmt.Count(n, "accepted event")+" by id", "Read back %d of "+numfmt.Group(n)+" events...", n)
			}
			if len(s.labels) != 1 {
				t.Errorf("displays %q, want one", s.labels)
			}
		})
	}
}

// run and compare --workloads load run LoadSpec with the runner's progress
// reporter: the load announces its plan there and counts every operation
// to the end, dropped ones included (each is booked in one outcome), where
// it used to say nothing for the whole phase.
func TestLoadSpecShowsItsPlanInRun(t *testing.T) {
	r, c := testrelay.Start(t, testrelay.Config{}), testKeys(t)
	s := newShown()
	spec := LoadSpec{Duration: time.Second, BaseRate: 50, Pattern: "constant", Kind: LoadPublish}
	phases, err := spec.Run(testCtx(t), Env{URL: r.URL(), Corpus: c, Progress: s.show})
	if err != nil || len(phases) != 1 {
		t.Fatalf("%d phases, %v", len(phases), err)
	}
	s.ended(t, "load: constant 50/s for 1.00s: 50 operations (50 EVENTs)", "Ended %d of 50 operations...", 50)
}

// The plan the load command prints before the clock is the one Load shows:
// the pattern and the operations by kind, a query load's REQs too (it signs
// nothing, so it printed no plan at all).
func TestLoadPlanText(t *testing.T) {
	for _, c := range []struct {
		o    LoadOptions
		want string
	}{
		{LoadOptions{Kind: LoadQuery}, "constant 100/s for 2.00s: 200 operations (200 REQs)"},
		{LoadOptions{Kind: LoadMixed, PublishParts: 3, QueryParts: 1}, "constant 100/s for 2.00s: 200 operations (150 EVENTs, 50 REQs)"},
		{LoadOptions{Segment: Segment{Index: 1, Count: 2}}, "constant 100/s for 2.00s: 100 operations (100 EVENTs)"},
	} {
		c.o.Pattern = constant(t, 100, 2*time.Second)
		if got, err := c.o.PlanText(); err != nil || got != c.want {
			t.Errorf("%+v: %q, %v; want %q", c.o, got, err, c.want)
		}
	}
}

// Each group of a mixed load carries the verification of its own
// operations (the Load by group table's Verification column, which showed
// "–" for both): the publish group the read-back of the events it got
// accepted (missing events judged: a relay that OKs events it does not
// store fails there), the query group its answers (partial). The phase's
// verification, which adds both, says what its events returned are made
// of, beside the phase's figure of the queries' alone.
func TestLoadGroupsCarryTheirVerification(t *testing.T) {
	for _, c := range []struct {
		name      string
		cfg       testrelay.Config
		pubPassed bool
	}{
		{"honest", testrelay.Config{Verify: true}, true},
		{"accepted, not stored", testrelay.Config{DropEvery: 5}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ph, _ := runLoad(t, c.cfg, LoadOptions{Kind: LoadMixed, PublishParts: 1, QueryParts: 1,
				Pattern: constant(t, 200, time.Second), Pool: 200, MaxLateness: 20 * time.Second, Size: 100})
			if len(ph.Groups) != 2 || ph.Groups[0].Verification == nil || ph.Groups[1].Verification == nil {
				t.Fatalf("groups %+v", ph.Groups)
			}
			pub, q := ph.Groups[0].Verification, ph.Groups[1].Verification
			ev, qa := account(t, ph, results.OpEvent), account(t, ph, results.OpQuery)
			if !pub.Verified || pub.Expected != ev.Accepted || pub.Returned != ph.Counts["read_back_events"] ||
				(pub.Status() == results.VerificationPassed) != c.pubPassed || (pub.Missing > 0) == c.pubPassed {
				t.Errorf("publish group %+v, %d events accepted", pub, ev.Accepted)
			}
			if q.Verified || q.Checked != qa.Accepted || q.Status() != results.VerificationPassed {
				t.Errorf("query group %+v, %d queries ended with EOSE", q, qa.Accepted)
			}
			v := ph.Verification
			if v.Returned != pub.Returned+q.Returned || v.Checked != pub.Checked+q.Checked {
				t.Errorf("phase %+v is not its groups' sum", v)
			}
			split := fmt.Sprintf("of the %s returned in the answers checked, %s answered the queries and %s the read-back",
				numfmt.Count(v.Returned, "event"), numfmt.Group(q.Returned), numfmt.Group(pub.Returned))
			if !strings.Contains(strings.Join(v.Notes, "\n"), split) {
				t.Errorf("no %q in %q", split, v.Notes)
			}
		})
	}
}
