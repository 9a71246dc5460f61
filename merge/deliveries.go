package merge

import (
	"fmt"
	"strings"

	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
)

// Subscribe segments (subscribe --segment I/N). Each segment published its
// share of one list of fresh events and held its share of the
// subscribers, whose deliveries came from every segment's publishers. A
// segment assumed the other segments' events accepted; from the records
// (results.LiveDeliveries) the merge counts exactly what a single run
// counts: for every subscriber and every fresh event matching its filter
// that some segment got accepted, one owed delivery, credited when it
// arrived, else booked as the subscriber's segment saw it end (timed out:
// missing; connection lost; not run; cancelled). A matching event no
// segment got accepted that still arrived is extra when it was refused,
// else (its OK never came) a delivered_unacknowledged count.

// Delivery outcome names as the segments record them (outcome.Kind.String).
const (
	missTimedOut  = "timed out"
	missConnLost  = "connection lost"
	missNotRun    = "not run"
	missCancelled = "cancelled"
	whyNotOpen    = "subscription not open"
)

// deliveryTally is the exact count over one filter kind (or all).
type deliveryTally struct {
	requested, accepted, timedOut, connLost, cancelled int64
	notRun                                             map[string]int64
	expected                                           int64 // owed to open subscriptions (the verification's)
	refusedDelivered                                   int64 // refused by a segment other than the subscriber's, delivered: extra
	unack                                              int64 // no OK, delivered, another segment's: delivered_unacknowledged
	overCredited                                       int64 // of those two, credited by the subscriber's segment (assumed accepted)
}

// mergeDeliveries recounts the deliveries of merged subscribe segments in
// out (counts, the delivery account, the verification, the groups' counts
// and verifications, the delivery rates). Phases without records are left
// alone; a partial set is an error.
func mergeDeliveries(out *results.Phase, phs []*results.Phase) ([]string, error) {
	have := 0
	for _, p := range phs {
		if p.Deliveries != nil {
			have++
		}
	}
	if have == 0 {
		return nil, nil
	}
	if have != len(phs) {
		return nil, fmt.Errorf("phase %s: %d of %d segments recorded their deliveries: cannot count them across segments", out.Name, have, len(phs))
	}
	n := len(phs)
	plan := phs[0].Deliveries.LivePlan
	nEv := plan.Events
	acc, ref := make([]bool, nEv), make([]bool, nEv)
	for i, p := range phs {
		d := p.Deliveries
		if d.LivePlan != plan {
			return nil, fmt.Errorf("phase %s: segment %d's subscription plan %+v differs from segment 0's %+v: not one test", out.Name, i, d.LivePlan, plan)
		}
		for _, bm := range []struct {
			s   string
			dst []bool
		}{{d.Accepted, acc}, {d.Refused, ref}} {
			if bm.s == "" {
				continue
			}
			set, err := results.DecodeIndexSet(bm.s, nEv)
			if err != nil {
				return nil, fmt.Errorf("phase %s: segment %d: %w", out.Name, i, err)
			}
			for j, in := range set {
				bm.dst[j] = bm.dst[j] || in
			}
		}
	}
	total := &deliveryTally{notRun: map[string]int64{}}
	byKind := map[string]*deliveryTally{}
	seen := map[int]bool{}
	for si, p := range phs {
		for _, sub := range p.Deliveries.Subs {
			if seen[sub.Index] || sub.Index < 0 || sub.Index >= plan.Subscribers || sub.Index%n != si {
				return nil, fmt.Errorf("phase %s: segment %d records subscriber %d (twice, out of range, or another segment's)", out.Name, si, sub.Index)
			}
			seen[sub.Index] = true
			kind := plan.Kind(sub.Index)
			k := byKind[kind]
			if k == nil {
				k = &deliveryTally{notRun: map[string]int64{}}
				byKind[kind] = k
			}
			var miss []bool
			if !sub.None {
				var err error
				if miss, err = sub.MissingOf(nEv); err != nil {
					return nil, fmt.Errorf("phase %s: segment %d subscriber %d: %w", out.Name, si, sub.Index, err)
				}
			}
			open := !(sub.MissAs == missNotRun && sub.MissWhy == whyNotOpen)
			for j := range nEv {
				if !plan.Matches(sub.Index, j) {
					continue
				}
				got := !sub.None && !miss[j]
				for _, t := range []*deliveryTally{total, k} {
					t.book(sub, j%n != si, acc[j], ref[j], got, open)
				}
			}
		}
	}
	if len(seen) != plan.Subscribers {
		return nil, fmt.Errorf("phase %s: the segments record %d of %d subscribers", out.Name, len(seen), plan.Subscribers)
	}
	total.apply(out, out.Verification)
	for gi := range out.Groups {
		g := &out.Groups[gi]
		if t := byKind[g.Name]; t != nil && g.Verification != nil {
			g.Counts[results.CountDeliveries] = t.accepted
			g.Verification.Expected, g.Verification.Missing = t.expected, t.timedOut
			g.Verification.Extra += t.refusedDelivered
			verify.Finish(g.Verification)
			if secs := float64(out.Duration) / 1e9; secs > 0 && g.Rates != nil {
				g.Rates[results.RateDeliveries] = float64(t.accepted) / secs
			}
		}
	}
	if secs := float64(out.Duration) / 1e9; secs > 0 && out.Rates != nil {
		out.Rates[results.RateDeliveries] = float64(total.accepted) / secs
	}
	if a := out.Account(results.OpEvent); a != nil && a.Accepted > 0 {
		if out.Rates == nil {
			out.Rates = map[string]float64{}
		}
		out.Rates[results.RateFanout] = float64(total.requested) / float64(a.Accepted)
	}
	notes := []string{fmt.Sprintf("deliveries counted across the %d segments (relaybench merge): each subscriber is owed every fresh event matching its filter that any segment got accepted (%d owed, %d delivered, %d missing); the per-segment notes above count other segments' events as if accepted",
		n, total.requested, total.accepted, total.timedOut)}
	if total.overCredited > 0 {
		notes = append(notes, fmt.Sprintf("%d deliveries of events another segment did not get accepted were timed in the deliver latency by the subscriber's segment (it assumed them accepted): the histogram holds that many more than the deliveries count", total.overCredited))
	}
	return notes, nil
}

// book counts one (subscriber, matching event j) pair: cross says j was
// published by another segment than the subscriber's.
func (t *deliveryTally) book(sub results.LiveSubscriber, cross, accepted, refused, got, open bool) {
	switch {
	case accepted:
		t.requested++
		if open {
			t.expected++
		}
		if got {
			t.accepted++
			return
		}
		switch sub.MissAs {
		case missTimedOut:
			t.timedOut++
		case missConnLost:
			t.connLost++
		case missCancelled:
			t.cancelled++
		default:
			t.notRun[sub.MissWhy]++
		}
	case got && cross:
		t.overCredited++
		if refused {
			t.refusedDelivered++
		} else {
			t.unack++
		}
	}
}

// apply puts the total into the merged phase: counts, the delivery account
// and the verification.
func (t *deliveryTally) apply(out *results.Phase, v *results.Verification) {
	if out.Counts == nil {
		out.Counts = map[string]int64{}
	}
	out.Counts[results.CountDeliveries] = t.accepted
	out.Counts[results.CountExpected] = t.expected
	out.Counts[results.CountMissing] = t.timedOut
	if t.unack > 0 || out.Counts[results.CountDeliveredUnacknowledged] > 0 {
		out.Counts[results.CountDeliveredUnacknowledged] += t.unack
	}
	a := results.Account{Op: results.OpDelivery, Requested: t.requested, Accepted: t.accepted, TimedOut: t.timedOut, ConnLost: t.connLost, Cancelled: t.cancelled}
	for why, c := range t.notRun {
		a.NotRun += c
		if a.NotRunBy == nil {
			a.NotRunBy = map[string]int64{}
		}
		a.NotRunBy[why] += c
	}
	replaced := false
	for i := range out.Accounts {
		if out.Accounts[i].Op == results.OpDelivery {
			out.Accounts[i], replaced = a, true
		}
	}
	if !replaced {
		out.Accounts = append(out.Accounts, a)
	}
	if v != nil {
		v.Expected, v.Missing = t.expected, t.timedOut
		v.Extra += t.refusedDelivered
		verify.Finish(v)
	}
}

// withoutDeliveryRatio drops "rate fanout" from the rates not recomputed
// when the delivery merge recomputed it.
func withoutDeliveryRatio(dropped []string, rates map[string]float64) []string {
	if _, ok := rates[results.RateFanout]; !ok {
		return dropped
	}
	out := dropped[:0]
	for _, d := range dropped {
		if !strings.HasSuffix(d, " fanout") {
			out = append(out, d)
		}
	}
	return out
}
