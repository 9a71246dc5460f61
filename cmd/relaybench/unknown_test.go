package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
)

// unknownRun runs 60 events on one connection (corpus order, so which
// events go unanswered is fixed) and 30 queries against a test relay, and
// returns the exit status, the query phase's verification and stdout.
func unknownRun(t *testing.T, cfg testrelay.Config, extra ...string) (int, *results.Verification, *testrelay.Relay, string) {
	t.Helper()
	r := testrelay.New(cfg)
	t.Cleanup(r.Close)
	out := t.TempDir()
	path := filepath.Join(out, "r.json")
	args := append([]string{"run", "--events", "60", "--queries", "30", "--concurrency", "1", "--timeout", "1s",
		"--anchor", testAnchor, "--relay", r.URL(), "--cache-dir", t.TempDir(), "--out", out, "--json", path, "--no-progress"}, extra...)
	res := runCLI(t, args...)
	f, err := results.Read(path)
	if err != nil {
		t.Fatalf("exit %d: %v\nstderr: %s", res.code, err, lastLines(res.stderr, 10))
	}
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
