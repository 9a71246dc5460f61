package report

import "github.com/relaybench/relaybench/results"

// authTable is one row per relay and phase whose connections authenticated
// with NIP-42 (counts auth_* and latency "auth", kept apart from the
// workload's figures): AUTHs sent, accepted, refused, unanswered, the
// operations sent again after an AUTH, and the AUTH round trip. Nil when no
// phase authenticated.
func authTable(groups []*relayRuns) *table {
	t := &table{title: "NIP-42 AUTH", head: []string{"Relay", "Phase", "AUTH sent", "Accepted", "Refused", "Unanswered", "Ops retried", "AUTH p50", "AUTH p99"},
		left: map[int]bool{1: true}}
	for _, g := range groups {
		for _, name := range phaseNames([]*relayRuns{g}) {
			ps := g.phases(name)
			var any bool
			for _, p := range ps {
				_, ok := p.Counts[results.CountAuthSent]
				any = any || ok
			}
			if !any {
				continue
			}
			row := []string{g.key, name}
			for _, c := range []col{cntCol("", results.CountAuthSent), cntCol("", "auth_ok"), cntCol("", "auth_refused"),
				cntCol("", "auth_unanswered"), cntCol("", "auth_retried"), latCol("", results.LatencyAuth, 50), latCol("", results.LatencyAuth, 99)} {
				row = append(row, agg(present(ps, c.get), c.fmt))
			}
			t.add(row...)
		}
	}
	if len(t.rows) == 0 {
		return nil
	}
	t.notes = append(t.notes, "AUTH round trip: [\"AUTH\",event] written → its OK read. An EVENT or REQ the relay refused auth-required is sent again after the AUTH and keeps one outcome, timed from its second send.")
	return t
}
