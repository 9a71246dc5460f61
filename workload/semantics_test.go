package workload

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/internal/testrelay"
)

// A relay that keeps every version of replaceable events (NIP-01: older
// versions MAY be discarded) passes, and the semantics is named on the
// phase; the same corpus on a latest-only relay passes with none named.
func TestQueryKeepSupersededRelayPassesNamed(t *testing.T) {
	for _, keep := range []bool{true, false} {
		r := testrelay.New(testrelay.Config{KeepSuperseded: keep})
		_, q := publishAndQuery(t, r.URL(), ModePipeline, QueryOptions{Limit: 50, Queries: 60})
		r.Close()
		v := q.Verification
		if !v.Verified || !v.Passed || v.Missing != 0 || v.Extra != 0 {
			t.Fatalf("keep=%v: %+v", keep, v)
		}
		want := ""
		if keep {
			want = "keeps superseded versions"
		}
		if v.Semantics != want {
			t.Fatalf("keep=%v: semantics %q, want %q; notes %q", keep, v.Semantics, want, v.Notes)
		}
		held := strings.Contains(strings.Join(v.Notes, "\n"), "answers held superseded versions")
		if held != keep {
			t.Fatalf("keep=%v: notes %q", keep, v.Notes)
		}
		for _, g := range q.Groups {
			if g.Verification == nil || !g.Verification.Passed || g.Verification.Semantics != want {
				t.Fatalf("keep=%v: group %s: %+v", keep, g.Name, g.Verification)
			}
		}
	}
}
