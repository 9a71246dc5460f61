package main

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/relay/embedded"
)

// needCgoStores skips a test that runs the lmdb or sqlite3 store when this
// build leaves them out.
func needCgoStores(t *testing.T) {
	t.Helper()
	if len(embedded.NotBuilt) > 0 {
		t.Skip("skipping: needs the lmdb and sqlite3 stores (go test -tags cgostores)")
	}
}

// TestLeftOutStoresSaidOnce: compare asked for khatru-lmdb and
// khatru-sqlite3 by a build without their stores skips both with a short
// reason, says how to build them in once (not at every mention of each
// skip), says each reason once on stderr, and its last line (the verdict's
// reasons) names both skips, pointing back to those lines.
func TestLeftOutStoresSaidOnce(t *testing.T) {
	if len(embedded.NotBuilt) == 0 {
		t.Skip("skipping: this build has the lmdb and sqlite3 stores")
	}
	out := t.TempDir()
	code, _, stderr := runHere(t, "compare", "--relays", "khatru-lmdb,khatru-sqlite3", "--events", "10", "--queries", "1",
		"--cache-dir", "off", "--out", out, "--no-progress")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (no relay asked for ran)\n%s", code, stderr)
	}
	if n := strings.Count(stderr, "needs cgo"); n != 1 {
		t.Errorf("how to build the stores in said %d times, want once:\n%s", n, stderr)
	}
	for _, want := range []string{"khatru-lmdb will be skipped: this relaybench has no lmdb store: build relaybench with -tags cgostores",
		"khatru-sqlite3 will be skipped: this relaybench has no sqlite3 store: build relaybench with -tags cgostores"} {
		if n := strings.Count(stderr, want); n != 1 {
			t.Errorf("%q said %d times, want once:\n%s", want, n, stderr)
		}
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	last := lines[len(lines)-1]
	for _, want := range []string{"not run: khatru-lmdb (skipped, as said at the start)", "not run: khatru-sqlite3 (skipped, as said at the start)"} {
		if !strings.Contains(last, want) {
			t.Errorf("last line %q: want %q in it", last, want)
		}
	}
}

// TestStoreNotBuiltIsUsage: --store lmdb or sqlite3 by a build without
// them is a value this binary cannot honour: exit 2, one line naming the
// flag and how to build them in, before any work.
func TestStoreNotBuiltIsUsage(t *testing.T) {
	if len(embedded.NotBuilt) == 0 {
		t.Skip("skipping: this build has the lmdb and sqlite3 stores")
	}
	code, _, stderr := runHere(t, "run", "--store", "lmdb", "--events", "10", "--queries", "1", "--cache-dir", "off",
		"--out", t.TempDir(), "--no-progress")
	if code != 2 || strings.TrimSpace(stderr) != "relaybench: --store lmdb: this relaybench has no lmdb store: build relaybench with -tags cgostores" {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
