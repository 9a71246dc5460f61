package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestLiveRelayReachedBeforeSigning: every live command given a --relay URL
// nothing answers ends at once with the error of the run (exit 1, one
// "relaybench: ERROR: dial URL: unreachable" line, the results file
// written) before any key or event is signed: nothing in the corpus cache,
// no signing line. They used to sign the corpus (mixed, a query load) or
// the keys and the fresh events (load, find-max, subscribe, burst, …)
// first; find-max then said INCOMPLETE "no rate passed" (exit 4).
func TestLiveRelayReachedBeforeSigning(t *testing.T) {
	url := closedURL(t)
	for _, args := range [][]string{
		{"mixed", "--events", "3000"},
		{"load", "--events", "3000", "--load-kind", "query"},
		{"load"},
		{"find-max"},
		{"subscribe"},
		{"burst"},
		{"sweep"},
		{"conformance", "--under-load", "100"},
	} {
		cache, out := t.TempDir(), t.TempDir()
		path := filepath.Join(out, "results.json")
		code, stdout, stderr := runHere(t, append(args, "--relay", url, "--cache-dir", cache, "--json", path, "--quiet")...)
		want := "relaybench: ERROR: dial " + url + ": unreachable"
		if code != 1 || stdout != "" || !strings.HasPrefix(lastLines(stderr, 1), want) {
			t.Fatalf("%v: exit %d, want 1 with %q\n%s%s", args, code, want, stdout, lastLines(stderr, 20))
		}
		if n := strings.Count(stderr, "relaybench: "); n != 1 {
			t.Errorf("%v: %d error lines, want 1\n%s", args, n, stderr)
		}
		if strings.Contains(strings.ToLower(stderr), "signing ") {
			t.Errorf("%v: signed before finding the relay unreachable\n%s", args, stderr)
		}
		wantEmptyDir(t, cache)
		if f := readResults(t, path); len(f.Runs) != 1 || len(f.Runs[0].Phases) != 0 {
			t.Errorf("%v: want the run, without a phase, in the results file", args)
		}
	}
}
