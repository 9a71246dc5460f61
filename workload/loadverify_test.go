package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
)

// Every answer a load's queries got goes through the verifier: an honest
// relay's mixed and query loads pass, partially (what an answer owed is
// not judged while the relay's set moves), with every query checked.
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
			if v.Checked != q.Accepted || v.Checked == 0 {
				t.Errorf("checked %d answers, %d queries ended with EOSE", v.Checked, q.Accepted)
			}
			if v.Returned != ph.Counts[results.CountEventsReturned] || v.Returned == 0 {
				t.Errorf("verified %d events, the queries returned %d", v.Returned, ph.Counts[results.CountEventsReturned])
			}
			if v.State != results.VerificationPassed || v.Verified || !strings.HasPrefix(strings.Join(v.Notes, "\n"), "partial: ") {
				t.Errorf("want a partial pass: %+v", v)
			}
			if vd := phaseVerdict(ph, false); vd.Status != judge.Passed {
				t.Errorf("verdict %+v", vd)
			}
		})
	}
}

// A relay whose answers under load hold events outside the filter, or
// forged ones (wrong id or signature), fails verification: wrong answers,
// exit 3.
func TestLoadQueriesWrongAnswersFail(t *testing.T) {
	for _, c := range []struct {
		name  string
		cfg   testrelay.Config
		fault func(*results.Verification) int64
	}{
		{"not matching", testrelay.Config{ExtraEvents: 1}, func(v *results.Verification) int64 { return v.NotMatching }},
		{"forged", testrelay.Config{InvalidEvery: 7}, func(v *results.Verification) int64 { return v.Invalid }},
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
