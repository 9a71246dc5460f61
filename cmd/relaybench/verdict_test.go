package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
)

// TestEveryREQRefusedIsNotVerified: a relay that answers every REQ with
// CLOSED lets relaybench check no answer. The query phase is "not
// verified" everywhere: the summary says so (never "PASSED"), the results
// file stores passed false and state "not verified", the threshold
// query.verification==passed fails, query.verification==not_verified
// passes, the JUnit case fails, and the exit status is not 0.
func TestEveryREQRefusedIsNotVerified(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{Verify: true, RefuseAllREQs: true})
	junit := filepath.Join(t.TempDir(), "junit.xml")
	res, f, _ := runRecorded(t, relaybenchBin(t), "run", "--events", "50", "--queries", "10", "--concurrency", "2", "--timeout", "1s", "--relay", r.URL(),
		"--cache-dir", t.TempDir(), "--junit", junit,
		"--threshold", "query.verification==passed", "--threshold", "query.verification==not_verified")
	if res.code != judge.Incomplete {
		t.Errorf("exit %d, want %d (incomplete)\nstderr: %s", res.code, judge.Incomplete, lastLines(res.stderr, 5))
	}
	if r.Stats().RateLimitedREQs == 0 {
		t.Fatal("the relay refused no REQ")
	}
	if !strings.Contains(res.stdout, "NOT VERIFIED: no answer was checked") {
		t.Errorf("summary lacks NOT VERIFIED:\n%s", res.stdout)
	}
	if strings.Contains(res.stdout, "Verification: PASSED") || strings.Contains(res.stdout, "Verdict: PASSED") {
		t.Errorf("summary calls it passed:\n%s", res.stdout)
	}
	q := f.Runs[0].Phase("query")
	if q == nil || q.Verification == nil {
		t.Fatal("no query verification")
	}
	if v := q.Verification; v.Passed || v.State != results.VerificationNotVerified || v.Checked != 0 {
		t.Errorf("query verification: passed %v, state %q, checked %d", v.Passed, v.State, v.Checked)
	}
	got := map[string]bool{}
	for _, th := range f.Thresholds {
		got[th.Threshold] = th.Passed
	}
	if got["query.verification==passed"] || !got["query.verification==not_verified"] {
		t.Errorf("thresholds: %+v", f.Thresholds)
	}
	found := false
	for _, reason := range f.Verdict.Reasons {
		found = found || strings.Contains(reason, "query: not verified")
	}
	if !found {
		t.Errorf("verdict reasons do not name the unverified phase: %v", f.Verdict.Reasons)
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(x), `message="not verified: no answer was checked`) {
		t.Errorf("JUnit does not fail the unverified phase:\n%s", x)
	}
}

// unknownRun runs 60 events on one connection (corpus order, so which
// events go unanswered is fixed) and 30 queries against a test relay, and
// returns the exit status, the query phase's verification and stdout.
func unknownRun(t *testing.T, cfg testrelay.Config, extra ...string) (int, *results.Verification, *testrelay.Relay, string) {
	t.Helper()
	r := testrelay.Start(t, cfg)
	res, f, _ := runRecorded(t, relaybenchBin(t), append([]string{"run", "--events", "60", "--queries", "30", "--concurrency", "1", "--timeout", "1s",
		"--anchor", testAnchor, "--relay", r.URL(), "--cache-dir", t.TempDir()}, extra...)...)
	q := f.Runs[0].Phase("query")
	if q == nil || q.Verification == nil {
		t.Fatalf("no query verification\nstdout: %s", res.stdout)
	}
	return res.code, q.Verification, r, res.stdout
}

// A relay that stores every event but never answers those after the 45th
// is not wrong: the events whose OK never came are unknown, neither owed nor
// forbidden. The run is incomplete (timeouts), not failed, and the
// verification names how many turned up in answers (stored after all).
// Before, they counted extra and pushed accepted events out as missing.
func TestUnknownEventsStoredAfterAllAreNotWrong(t *testing.T) {
	code, v, r, stdout := unknownRun(t, testrelay.Config{Verify: true, NeverOKAfter: 45})
	// The phase stops early after a few unanswered EVENTs in a row; those
	// sent are unknown, the rest not run.
	n := int64(r.Stats().Unanswered)
	if n == 0 {
		t.Fatal("the relay left no EVENT unanswered")
	}
	if code != judge.Incomplete {
		t.Errorf("exit %d, want %d (incomplete: timed-out OKs)\n%s", code, judge.Incomplete, stdout)
	}
	if v.Status() != results.VerificationPassed || v.Missing != 0 || v.Extra != 0 {
		t.Errorf("verification %s: missing %d extra %d; notes %q", v.Status(), v.Missing, v.Extra, v.Notes)
	}
	if v.StoredUnknown <= 0 || v.StoredUnknown > n {
		t.Errorf("stored_unknown %d, want 1..%d (the answers hold some of the unanswered events)", v.StoredUnknown, n)
	}
	if !strings.Contains(strings.Join(v.Notes, "\n"), "events whose OK never came (timed out, connection lost or cancelled) were stored after all") {
		t.Errorf("no note names the unknown events: %q", v.Notes)
	}
}

// A relay that loses the events it never answers is not failed for them
// either: unseen unknown events are never owed.
func TestUnknownEventsLostAreNotOwed(t *testing.T) {
	code, v, r, stdout := unknownRun(t, testrelay.Config{Verify: true, NeverOKAfter: 45, LoseUnanswered: true})
	if s := r.Stats(); s.Unanswered == 0 || s.Dropped != s.Unanswered {
		t.Fatalf("the relay left %d unanswered and lost %d, want as many, not 0", s.Unanswered, s.Dropped)
	}
	if code != judge.Incomplete {
		t.Errorf("exit %d, want %d\n%s", code, judge.Incomplete, stdout)
	}
	if v.Status() != results.VerificationPassed || v.StoredUnknown != 0 {
		t.Errorf("verification %s, stored_unknown %d; notes %q", v.Status(), v.StoredUnknown, v.Notes)
	}
}

// Unknown events excuse nothing else: a relay that returns them and also
// loses accepted events (OK true, not stored) still fails.
func TestUnknownEventsDoNotExcuseMissingAccepted(t *testing.T) {
	code, v, _, stdout := unknownRun(t, testrelay.Config{Verify: true, NeverOKAfter: 45, DropEvery: 10})
	if code != judge.WrongAnswers {
		t.Errorf("exit %d, want %d (wrong answers)\n%s", code, judge.WrongAnswers, stdout)
	}
	if v.Status() != results.VerificationFailed || v.Missing == 0 || v.StoredUnknown == 0 {
		t.Errorf("verification %s: missing %d, stored_unknown %d; notes %q", v.Status(), v.Missing, v.StoredUnknown, v.Notes)
	}
}

// `limit` is a SHOULD: a relay that answers every match whatever the limit
// is named with the count, not failed; one that also loses accepted events
// still fails.
func TestOverLimitAnswersNamedNotFailed(t *testing.T) {
	code, v, _, stdout := unknownRun(t, testrelay.Config{Verify: true, IgnoreLimit: true}, "--query-limit", "5")
	if code != judge.Passed {
		t.Errorf("exit %d, want 0\n%s", code, stdout)
	}
	if v.Status() != results.VerificationPassed || v.OverLimit == 0 || v.Missing != 0 || v.Extra != 0 {
		t.Errorf("verification %s: over_limit %d missing %d extra %d; notes %q", v.Status(), v.OverLimit, v.Missing, v.Extra, v.Notes)
	}
	if !strings.Contains(strings.Join(v.Notes, "\n"), "Relays SHOULD use the `limit` value") {
		t.Errorf("no note quotes NIP-01 on limit: %q", v.Notes)
	}
	code, v, _, stdout = unknownRun(t, testrelay.Config{Verify: true, IgnoreLimit: true, DropEvery: 7}, "--query-limit", "5")
	if code != judge.WrongAnswers || v.Missing == 0 || v.OverLimit == 0 {
		t.Errorf("over the limit and losing events: exit %d, missing %d, over_limit %d\n%s", code, v.Missing, v.OverLimit, stdout)
	}
}

// TestLifecycleAgainstCorruptRelayStopsEarly: a relay that corrupts the
// signature or id of every event it sends had each lifecycle read-back
// retried to --read-timeout (52 s for 30 events). A run of wrong answers
// now stops the phase with one line; the invalid answers make it exit 3.
// Asserted on the REQs the relay got, never on time (the timeouts are
// generous: only hang guards).
func TestLifecycleAgainstCorruptRelayStopsEarly(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{Verify: true, InvalidEvery: 1})
	res, f, _ := runRecorded(t, relaybenchBin(t), "lifecycle", "--timing-events", "30", "--timeout", "20s", "--read-timeout", "60s", "--relay", r.URL(),
		"--cache-dir", t.TempDir())
	if res.code != judge.WrongAnswers {
		t.Errorf("exit %d, want %d (wrong answers)\nstderr: %s", res.code, judge.WrongAnswers, lastLines(res.stderr, 5))
	}
	if !strings.Contains(res.stdout, "STOPPED EARLY:") || !strings.Contains(res.stdout, "failed verification") {
		t.Errorf("no STOPPED EARLY line naming the wrong answers:\n%s", lastLines(res.stdout, 30))
	}
	checkAccounts(t, f)
	// Without the stop: 30 events, each read retried for 60 s with a
	// backoff capped at 50 ms, over a thousand REQs per event.
	t.Logf("the relay got %d REQs", r.Stats().REQs)
	if n := r.Stats().REQs; n > 20 {
		t.Errorf("the relay got %d REQs: the phase did not stop after a run of wrong answers", n)
	}
}
