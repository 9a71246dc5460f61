package main

import (
	"regexp"
	"strings"
	"testing"
)

// A corpus signed once is loaded from the cache the next time, and then
// nothing says it is being signed.
func TestCorpusFromCacheIsQuiet(t *testing.T) {
	t.Parallel() // beside the package's other parallel tests: its own cache and out dirs
	cache, out := t.TempDir(), t.TempDir()
	args := []string{"run", "--events", "3000", "--queries", "2", "--cache-dir", cache, "--out", out, "--anchor", testAnchor}
	first := runCLI(t, args...)
	if first.code != 0 || !strings.Contains(first.stderr, "Signing 3,000 events") || !strings.Contains(first.stderr, "Signed 3,000 of 3,000 events...") {
		t.Fatalf("first run: exit %d, no signing progress:\n%s", first.code, first.stderr)
	}
	second := runCLI(t, args...)
	if second.code != 0 || strings.Contains(second.stderr, "Signing ") || strings.Contains(second.stderr, "Signed ") {
		t.Fatalf("second run (from the cache): exit %d, signing said:\n%s", second.code, second.stderr)
	}
	if !strings.Contains(second.stdout, "from cache") {
		t.Errorf("the summary does not say the corpus came from the cache:\n%s", second.stdout)
	}
}

// Every workload's progress names what it counts when it starts, so each
// count line says done of total and of what ("Ran 10 of 100 COUNT
// queries...", "Timed 20 of 200 events..."), never "Done 20...".
func TestEveryPhaseNamesItsUnit(t *testing.T) {
	t.Parallel()
	res := runCLI(t, "run", "--events", "300", "--queries", "10", "--workloads", "count,negentropy,lifecycle,search",
		"--anchor", testAnchor, "--cache-dir", t.TempDir(), "--out", t.TempDir(), "--quiet")
	if res.code != 0 {
		t.Fatalf("exit %d:\n%s", res.code, res.stderr)
	}
	counted := regexp.MustCompile(`^  [A-Z][a-z]+( back)? [0-9,]+ of [0-9,]+ [a-zA-Z]`)
	for _, l := range strings.Split(res.stderr, "\n") {
		if strings.HasPrefix(l, "  ") && !counted.MatchString(l) {
			t.Errorf("a progress line without its total or unit: %q", l)
		}
	}
	for _, want := range []string{"  Ran 10 of 100 COUNT queries...", " search queries...", " rounds (3 scenarios × ", "  Timed 10 of 100 events..."} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, res.stderr)
		}
	}
}
