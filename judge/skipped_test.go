package judge

import (
	"slices"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// TestSkippedRelaysInEveryVerdict: a relay asked for that was skipped is
// named in the verdict whatever its status, not only when nothing worse
// happened: beside another relay's wrong answers (3) or incomplete work (4),
// as alone (1).
func TestSkippedRelaysInEveryVerdict(t *testing.T) {
	failed := &results.Verification{Verified: true, Missing: 11, Extra: 11}
	skipped := []results.Run{
		{Relay: results.Relay{Name: "khatru-lmdb"}, Skipped: "khatru-lmdb: not built in"},
		{Relay: results.Relay{Name: "khatru-sqlite3"}, Skipped: "khatru-sqlite3: not built in"},
	}
	for _, c := range []struct {
		name   string
		ph     results.Phase
		status int
	}{
		{"wrong answers", results.Phase{Name: "query", Verification: failed}, WrongAnswers},
		{"incomplete", results.Phase{Name: "publish", Accounts: []results.Account{events(8, 0, 2, 0, 0, 0, nil)}}, Incomplete},
		{"nothing worse", results.Phase{Name: "publish", Accounts: []results.Account{events(10, 0, 0, 0, 0, 0, nil)}}, Error},
	} {
		f := &results.File{Runs: append([]results.Run{{Relay: results.Relay{Name: "khatru-badger"}, Phases: []results.Phase{c.ph}}}, skipped...)}
		v := Judge(f, false)
		if v.Status != c.status {
			t.Errorf("%s: status %d %v, want %d", c.name, v.Status, v.Reasons, c.status)
		}
		for _, want := range []string{"not run: khatru-lmdb: not built in", "not run: khatru-sqlite3: not built in"} {
			if n := len(slices.DeleteFunc(slices.Clone(v.Reasons), func(r string) bool { return r != want })); n != 1 {
				t.Errorf("%s: %q %d times in %q, want once", c.name, want, n, v.Reasons)
			}
		}
	}
}
