package judge

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// Foreign OKs and unsolicited EVENTs break NIP-01 MUSTs: wrong answers, even
// in an interrupted run's reasons. Late OKs, events after a CLOSE and
// answers over the client's cap are not wrong.
func TestProtocolViolations(t *testing.T) {
	overCap := results.Account{Op: results.OpQuery, Requested: 3, Accepted: 1, Refused: 2, RefusedBy: map[string]int64{"answer over cap": 2}}
	for _, tc := range []struct {
		name   string
		ph     results.Phase
		status int
		reason string
	}{
		{"foreign OKs", results.Phase{Name: "publish", Counts: map[string]int64{"foreign_oks": 3, "late_oks": 2}}, WrongAnswers, "3 OKs for events never sent"},
		{"unsolicited EVENTs", results.Phase{Name: "query", Counts: map[string]int64{"unsolicited_events": 1}}, WrongAnswers, "1 EVENTs under subscription ids never opened"},
		{"late OKs and events after CLOSE", results.Phase{Name: "publish", Counts: map[string]int64{"foreign_oks": 0, "unsolicited_events": 0, "late_oks": 5, "events_after_close": 9}}, Passed, ""},
		{"answers over the cap", results.Phase{Name: "query", Counts: map[string]int64{"answers_over_cap": 2}, Accounts: []results.Account{overCap}}, Incomplete, "2 refused (answer over cap)"},
	} {
		v := Judge(file(tc.ph), false)
		if v.Status != tc.status || !strings.Contains(strings.Join(v.Reasons, "\n"), tc.reason) {
			t.Errorf("%s: verdict %+v, want status %d naming %q", tc.name, v, tc.status, tc.reason)
		}
	}
}
