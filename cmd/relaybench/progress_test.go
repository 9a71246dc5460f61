package main

import (
	"fmt"
	"strings"
	"testing"
)

// A progress line never reads "Executed 1 queries...": below 20 the plain
// lines (every tenth of the total) can count 1. Each says the total:
// compare's read "Executed 2 queries..." where run's read "Executed 1 of
// 10 queries...".
func TestCountFmt(t *testing.T) {
	for _, c := range []struct {
		total int64
		done  int64
		want  string
	}{
		{1, 1, "Executed 1 query..."},
		{5, 1, "Executed 1 of 5 queries..."},
		{19, 1, "Executed 1 of 19 queries..."},
		{20, 2, "Executed 2 of 20 queries..."},
		{100, 10, "Executed 10 of 100 queries..."},
		{10000, 1000, "Executed 1000 of 10,000 queries..."},
	} {
		if got := fmt.Sprintf(countFmt("Executed", "query", "queries", c.total), c.done); got != c.want {
			t.Errorf("total %d: %q, want %q", c.total, got, c.want)
		}
	}
}

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
