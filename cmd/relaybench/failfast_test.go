package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
)

// TestLifecycleAgainstCorruptRelayStopsEarly: a relay that corrupts the
// signature or id of every event it sends had each lifecycle read-back
// retried to --read-timeout (52 s for 30 events). A run of wrong answers
// now stops the phase with one line; the invalid answers make it exit 3.
// Asserted on the REQs the relay got, never on time (the timeouts are
// generous: only hang guards).
func TestLifecycleAgainstCorruptRelayStopsEarly(t *testing.T) {
	r := testrelay.New(testrelay.Config{Verify: true, InvalidEvery: 1})
	defer r.Close()
	out := t.TempDir()
	path := filepath.Join(out, "r.json")
	res := runCLI(t, "lifecycle", "--timing-events", "30", "--timeout", "20s", "--read-timeout", "60s", "--relay", r.URL(),
		"--cache-dir", t.TempDir(), "--out", out, "--json", path, "--no-progress")
	if res.code != judge.WrongAnswers {
		t.Errorf("exit %d, want %d (wrong answers)\nstderr: %s", res.code, judge.WrongAnswers, lastLines(res.stderr, 5))
	}
	if !strings.Contains(res.stdout, "STOPPED EARLY:") || !strings.Contains(res.stdout, "failed verification") {
		t.Errorf("no STOPPED EARLY line naming the wrong answers:\n%s", lastLines(res.stdout, 30))
	}
	f, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	checkAccounts(t, f)
	// Without the stop: 30 events, each read retried for 60 s with a
	// backoff capped at 50 ms, over a thousand REQs per event.
	t.Logf("the relay got %d REQs", r.Stats().REQs)
	if n := r.Stats().REQs; n > 20 {
		t.Errorf("the relay got %d REQs: the phase did not stop after a run of wrong answers", n)
	}
}
