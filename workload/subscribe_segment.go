package workload

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
)

// Execution segments of the subscribe workload (--segment I/N).
//
// Every segment signs the SAME fresh events (same seed and parameters; the
// run nonce and created_at come from the common --start-at, not from
// chance) and knows every subscriber's filter. Segment I holds the
// subscribers whose global index i has i mod N = I (each with the filter a
// single run gives subscriber i), its share of the publishers, and publishes
// fresh event j when j mod N = I, at j's intended time in the global open
// loop schedule (start-at + j/rate). Its subscribers receive every
// segment's events: each delivery is verified here (the event list is
// known), and timed from the event's intended send time, which every
// segment knows (another segment's actual send time is not). Which events
// the other segments got accepted only the merge knows: here they are
// assumed accepted, and the phase records (results.LiveDeliveries) what
// relaybench merge needs to count the owed deliveries exactly.

// segmented reports whether o is a segment of a larger test.
func (o *SubscribeOptions) segmented() bool { return !o.Segment.Whole() }

// sharedSchedule reports whether the open-loop schedule starts at the
// common StartAt: deliveries are then timed from the intended send times.
func (o *SubscribeOptions) sharedSchedule() bool { return o.Rate > 0 && !o.StartAt.IsZero() }

// checkSegment refuses a segment the workload cannot split exactly.
func (o *SubscribeOptions) checkSegment() error {
	if !o.segmented() {
		return nil
	}
	if o.Rate <= 0 {
		return fmt.Errorf("subscribe --segment %s needs --rate: deliveries of other segments' events are timed from their intended send time in the common open-loop schedule (start-at + j/rate); closed-loop send times are not known across instances", o.Segment)
	}
	if o.StartAt.IsZero() {
		return fmt.Errorf("subscribe --segment %s needs --start-at: the common start of the schedule, and the seed of the events every segment signs alike", o.Segment)
	}
	if o.fresh != nil {
		return fmt.Errorf("subscribe --segment: pre-signed events are not split")
	}
	return nil
}

// StartNonce is the run nonce of fresh events derived from a common start
// time: every instance given the same --start-at signs the same events.
func StartNonce(t time.Time) string {
	h := sha256.Sum256([]byte("relaybench-live " + t.UTC().Format(time.RFC3339Nano)))
	return hex.EncodeToString(h[:4])
}

// freshIdentity is the nonce and created_at of the fresh events: random and
// now, or derived from StartAt when given (the same in every segment).
func (o *SubscribeOptions) freshIdentity() (nonce string, createdAt int64) {
	if o.StartAt.IsZero() {
		return RunNonce(), 0
	}
	return StartNonce(o.StartAt), o.StartAt.Unix()
}

// owns reports whether fresh event (or subscriber) n is this segment's.
func (o *SubscribeOptions) owns(n int) bool { return o.Segment.Owns(int64(n)) }

// publishers is this segment's number of publisher connections.
func (o *SubscribeOptions) publishers() int {
	if !o.segmented() {
		return o.Publishers
	}
	return o.Segment.AtLeastOne(o.Publishers)
}

// startClock waits for StartAt (when given) and returns the mono time of
// the schedule's start: StartAt itself on this machine's clock, even when
// set-up made this instance late (its events then go out late, as
// scheduled, and count as late).
func (o *SubscribeOptions) startClock(ctx context.Context) int64 {
	if o.StartAt.IsZero() {
		return mono.Now()
	}
	if d := time.Until(o.StartAt); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	return mono.Now() - int64(time.Since(o.StartAt))
}

// sentRef is the time deliveries of fresh event i are timed from: its
// intended send time on the shared schedule, else its actual send (0: not
// sent).
func (r *subRun) sentRef(i int) int64 {
	if r.o.sharedSchedule() {
		return r.start + r.offs[i]
	}
	return r.out.sentAt[i].Load()
}

// accepted sets r.acc once publishing is over: this segment's events as
// the relay answered, the other segments' assumed accepted (the merge
// knows).
func (r *subRun) accepted() {
	for n := range r.acc {
		r.acc[n] = !r.o.owns(n) || r.out.outcomes[n] == Accepted
	}
}

// plan is the subscription plan, for the merge.
func (r *subRun) plan() results.LivePlan {
	return results.LivePlan{Events: len(r.fresh.Events), Subscribers: r.o.Subscribers, Channels: len(r.channels),
		Authors: len(r.fresh.Authors), Overlap: r.o.Overlap, Filter: r.o.Filter}
}

// recordSegment puts in ph what relaybench merge needs to count the
// deliveries of every segment exactly, and says how the phase's own
// delivery figures were made.
func (r *subRun) recordSegment(ph *results.Phase) {
	if !r.o.segmented() {
		return
	}
	nEv := len(r.fresh.Events)
	d := &results.LiveDeliveries{LivePlan: r.plan(), Bytes: r.fresh.Bytes}
	var acc, ref []int
	for n := range nEv {
		if !r.o.owns(n) {
			continue
		}
		switch r.out.outcomes[n] {
		case Accepted:
			acc = append(acc, n)
		case Refused:
			ref = append(ref, n)
		}
	}
	d.Accepted = results.EncodeIndexSet(acc, nEv)
	if len(ref) > 0 {
		d.Refused = results.EncodeIndexSet(ref, nEv)
	}
	mismatch := 0
	for _, s := range r.subs {
		s.mu.Lock()
		k := r.deliveryOutcome(s, 0)
		rec := results.LiveSubscriber{Index: s.i, MissAs: k.String()}
		if k == outcome.NotRun {
			rec.MissWhy = whySubNotOpen
			if s.state == outcome.Accepted {
				rec.MissWhy = whySubClosed
			}
		}
		var missing []int
		got := 0
		for j, e := range r.fresh.Events {
			m := s.filter.Matches(e)
			if m != d.Matches(s.i, j) {
				mismatch++
			}
			if !m {
				continue
			}
			if r.recvOf(s, j) == 0 {
				missing = append(missing, j)
			} else {
				got++
			}
		}
		s.mu.Unlock()
		if got == 0 {
			rec.None = true
		} else {
			rec.SetMissing(missing, nEv)
		}
		d.Subs = append(d.Subs, rec)
	}
	ph.Deliveries = d
	if mismatch > 0 {
		ph.Errors = append(ph.Errors, fmt.Sprintf("segment %s: %d (subscriber, event) pairs match differently from the recorded plan: the merge cannot count the deliveries exactly", r.o.Segment, mismatch))
	}
	ph.Notes = append(ph.Notes, fmt.Sprintf("segment %s: %d of %s (global index i mod %d = %d), %s, fresh events j mod %d = %d of the %d every segment signs alike; other segments' events assumed accepted here (expected, missing and deliveries are this segment's view): relaybench merge counts the deliveries exactly",
		r.o.Segment, len(r.subs), numfmt.Count(r.o.Subscribers, "subscriber"), r.o.Segment.Count, r.o.Segment.Index, numfmt.Count(r.o.publishers(), "publisher"), r.o.Segment.Count, r.o.Segment.Index, nEv))
}
