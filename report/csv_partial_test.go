package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// TestCSVPartialVerificationState: a phase whose answers were checked for
// validity and filter match alone (nothing published, -skip-publish) is
// "partial" in verification_state where its status says "partly verified"
// and the summary "PASSED (partial)": one vocabulary, not "passed" beside
// "partly verified".
func TestCSVPartialVerificationState(t *testing.T) {
	f := singleFile()
	p := &f.Runs[0].Phases[1]
	p.Verification = &results.Verification{Checked: 20, Returned: 200, Passed: true}
	p.Verification.Settle()
	p.Groups = nil
	var b bytes.Buffer
	if err := Summary(&b, f); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "PASSED (partial)") {
		t.Fatalf("summary does not say PASSED (partial):\n%s", b.String())
	}
	_, rows := csvOf(t, f)
	found := false
	for _, r := range rows {
		if r["phase"] != p.Name || r["group"] != "" {
			continue
		}
		found = true
		if r["verification_state"] != "partial" || !strings.Contains(r["status"], "partly verified") || r["verification_passed"] != "true" {
			t.Errorf("CSV row: state %q status %q passed %q", r["verification_state"], r["status"], r["verification_passed"])
		}
	}
	if !found {
		t.Fatal("no CSV row for the phase")
	}
}
