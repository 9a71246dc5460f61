package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// The README's :7777 relay after its earlier examples: a run with queries
// against a relay that already holds events by the same keys (every
// example uses seed 1), some of them newer versions of this run's
// replaceable events, passes: the relay answered right. It read WRONG
// ANSWERS (missing 18, extra 5) when a newer version the relay held,
// never returned, hid the run's own.
func TestRunAgainstRelayWithEarlierData(t *testing.T) {
	tmp := t.TempDir()
	url := embeddedRelay(t, tmp)
	cache := filepath.Join(tmp, "cache")
	if code, _, stderr := runHere(t, "run", "--relay", url, "--events", "5000", "--skip-query", "--cache-dir", cache,
		"--no-progress", "--json", filepath.Join(tmp, "fill.json")); code != 0 {
		t.Fatalf("filling the relay: exit %d: %s", code, stderr)
	}
	out := filepath.Join(tmp, "run.json")
	code, stdout, stderr := runHere(t, "run", "--relay", url, "--events", "2000", "--queries", "60", "--cache-dir", cache,
		"--no-progress", "--json", out)
	f, err := results.Read(out)
	if err != nil {
		t.Fatalf("exit %d, no results: %v\n%s", code, err, stderr)
	}
	r := f.Runs[0]
	v := r.Phase("query").Verification
	if code != 0 || v.Status() != results.VerificationPassed {
		t.Fatalf("exit %d, verification %s (missing %d, extra %d): %q\n%s", code, v.Status(), v.Missing, v.Extra, v.Notes, lastLines(stdout, 20))
	}
	if r.Relay.Before != results.BeforeHeld || v.HeldBefore == 0 || !strings.Contains(stdout, "held events before this run") {
		t.Fatalf("before %q held_before %d; the run note missing:\n%s", r.Relay.Before, v.HeldBefore, lastLines(stdout, 20))
	}
}
