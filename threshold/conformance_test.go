package threshold

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

func checkRun(relay string, st ...results.CheckStatus) results.Run {
	r := results.Run{Relay: results.Relay{Name: relay}}
	for i, s := range st {
		r.Conformance = append(r.Conformance, results.Check{ID: []string{"req.limit-zero", "nip09.deletion"}[i], Status: s})
	}
	return r
}

// TestConformanceThresholds: a check's status and the tallies are
// figures; repeated runs give the worst status.
func TestConformanceThresholds(t *testing.T) {
	f := &results.File{Runs: []results.Run{
		checkRun("a", results.CheckPass, results.CheckNamed),
		checkRun("b", results.CheckFail, results.CheckNotAnnounced),
		checkRun("c", results.CheckPass, results.CheckNamed), checkRun("c", results.CheckUnknown, results.CheckNamed),
	}}
	cases := []struct {
		expr string
		pass map[string]bool
	}{
		{"conformance.req.limit-zero==pass", map[string]bool{"a": true, "b": false, "c": false}},
		{"conformance.req.limit-zero!=fail", map[string]bool{"a": true, "b": false, "c": true}},
		{"conformance.nip09.deletion==named", map[string]bool{"a": true, "b": false, "c": true}},
		{"conformance.nip09.deletion==not_announced", map[string]bool{"a": false, "b": true, "c": false}},
		{"conformance.failed==0", map[string]bool{"a": true, "b": false, "c": true}},
		{"conformance.checks>=2", map[string]bool{"a": true, "b": true, "c": true}},
	}
	for _, tc := range cases {
		th, err := Parse(tc.expr)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		for _, r := range Evaluate(f, []Threshold{th}) {
			if r.Error != "" || r.Passed != tc.pass[r.Relay] {
				t.Errorf("%s on %s: passed %v (value %s), want %v %s", tc.expr, r.Relay, r.Passed, Format(r.Value, r.Unit), tc.pass[r.Relay], r.Error)
			}
		}
	}
	r := Evaluate(f, []Threshold{{Expr: "x", Figure: "conformance.req.limit-zero", Op: "==", Limit: checkValue(results.CheckPass), Unit: UnitCheck}})
	if got := Format(r[2].Value, r[2].Unit); got != "unknown" || r[2].Runs != 2 {
		t.Errorf("relay c (pass, then unknown): %s over %d runs, want the worst, unknown", got, r[2].Runs)
	}
	for _, bad := range []string{"conformance.req.limit-zero<pass", "conformance.req.limit-zero==passed", "conformance.failed==pass"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
	th, _ := Parse("conformance.req.nope==pass")
	if r := Evaluate(f, []Threshold{th}); r[0].Error == "" || !strings.Contains(r[0].Error, "conformance.req.limit-zero") {
		t.Errorf("a check not run: %+v", r[0])
	}
	if _, err := ParseFailOn("conformance.req.limit-zero:-10%"); err == nil {
		t.Error("a check's status took a percentage change")
	}
}
