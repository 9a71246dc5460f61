package judge

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// thresholdFile is a passing run with the given threshold results and, with
// wrong, a failed verification.
func thresholdFile(wrong bool, ts ...results.ThresholdResult) *results.File {
	ph := results.Phase{Name: "query", Verification: &results.Verification{Verified: true, Passed: !wrong, Checked: 1, Missing: b2i(wrong)}}
	return &results.File{Runs: []results.Run{{Relay: results.Relay{Name: "r"}, Phases: []results.Phase{ph}}}, Thresholds: ts}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func TestThresholdStatuses(t *testing.T) {
	pass := results.ThresholdResult{Threshold: "publish.rate>1", Relay: "r", Figure: "publish.rate", Op: ">", Value: 5, Limit: 1, Unit: "1/s", Passed: true}
	fail := results.ThresholdResult{Threshold: "publish.ok.p99<20ms", Relay: "r", Figure: "publish.ok.p99", Op: "<", Value: 31e6, Limit: 20e6, Unit: "ns"}
	bad := results.ThresholdResult{Threshold: "publish.ok.p98<20ms", Relay: "r", Error: "no figure publish.ok.p98 in the results"}
	for _, c := range []struct {
		name   string
		f      *results.File
		intr   bool
		status int
		reason string
	}{
		{"all met", thresholdFile(false, pass), false, Passed, ""},
		{"one not met", thresholdFile(false, pass, fail), false, ThresholdsFailed, "threshold publish.ok.p99<20ms not met: 31.0ms"},
		{"unknown figure", thresholdFile(false, fail, bad), false, Usage, "no figure publish.ok.p98"},
		{"wrong answers win", thresholdFile(true, fail), false, WrongAnswers, "threshold publish.ok.p99<20ms not met"},
		{"interrupted wins", thresholdFile(false, fail), true, Interrupted, "interrupted"},
	} {
		v := Judge(c.f, c.intr)
		if v.Status != c.status || v.Outcome != Name(c.status) {
			t.Errorf("%s: status %d %q, want %d", c.name, v.Status, v.Outcome, c.status)
		}
		if c.reason != "" && !strings.Contains(strings.Join(v.Reasons, "|"), c.reason) {
			t.Errorf("%s: reasons %q lack %q", c.name, v.Reasons, c.reason)
		}
	}
	if Name(ThresholdsFailed) != "thresholds failed" || ThresholdsFailed == WrongAnswers || ThresholdsFailed == Incomplete || ThresholdsFailed == Error {
		t.Error("status 5 is not distinct")
	}
	if s := Summary(Judge(thresholdFile(false, fail), false)); !strings.HasPrefix(s, "THRESHOLDS FAILED: threshold publish.ok.p99<20ms") {
		t.Errorf("Summary = %q", s)
	}
}
