package workload

import (
	"fmt"

	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/wire"
)

// addAuthStats adds the phase's NIP-42 AUTH round trips (see wire/auth.go)
// to ph, apart from the workload's own figures: Counts auth_sent, auth_ok,
// auth_refused, auth_unanswered (no OK yet when the phase ended) and
// auth_retried (EVENTs and REQs sent again after an accepted AUTH; each
// still has one outcome in the accounts) and
// Latency["auth"] (["AUTH",ev] written → its OK read). Nothing is added
// when no connection authenticated.
func addAuthStats(ph *results.Phase, conns []*wire.Conn) {
	var sent, ok, refused, retried int64
	h := metrics.NewHistogram()
	for _, cn := range conns {
		st := cn.Stats()
		sent += st.AuthSent
		ok += st.AuthAccepted
		refused += st.AuthRejected
		retried += st.AuthRetried
		for _, d := range cn.AuthRoundTrips() {
			h.Record(d)
		}
	}
	if sent == 0 && ok == 0 && refused == 0 {
		return
	}
	ph.Counts[results.CountAuthSent] = sent
	ph.Counts["auth_ok"] = ok
	ph.Counts["auth_refused"] = refused
	ph.Counts["auth_retried"] = retried
	if h.Count() > 0 {
		if ph.Latency == nil {
			ph.Latency = map[string]*results.Histogram{}
		}
		ph.Latency[results.LatencyAuth] = h.Result()
	}
	if n := sent - ok - refused; n > 0 {
		// Still in flight when the phase ended: nostr-rs-relay 0.8.12 sends
		// no OK for an AUTH it accepts (only for one it refuses).
		ph.Counts["auth_unanswered"] = n
		ph.Notes = append(ph.Notes, fmt.Sprintf("NIP-42: %d of %d AUTH events got no OK by the end of the phase (NIP-42 asks relays to answer AUTH with OK): their round trips are not in the auth latency", n, sent))
	}
	if refused > 0 {
		ph.Notes = append(ph.Notes, fmt.Sprintf("NIP-42: %d of %d AUTH events refused by the relay (or not signable): what it refused auth-required stays refused", refused, sent))
	}
}

// carryAuth adds a step phase's AUTH counts and latency to the phase that
// sums the steps (find-max).
func carryAuth(ph *results.Phase, sp results.Phase) {
	for _, k := range []string{"auth_sent", "auth_ok", "auth_refused", "auth_unanswered", "auth_retried"} {
		if n, ok := sp.Counts[k]; ok {
			ph.Counts[k] += n
		}
	}
	src := sp.Latency[results.LatencyAuth]
	if src == nil {
		return
	}
	h, err := metrics.FromResult(src)
	if err != nil {
		return
	}
	if cur := ph.Latency[results.LatencyAuth]; cur != nil {
		if prev, err := metrics.FromResult(cur); err == nil {
			h.Merge(prev)
		}
	}
	if ph.Latency == nil {
		ph.Latency = map[string]*results.Histogram{}
	}
	ph.Latency[results.LatencyAuth] = h.Result()
}
