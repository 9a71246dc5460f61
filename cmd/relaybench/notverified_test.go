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
	r := testrelay.New(testrelay.Config{Verify: true, RefuseAllREQs: true})
	defer r.Close()
	out := t.TempDir()
	path, junit := filepath.Join(out, "r.json"), filepath.Join(out, "junit.xml")
	res := runCLI(t, "run", "--events", "50", "--queries", "10", "--concurrency", "2", "--timeout", "1s", "--relay", r.URL(),
		"--cache-dir", t.TempDir(), "--out", out, "--json", path, "--no-progress", "--junit", junit,
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
	f, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
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

// TestEveryWorkloadNotVerifiedWhenREQsRefused: against a relay that
// refuses every REQ, no workload exits 0, and no phase that checked no
// answer says its verification passed.
func TestEveryWorkloadNotVerifiedWhenREQsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the binary once per workload")
	}
	bin := relaybenchBin(t)
	cache := t.TempDir()
	for _, w := range workloadOrder {
		t.Run(w, func(t *testing.T) {
			t.Parallel()
			res, f, r := runOnTestRelay(t, bin, cache, testrelay.Config{Verify: true, RefuseAllREQs: true}, workloadArgs[w])
			checkAccounts(t, f)
			for _, ph := range f.Runs[0].Phases {
				if v := ph.Verification; v != nil && v.Checked == 0 && (v.Passed || v.State == results.VerificationPassed) {
					t.Errorf("%s: nothing checked, yet passed: %+v", ph.Name, v)
				}
			}
			if r.Stats().REQs > 0 && res.code == judge.Passed {
				t.Errorf("%d REQs all refused, yet exit 0\nstdout: %s", r.Stats().REQs, lastLines(res.stdout, 15))
			}
		})
	}
}
