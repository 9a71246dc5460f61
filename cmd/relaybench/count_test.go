package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/fakenip"
	"github.com/relaybench/relaybench/results"
)

// nipRun runs a NIP subcommand (count, search) or run with --workloads and
// returns its exit status, the stderr and the results file.
func nipRun(t *testing.T, args ...string) (cliResult, *results.File) {
	t.Helper()
	res, f, _ := runRecorded(t, relaybenchBin(t),
		append(args, "--events", "300", "--anchor", testAnchor, "--cache-dir", t.TempDir(), "--quiet")...)
	return res, f
}

func nipPhase(t *testing.T, f *results.File, name string) *results.Phase {
	t.Helper()
	if len(f.Runs) != 1 {
		t.Fatalf("%d runs", len(f.Runs))
	}
	ph := f.Runs[0].Phase(name)
	if ph == nil {
		t.Fatalf("no %s phase: %+v", name, f.Runs[0].Phases)
	}
	return ph
}

// The embedded relay (khatru, native store) announces and answers NIP-45
// and NIP-50: every count and every search checked, exit 0.
func TestCountAndSearchEmbedded(t *testing.T) {
	res, f := nipRun(t, "count", "--queries", "24")
	if res.code != 0 {
		t.Fatalf("count: exit %d\n%s", res.code, lastLines(res.stderr, 20))
	}
	ph := nipPhase(t, f, "count")
	if v := ph.Verification; v == nil || !v.Passed || !v.Verified || v.Checked != 24 || ph.Counts["count_exact"] != 24 {
		t.Fatalf("count verification %+v counts %v", ph.Verification, ph.Counts)
	}

	res, f = nipRun(t, "search")
	if res.code != 0 {
		t.Fatalf("search: exit %d\n%s", res.code, lastLines(res.stderr, 20))
	}
	ph = nipPhase(t, f, "search")
	if v := ph.Verification; v == nil || !v.Passed || !v.Verified || v.Checked != 100 || ph.Skipped != "" {
		t.Fatalf("search verification %+v params %v notes %q", ph.Verification, ph.Params, ph.Notes)
	}
	if strings.Contains(res.stderr, "skipped") {
		t.Errorf("search skipped on the embedded relay:\n%s", res.stderr)
	}
}

// --workloads count,search after publish and query: one results file with
// both phases.
func TestRunWorkloadsCountSearch(t *testing.T) {
	res, f := nipRun(t, "run", "--queries", "12", "--workloads", "count,search")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, lastLines(res.stderr, 20))
	}
	if ph := nipPhase(t, f, "count"); !ph.Verification.Passed || ph.Counts["counts"] != 100 {
		t.Errorf("count %v %+v", ph.Counts, ph.Verification)
	}
	if ph := nipPhase(t, f, "search"); ph.Skipped != "" || ph.Verification == nil || !ph.Verification.Passed {
		t.Errorf("search on the embedded relay: %+v", ph)
	}
}

// A relay whose counts are one too many fails verification: exit 3; one
// that announces neither NIP is skipped: the work asked for did not run,
// exit 4 naming the skip; a relay that cannot be reached is an error
// (exit 1), never a skip.
func TestCountWrongAnswerExit3(t *testing.T) {
	bad := fakenip.Start(fakenip.Config{CountDelta: 1})
	defer bad.Close()
	res, f := nipRun(t, "count", "--relay", bad.URL, "--queries", "12")
	if res.code != 3 {
		t.Fatalf("exit %d, want 3\n%s", res.code, lastLines(res.stderr, 20))
	}
	if ph := nipPhase(t, f, "count"); ph.Verification.Extra != 12 || ph.Counts["count_wrong"] != 12 {
		t.Errorf("extra %d counts %v", ph.Verification.Extra, ph.Counts)
	}
	if !strings.Contains(res.stderr, "WRONG ANSWERS") {
		t.Errorf("stderr lacks the verdict:\n%s", res.stderr)
	}

	good := fakenip.Start(fakenip.Config{})
	defer good.Close()
	if res, f := nipRun(t, "search", "--relay", good.URL, "--queries", "12"); res.code != 0 || !nipPhase(t, f, "search").Verification.Passed {
		t.Errorf("search on a right relay: exit %d\n%s", res.code, lastLines(res.stderr, 20))
	}

	none := fakenip.Start(fakenip.Config{NIPs: []int{1, 11}})
	defer none.Close()
	for _, cmd := range []string{"count", "search"} {
		res, f := nipRun(t, cmd, "--relay", none.URL)
		if res.code != 4 || nipPhase(t, f, cmd).Skipped == "" || f.Verdict == nil ||
			!strings.Contains(strings.Join(f.Verdict.Reasons, "\n"), cmd+": skipped: the relay does not announce NIP-") {
			t.Errorf("%s on a relay without the NIP: exit %d, verdict %+v\n%s", cmd, res.code, f.Verdict, lastLines(res.stderr, 20))
		}
	}
	for _, cmd := range []string{"count", "search", "sync"} {
		res := runBin(t, relaybenchBin(t), 2*time.Minute, cmd, "--relay", "ws://127.0.0.1:1", "--events", "100",
			"--cache-dir", "off", "--out", t.TempDir(), "--no-progress")
		if res.code != 1 || !strings.Contains(res.stderr, "unreachable") || strings.Contains(res.stderr, "skipped") {
			t.Errorf("%s on an unreachable relay: exit %d, want 1 naming it unreachable\n%s", cmd, res.code, lastLines(res.stderr, 20))
		}
	}
}

// Real relays from the harness: strfry answers NIP-45 (every count
// checked), Wisp NIP-50; nostr-rs-relay announces neither and is skipped
// (exit 4: the count asked for did not run).
func TestCountSearchSharedRelays(t *testing.T) {
	t.Parallel() // beside the package's other parallel tests: the relays start on free ports, in their own run dirs
	dir := sharedBinDir(t)
	for _, tc := range []struct{ cmd, relay string }{
		{"count", "strfry"}, {"search", "wisp"}, {"count", "wisp"}, {"count", "nostr-rs-relay-sqlite"},
	} {
		if _, err := os.Stat(filepath.Join(dir, tc.relay)); err != nil {
			t.Logf("%s: no binary in %s: skipped", tc.relay, dir)
			continue
		}
		res, f := nipRun(t, tc.cmd, "--relay", tc.relay, "--bin-dir", dir, "--queries", "30")
		if want := map[bool]int{false: 0, true: 4}[tc.relay == "nostr-rs-relay-sqlite"]; res.code != want {
			t.Errorf("%s on %s: exit %d, want %d\n%s", tc.cmd, tc.relay, res.code, want, lastLines(res.stderr, 20))
			continue
		}
		ph := nipPhase(t, f, tc.cmd)
		if tc.relay == "nostr-rs-relay-sqlite" {
			if ph.Skipped == "" {
				t.Errorf("%s on %s not skipped: %+v", tc.cmd, tc.relay, ph)
			}
			continue
		}
		if v := ph.Verification; v == nil || !v.Passed || !v.Verified || v.Checked != 30 {
			t.Errorf("%s on %s: verification %+v", tc.cmd, tc.relay, v)
		}
	}
}
