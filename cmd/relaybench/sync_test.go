package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testkit"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/workload"
)

// TestCompareNegentropyStrfry runs `compare --relays strfry,khatru-memory
// --workloads negentropy`: strfry announces NIP-77 and must converge on the
// exact sets in every scenario; the embedded relay with the memory store
// does not announce it and is skipped with one note: the comparison exits 4
// naming that relay (the negentropy asked of it did not run).
func TestCompareNegentropyStrfry(t *testing.T) {
	t.Parallel() // beside the package's other parallel tests: the relays start on free ports, in their own run dirs
	dir := sharedBinWith(t, "strfry")
	res, f, _ := runRecorded(t, relaybenchBin(t), "compare", "--bin-dir", dir, "--relays", "strfry,khatru-memory",
		"--events", "3000", "--skip-query", "--workloads", "negentropy", "--anchor", testAnchor,
		"--cache-dir", t.TempDir(), "--quiet")
	if res.code != 4 {
		t.Errorf("exit %d, want 4\n%s", res.code, lastLines(res.stderr, 30))
	}
	if f.Verdict == nil || len(f.Verdict.Reasons) != 1 || !strings.HasPrefix(f.Verdict.Reasons[0], "khatru-memory negentropy: skipped: ") {
		t.Errorf("verdict %+v, want one reason naming khatru-memory's skip", f.Verdict)
	}
	if len(f.Runs) != 2 {
		t.Fatalf("%d runs", len(f.Runs))
	}
	strfry, memory := f.Runs[0], f.Runs[1]
	for _, s := range []string{workload.NegInitial, workload.NegDelta, workload.NegSteady} {
		ph := strfry.Phase("negentropy/" + s)
		if ph == nil {
			t.Errorf("strfry: no negentropy/%s phase", s)
			continue
		}
		a := ph.Account(workload.OpReconcile)
		if a == nil || a.Accepted != 5 || a.Requested != 5 {
			t.Errorf("strfry %s: account %+v, errors %v", s, a, ph.Errors)
			continue
		}
		if v := ph.Verification; v == nil || !v.Verified || !v.Passed || v.Checked < 5 {
			t.Errorf("strfry %s: verification %+v", s, v)
		}
		expNeed, _ := ph.Params["expected_need"].(float64)
		expHave, _ := ph.Params["expected_have"].(float64)
		if ph.Counts["need_ids"] != 5*int64(expNeed) || ph.Counts["have_ids"] != 5*int64(expHave) {
			t.Errorf("strfry %s: need %d have %d, want 5×%v and 5×%v", s, ph.Counts["need_ids"], ph.Counts["have_ids"], expNeed, expHave)
		}
		if ph.Latency["sync"] == nil || ph.Latency["sync"].Count != 5 {
			t.Errorf("strfry %s: sync latency %+v", s, ph.Latency["sync"])
		}
		switch s {
		case workload.NegInitial:
			if expNeed < 500 || expHave < 250 {
				t.Errorf("strfry initial: expected need %v, have %v: the scenario is not a partial overlap", expNeed, expHave)
			}
		case workload.NegDelta:
			if expNeed != 100 || ph.Counts["read_back_events"] != 100 {
				t.Errorf("strfry delta: expected need %v, read back %d", expNeed, ph.Counts["read_back_events"])
			}
		case workload.NegSteady:
			if ph.Counts["round_trips_max"] != 1 {
				t.Errorf("strfry steady state: %d round trips", ph.Counts["round_trips_max"])
			}
		}
	}
	var skipped *results.Phase
	for i := range memory.Phases {
		if strings.HasPrefix(memory.Phases[i].Name, "negentropy") {
			if skipped != nil {
				t.Errorf("khatru-memory: more than one negentropy phase")
			}
			skipped = &memory.Phases[i]
		}
	}
	if skipped == nil || len(skipped.Notes) != 1 || !strings.HasPrefix(skipped.Notes[0], "skipped: the relay does not announce NIP-77") || len(skipped.Accounts) != 0 {
		t.Errorf("khatru-memory: want one skipped negentropy phase, got %+v", skipped)
	}
}

// TestSyncEmbeddedDefault: sync on the default embedded relay (native
// store) converges in every round, the reconciliations needing a second
// round trip included (khatru alone lost those sessions: NEG-ERR CLOSED).
func TestSyncEmbeddedDefault(t *testing.T) {
	res, f, _ := runRecorded(t, relaybenchBin(t), "sync", "--events", "2000", "--anchor", testAnchor,
		"--cache-dir", "off", "--quiet")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, lastLines(res.stderr, 30))
	}
	multi := false
	for _, s := range []string{workload.NegInitial, workload.NegDelta, workload.NegSteady} {
		ph := f.Runs[0].Phase("negentropy/" + s)
		if ph == nil {
			t.Fatalf("no negentropy/%s phase", s)
		}
		if a := ph.Account(workload.OpReconcile); a == nil || a.Accepted != 5 || a.Requested != 5 {
			t.Errorf("%s: account %+v, errors %v", s, a, ph.Errors)
		}
		if v := ph.Verification; v == nil || !v.Verified || !v.Passed || v.Checked < 5 {
			t.Errorf("%s: verification %+v", s, v)
		}
		multi = multi || ph.Counts["round_trips_max"] >= 2
	}
	if !multi {
		t.Errorf("no reconciliation took two round trips: the test does not cover NEG-MSG after NEG-OPEN")
	}
}

// TestSyncSkipsRelayWithoutNIP77: the sync command on a relay that does not
// announce NIP-77 skips the reconciliation with one line, does not publish
// for nothing (a run note says so), and exits 4: the reconciliation asked
// for did not run.
func TestSyncSkipsRelayWithoutNIP77(t *testing.T) {
	res, f, _ := runRecorded(t, relaybenchBin(t), "sync", "--store", "memory", "--events", "300", "--anchor", testAnchor,
		"--cache-dir", "off")
	if res.code != 4 {
		t.Fatalf("exit %d, want 4\n%s", res.code, lastLines(res.stderr, 30))
	}
	body, verdict, _ := strings.Cut(res.stdout, "Verdict:")
	if n := strings.Count(body, "skipped: the relay does not announce NIP-77"); n != 1 {
		t.Errorf("the summary names the skip %d times before the verdict:\n%s", n, res.stdout)
	}
	if !strings.Contains(verdict, "INCOMPLETE (exit 4)") || !strings.Contains(verdict, "negentropy: skipped: the relay does not announce NIP-77") {
		t.Errorf("the verdict does not name the skip:\n%s", res.stdout)
	}
	r := f.Runs[0]
	if len(r.Phases) != 1 || r.Phases[0].Name != "negentropy" {
		t.Fatalf("phases: %v", r.Phases)
	}
	if !strings.Contains(strings.Join(r.Notes, "\n"), "corpus not published: no workload of this run can run on this relay") {
		t.Errorf("no note on the corpus not published: %q", r.Notes)
	}
}

// TestSyncRefusesRelayHoldingEvents: sync against a --relay that already
// holds events (here what a run of 300 published before) would count them as ids
// the relay should not have (exit 3 for a correct relay): it is refused
// before the corpus is signed, with one line naming the problem and the
// way out, exit 1, nothing published and no results file.
func TestSyncRefusesRelayHoldingEvents(t *testing.T) {
	bin := relaybenchBin(t)
	url := testkit.EmbeddedURL(t, "native")
	if res := runBin(t, bin, 2*time.Minute, "run", "--relay", url, "--events", "300", "--skip-query", "--anchor", testAnchor,
		"--cache-dir", "off", "--quiet", "--out", t.TempDir(), "--no-progress"); res.code != 0 {
		t.Fatalf("filling the relay: exit %d\n%s", res.code, lastLines(res.stderr, 20))
	}
	out := t.TempDir()
	res := runBin(t, bin, 2*time.Minute, "sync", "--relay", url, "--events", "200", "--anchor", testAnchor,
		"--cache-dir", "off", "--out", out, "--no-progress")
	if res.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", res.code, lastLines(res.stderr, 20))
	}
	if lines := strings.Split(strings.TrimSpace(res.stderr), "\n"); len(lines) != 1 ||
		!regexp.MustCompile(`already holds [1-9][0-9,]* events`).MatchString(lines[0]) || !strings.Contains(lines[0], "needs an empty relay") ||
		!strings.Contains(lines[0], "relay serve") {
		t.Errorf("stderr, want one line naming the events held and a fresh relay:\n%s", res.stderr)
	}
	if files, _ := filepath.Glob(filepath.Join(out, "*.json")); len(files) != 0 {
		t.Errorf("results files written for a refused run: %v", files)
	}
}
