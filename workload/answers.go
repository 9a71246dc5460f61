package workload

import (
	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
)

// recordAnswers is every answer that ended with EOSE, as relaybench merge
// needs it (results.Answer): the filters, the REQ's write and the EOSE's read
// on the wall clock, and the ids of the valid events in arrival order. It
// runs after the timed window.
func recordAnswers(recs []*queryRecord) []results.Answer {
	sigs := verify.NewChecker()
	var out []results.Answer
	for _, r := range recs {
		if r.ended != "eose" {
			continue
		}
		a := results.Answer{Shape: r.shape, Filter: r.filter.AppendJSON(nil),
			SentNs: mono.Time(r.sent).UnixNano(), EOSENs: mono.Time(r.sent + r.latency).UnixNano()}
		for i := range r.more {
			a.More = append(a.More, r.more[i].AppendJSON(nil))
		}
		ids := make([]string, 0, len(r.raws))
		for _, raw := range r.raws {
			if e, ok := sigs.Check(raw); ok {
				ids = append(ids, e.ID)
			} else {
				a.Invalid++
			}
		}
		a.IDs = results.EncodeIDs(ids)
		out = append(out, a)
	}
	return out
}
