package workload

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
)

// Every answer a load's queries got goes through the verifier: an honest
// relay's query load passes partially (what an answer owed is not judged:
// the relay may hold events this run did not publish); a mixed load reads
// back every event the relay accepted, by id, once the load is over, and
// passes in full.
func TestLoadQueriesVerifiedHonestRelayPasses(t *testing.T) {
	for _, kind := range []string{LoadMixed, LoadQuery} {
		t.Run(kind, func(t *testing.T) {
			ph, _ := runLoad(t, testrelay.Config{Verify: true}, LoadOptions{Kind: kind, PublishParts: 1, QueryParts: 1,
				Pattern: constant(t, 200, time.Second), Pool: 200, MaxLateness: 20 * time.Second, Size: 100})
			v := ph.Verification
			if v == nil {
				t.Fatal("no verification: the queries' answers were not checked")
			}
			q := account(t, ph, results.OpQuery)
			var rb results.Account
			if kind == LoadMixed {
				rb = account(t, ph, results.OpRead)
				if ev := account(t, ph, results.OpEvent); rb.Requested != (ev.Accepted+99)/100 || rb.Accepted != rb.Requested ||
					ph.Counts["read_back_events"] != ev.Accepted {
					t.Errorf("read-back %+v, %d events read, of %d accepted", rb, ph.Counts["read_back_events"], ev.Accepted)
				}
			}
			if v.Checked != q.Accepted+rb.Accepted || q.Accepted == 0 {
				t.Errorf("checked %d answers, %d queries and %d read-backs ended with EOSE", v.Checked, q.Accepted, rb.Accepted)
			}
			if v.Returned != ph.Counts[results.CountEventsReturned]+ph.Counts["read_back_events"] || v.Returned == 0 {
				t.Errorf("verified %d events, the queries returned %d, the read-back %d", v.Returned, ph.Counts[results.CountEventsReturned], ph.Counts["read_back_events"])
			}
			partial := strings.HasPrefix(strings.Join(v.Notes, "\n"), "partial: ")
			if v.State != results.VerificationPassed || v.Verified != (kind == LoadMixed) || partial != (kind == LoadQuery) {
				t.Errorf("want a pass, partial for a query load: %+v", v)
			}
			if vd := phaseVerdict(ph, false); vd.Status != judge.Passed {
				t.Errorf("verdict %+v", vd)
			}
		})
	}
}

// A relay whose answers under load hold events outside the filter, or
// forged ones (wrong id or signature), or that OKs events it does not
// store (missing from the read-back), fails verification: wrong answers,
// exit 3.
func TestLoadQueriesWrongAnswersFail(t *testing.T) {
	for _, c := range []struct {
		name  string
		cfg   testrelay.Config
		fault func(*results.Verification) int64
	}{
		{"not matching", testrelay.Config{ExtraEvents: 1}, func(v *results.Verification) int64 { return v.NotMatching }},
		{"forged", testrelay.Config{InvalidEvery: 7}, func(v *results.Verification) int64 { return v.Invalid }},
		{"accepted, not stored", testrelay.Config{DropEvery: 5}, func(v *results.Verification) int64 { return v.Missing }},
	} {
		t.Run(c.name, func(t *testing.T) {
			ph, _ := runLoad(t, c.cfg, LoadOptions{Kind: LoadMixed, PublishParts: 1, QueryParts: 1,
				Pattern: constant(t, 200, time.Second), Pool: 200, MaxLateness: 20 * time.Second, Size: 100})
			v := ph.Verification
			if v == nil || c.fault(v) == 0 || v.State != results.VerificationFailed {
				t.Fatalf("verification %+v: want %s events found, failed", v, c.name)
			}
			if vd := phaseVerdict(ph, false); vd.Status != judge.WrongAnswers || !reasonsMention(vd, "verification failed") {
				t.Errorf("verdict %+v, want wrong answers", vd)
			}
		})
	}
}

// A publish load runs no query: it has no verification of answers (its
// OKs are its accounts).
func TestLoadPublishHasNoAnswersToVerify(t *testing.T) {
	ph, _ := runLoad(t, testrelay.Config{}, LoadOptions{Pattern: constant(t, 50, time.Second), Pool: 50, MaxLateness: 20 * time.Second, Size: 100})
	if ph.Verification != nil {
		t.Errorf("verification %+v for a load without queries", ph.Verification)
	}
}

// Events beyond a filter's limit are a SHOULD: named, not failed, and the
// note says what was done with them (no expected set was judged in the
// queries' answers, even when the read-back makes the whole verification
// full). Events still being published when a REQ was sent may be among
// them (the mixed load publishes while it queries): the note then tells
// them apart (mixedOverLimitNote), still not failed.
func TestLoadOverLimitNamedNotFailed(t *testing.T) {
	ph, _ := runLoad(t, testrelay.Config{IgnoreLimit: true}, LoadOptions{Kind: LoadMixed, PublishParts: 1, QueryParts: 1, Limit: 2,
		Pattern: constant(t, 100, time.Second), Pool: 100, MaxLateness: 20 * time.Second, Size: 100})
	v := ph.Verification
	notes := strings.Join(v.Notes, "\n")
	checked := strings.Contains(notes, verify.OverLimitCheckedNote(v.OverLimit)) ||
		strings.Contains(notes, numfmt.Count(v.OverLimit, "event")+" came back beyond their filter's limit") &&
			strings.Contains(notes, "events still being published when their REQ was sent") &&
			strings.Contains(notes, "; every event of these answers was still checked for validity, filter match and duplicates")
	if v.OverLimit == 0 || v.State != results.VerificationPassed || !checked || strings.Contains(notes, "judged against the expected set") {
		t.Errorf("verification %+v", v)
	}
}

// A read-back the relay does not answer leaves missing events unchecked:
// the verification stays partial and says so, the read-back REQ is timed
// out in its account, and the run is incomplete (exit 4), never passed.
func TestLoadReadBackUnansweredIsNotAPass(t *testing.T) {
	ph, _ := runLoad(t, testrelay.Config{NoEOSEAfter: 50}, LoadOptions{Base: Base{Timeout: 2 * time.Second}, Kind: LoadMixed,
		PublishParts: 1, QueryParts: 1, Pattern: constant(t, 100, time.Second), Pool: 100, Connections: 1, MaxLateness: 20 * time.Second, Size: 100})
	rb := account(t, ph, results.OpRead)
	v := ph.Verification
	if rb.Requested != 1 || rb.TimedOut != 1 || v == nil || v.Verified || !strings.Contains(strings.Join(v.Notes, "\n"), "so missing events were not checked") {
		t.Fatalf("read-back %+v, verification %+v", rb, v)
	}
	if vd := phaseVerdict(ph, false); vd.Status != judge.Incomplete {
		t.Errorf("verdict %+v, want incomplete", vd)
	}
}

// The checker verifies a signature once per event id: other bytes of an
// event already checked are valid without a second signature check, while
// the same id with another signature, or other content under the id, is
// still invalid.
func TestCheckerSignatureOncePerID(t *testing.T) {
	c := smallCorpus(t)
	e, other := *c.Events[0], c.Events[1]
	raw, err := json.Marshal(&e)
	if err != nil {
		t.Fatal(err)
	}
	chk := verify.NewChecker()
	spaced := append([]byte("{ "), raw[1:]...)
	forged := e
	forged.Sig = other.Sig
	edited := e
	edited.Content += "x"
	for i, step := range []struct {
		raw  []byte
		want bool
	}{{raw, true}, {spaced, true}, {mustJSON(t, &forged), false}, {mustJSON(t, &edited), false}, {spaced, true}} {
		if _, ok := chk.Check(step.raw); ok != step.want {
			t.Errorf("step %d: valid %v, want %v", i, ok, step.want)
		}
	}
	// Vouched for (relaybench signed it): other bytes are valid, another
	// signature under its id or other content is not; an unsigned event is
	// not vouched for.
	vouched := verify.NewChecker()
	vouched.Vouch(&e)
	unsigned := *other
	unsigned.Sig = ""
	vouched.Vouch(&unsigned)
	for i, step := range []struct {
		raw  []byte
		want bool
	}{{mustJSON(t, &forged), false}, {mustJSON(t, &edited), false}, {spaced, true}, {mustJSON(t, &unsigned), false}} {
		if _, ok := vouched.Check(step.raw); ok != step.want {
			t.Errorf("vouched, step %d: valid %v, want %v", i, ok, step.want)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
