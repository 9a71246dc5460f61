package workload

import (
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
)

// A relay that handles every EVENT but answers none after the 560th:
// those events are unknown (the relay stored them, or with LoseUnanswered
// lost them). Queries of the reference and the clients' mix pass whichever
// it did, and name the ones that turned up; judged as refused, the answers
// of the relay that stored them fail (the defect this guards against).
func TestQueryUnknownEventsNeitherOwedNorWrong(t *testing.T) {
	t.Parallel() // it waits out OKs that never come, on its own relay
	c := smallCorpus(t)
	for _, lose := range []bool{false, true} {
		r := testrelay.New(testrelay.Config{NeverOKAfter: 560, LoseUnanswered: lose})
		pr, err := Publish(testCtx(t), r.URL(), c, all(c), PublishOptions{Base: Base{Timeout: 3 * time.Second}, Connections: 1, Mode: ModePipeline, Window: 64})
		if err != nil {
			t.Fatal(err)
		}
		model, unknown := outcomeModel(c, pr)
		if len(unknown) == 0 || r.Stats().Unanswered == 0 {
			t.Fatalf("lose=%v: no unknown event (outcomes: %v)", lose, pr.Phase.Counts)
		}
		for _, shapes := range [][]string{nil, ClientShapes} {
			qo := QueryOptions{Base: Base{Timeout: 5 * time.Second, Seed: 3}, Limit: 50, Queries: 60, Shapes: shapes}
			ph, err := Query(testCtx(t), r.URL(), model, model.Live, qo)
			if err != nil {
				t.Fatal(err)
			}
			v := ph.Verification
			if v.Status() != results.VerificationPassed || v.Missing != 0 || v.Extra != 0 {
				t.Errorf("lose=%v shapes %v: %s, missing %d extra %d; notes %q", lose, shapes, v.Status(), v.Missing, v.Extra, v.Notes)
			}
			if lose && v.StoredUnknown != 0 {
				t.Errorf("lose=%v shapes %v: stored_unknown %d, want 0", lose, shapes, v.StoredUnknown)
			}
			if !lose && shapes == nil {
				if v.StoredUnknown == 0 || v.StoredUnknown > int64(len(unknown)) {
					t.Errorf("stored_unknown %d, want 1..%d", v.StoredUnknown, len(unknown))
				}
				old, err := Query(testCtx(t), r.URL(), verify.NewModel(model.All), model.Live, qo)
				if err != nil {
					t.Fatal(err)
				}
				if old.Verification.Extra == 0 {
					t.Errorf("judged as refused, the unknown events were not extra: %+v", old.Verification)
				}
			}
		}
		r.Close()
	}
}

// A relay that ignores limit is named, not failed: the newest `limit` of
// each answer are right. One that also loses accepted events fails.
func TestQueryOverLimitNamedNotFailed(t *testing.T) {
	for _, drop := range []int{0, 9} {
		r := testrelay.New(testrelay.Config{IgnoreLimit: true, DropEvery: drop})
		_, q := publishAndQuery(t, r.URL(), ModePipeline, QueryOptions{Limit: 10, Queries: 40})
		r.Close()
		v := q.Verification
		if v.OverLimit == 0 {
			t.Errorf("drop every %d: no over_limit counted: %+v", drop, v)
		}
		if pass := v.Status() == results.VerificationPassed; pass != (drop == 0) {
			t.Errorf("drop every %d: %s, missing %d extra %d; notes %q", drop, v.Status(), v.Missing, v.Extra, v.Notes)
		}
		if drop == 0 && (v.Missing != 0 || v.Extra != 0) {
			t.Errorf("over the limit: missing %d extra %d", v.Missing, v.Extra)
		}
	}
}

// Counts of a relay that stored events relaybench never got the OK of are
// right anywhere in the range they allow: the same counts fail when those
// events are taken as refused.
func TestCountUnknownEventsRange(t *testing.T) {
	url := embeddedURL(t, "native")
	m := publishModel(t, url)
	// Take every 10th stored event as one whose OK never came.
	var acc, unknown []*nostr.Event
	for i, e := range m.All {
		if i%10 == 0 {
			unknown = append(unknown, e)
		} else {
			acc = append(acc, e)
		}
	}
	um := verify.NewModelUnknown(acc, unknown)
	o := CountOptions{Base: Base{Timeout: 5 * time.Second, Seed: 3}, Queries: 24, Limit: 50}
	ph, err := Count(testCtx(t), url, um, m.Live, o)
	if err != nil {
		t.Fatal(err)
	}
	if v := ph.Verification; v.Status() != results.VerificationPassed || ph.Counts["count_wrong"] != 0 {
		t.Errorf("with unknown events: %s, wrong %d; notes %q", v.Status(), ph.Counts["count_wrong"], v.Notes)
	}
	ph, err = Count(testCtx(t), url, verify.NewModel(acc), m.Live, o)
	if err != nil {
		t.Fatal(err)
	}
	if ph.Counts["count_wrong"] == 0 {
		t.Errorf("taken as refused, the unknown events made no count wrong: %+v", ph.Verification)
	}
}

// A negentropy reconciliation in which the relay has events whose OK never
// came is not wrong: they were stored after all, and named. Taken as
// events the relay should not have, they are extra. (The embedded relay
// may refuse a reconciliation, NEG-ERROR "CLOSED": only those that
// converged are judged.)
func TestNegentropyUnknownEventsStoredAfterAll(t *testing.T) {
	for _, named := range []bool{true, false} {
		url := embeddedURL(t, "native") // a fresh relay: no delta events of another run
		live, info := publishForSync(t, url)
		var known, unknown []*nostr.Event
		for i, e := range live {
			if i%10 == 5 {
				unknown = append(unknown, e)
			} else {
				known = append(known, e)
			}
		}
		o := NegentropyOptions{Base: Base{Seed: 5, Timeout: 10 * time.Second}, Rounds: 3, Delta: 10}
		if named {
			o.Unknown = unknown
		}
		phases, err := Negentropy(testCtx(t), url, smallCorpus(t), known, info, o)
		if err != nil {
			t.Fatal(err)
		}
		var converged, stored, extra int64
		failed := false
		for _, ph := range phases {
			converged += ph.Account(OpReconcile).Accepted
			v := ph.Verification
			stored += v.StoredUnknown
			extra += v.Extra
			failed = failed || v.Status() == results.VerificationFailed
			if named && (v.Status() == results.VerificationFailed || v.StoredUnknown > int64(len(unknown))) {
				t.Errorf("%s: %s, stored_unknown %d of %d: %+v", ph.Name, v.Status(), v.StoredUnknown, len(unknown), v)
			}
		}
		// Every scenario's relay set holds unknown events the client lacks:
		// a converged reconciliation reports some.
		switch {
		case converged == 0:
			t.Logf("named=%v: the relay refused every reconciliation: nothing to judge", named)
		case named && stored == 0:
			t.Errorf("%d reconciliations converged, none named an unknown event", converged)
		case !named && (!failed || extra == 0):
			t.Errorf("taken as never stored, the unknown events were not extra (%d converged)", converged)
		}
	}
}
