package workload

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
)

// loadAccepted marks the pre-signed events of a load the relay accepted
// (OK true), one bit each.
type loadAccepted []atomic.Uint64

func newLoadAccepted(n int64) loadAccepted { return make(loadAccepted, (n+63)/64) }

func (a loadAccepted) set(k int64) {
	if k >= 0 && int(k>>6) < len(a) {
		a[k>>6].Or(1 << (k & 63))
	}
}

func (a loadAccepted) indexes() []int64 {
	var out []int64
	for w := range a {
		bits := a[w].Load()
		for b := int64(0); bits != 0; b, bits = b+1, bits>>1 {
			if bits&1 != 0 {
				out = append(out, int64(w)*64+b)
			}
		}
	}
	return out
}

// loadReadBack is the read-back of a mixed load: every event the relay
// accepted during the phase, asked for by id once the phase is over.
type loadReadBack struct {
	acct results.Account
	ver  *results.Verification
	errs []string
}

// readBack asks the relay, once the load is over, for every event it
// accepted during the phase, by id, readBackChunk at a time, and judges
// each answer against its batch with the one verifier: an accepted event
// not returned is missing (NIP-01: an OK true says the event was saved).
// The completeness that the queries' answers cannot show while the set
// moves is shown here, decisively. Each batch is its own model, so the
// client holds one batch at a time; lp shows how far it is. Skipped (booked cancelled or not run)
// when the run was interrupted or the phase stopped early.
func (l *loadOps) readBack(user context.Context, lp *loadProgress) loadReadBack {
	ks := l.accepted.indexes()
	nReq := (len(ks) + readBackChunk - 1) / readBackChunk
	led := outcome.New(results.OpRead, int64(nReq))
	rb := loadReadBack{ver: &results.Verification{}}
	if user.Err() != nil || l.acct.wd.Aborted() != "" || nReq == 0 {
		led.SettleFor(user, outcome.WhyAborted)
		rb.acct = led.Result()
		return rb
	}
	pctx, wd := outcome.NewWatchdog(user, 3, "read-back REQs ended without EOSE (timed out or connection lost)")
	defer wd.Stop()
	tick := lp.reading(led, len(ks))
	for i := 0; i < nReq && pctx.Err() == nil; i++ {
		batch := ks[i*readBackChunk : min(len(ks), (i+1)*readBackChunk)]
		if err := l.readBackOne(user, pctx, batch, i, led, wd, &rb); err != nil {
			rb.errs = verify.AppendUnique(rb.errs, "read-back: "+err.Error())
			break
		}
		tick(int64(min(len(ks), (i+1)*readBackChunk)))
	}
	wd.Settle(led, outcome.WhyConnGone)
	rb.acct = led.Result()
	return rb
}

// readBackOne reads one batch of accepted events by id and judges the
// answer.
func (l *loadOps) readBackOne(user, pctx context.Context, batch []int64, i int, led *outcome.Ledger, wd *outcome.Watchdog, rb *loadReadBack) error {
	sigs := verify.NewChecker() // trusts this batch's bytes only: the client holds one batch
	evs := make([]*nostr.Event, len(batch))
	f := nostr.Filter{IDs: make([]string, len(batch)), Limit: len(batch)}
	for j, k := range batch {
		e, err := l.plan.evs.c.EventAt(int(k))
		if err != nil {
			return err
		}
		evs[j], f.IDs[j] = e, e.ID
		sigs.Trust(l.plan.evs.c.RawAt(int(k)), e)
	}
	raws, ok := readBackIDs(user, pctx, l.pool.get(i), "lrb-"+strconv.Itoa(i), f, l.o.Timeout, led, wd, &rb.errs)
	if !ok {
		return nil
	}
	got, invalid := sigs.Events(raws)
	j := verify.Judge([]verify.Reply{{Filter: &f, Events: got, Invalid: invalid}}, verify.NewModel(evs), 0, false)
	verify.Add(rb.ver, &j.Answers[0])
	return nil
}

// addReadBack adds a mixed load's read-back to the phase: its account
// (after the counters, which are the pattern's slots) and its answers to
// the verification, which then judges completeness too.
func addReadBack(ph *results.Phase, rb loadReadBack) {
	ph.Accounts = append(ph.Accounts, rb.acct)
	ph.Counts["read_back_events"] = rb.ver.Returned
	ph.Errors = verify.AppendUnique(ph.Errors, rb.errs...)
	v := ph.Verification
	if v == nil {
		return
	}
	v.Notes = dropPrefixed(v.Notes, "partial: ")
	queries := v.Returned // the queries' answers', before the read-back's join them
	verify.Add(v, rb.ver)
	v.Verified = rb.ver.Checked > 0
	lead := fmt.Sprintf("the %s answered with EOSE were checked for valid ids and signatures, filter match, duplicates, newest-first order and the filter's limit, not for missing or extra events (events were published while they ran, and the relay may hold events this run did not publish); ", numfmt.Count(v.Checked-rb.ver.Checked, "query"))
	switch {
	case rb.acct.Requested == 0:
		lead += "no event was accepted, so nothing was read back"
	case rb.acct.Accepted == 0:
		lead += fmt.Sprintf("none of the %s read-back REQs (every event the relay accepted, by id) ended with EOSE (the phase stopped, or the relay did not answer), so missing events were not checked",
			numfmt.Group(rb.acct.Requested))
	default:
		lead += fmt.Sprintf("missing events are checked by reading back every event the relay accepted, by id, once the load was over (%s of %s ended with EOSE); ",
			numfmt.Group(rb.acct.Accepted), numfmt.Count(rb.acct.Requested, "read-back REQ"))
		lead += returnedSplit(v.Returned, queries, rb.ver.Returned, ph.Counts[results.CountEventsReturned])
	}
	if !v.Verified {
		lead = "partial: " + lead
	}
	v.Notes = append([]string{lead}, v.Notes...)
	verify.Finish(v)
	// The queries' answers, the only ones beyond a limit, had no expected
	// set: say so, whatever the read-back made of the whole (Finish keeps
	// one note on them, for the total).
	if i := slices.Index(v.Notes, verify.OverLimitNote(v.OverLimit)); i >= 0 {
		v.Notes[i] = verify.OverLimitCheckedNote(v.OverLimit)
	}
}

// returnedSplit says what a mixed load's verification's events returned
// are made of, beside the phase's events returned (the queries' alone):
// the queries' answers checked and the read-back's. counted is the phase's
// figure, which counts every answer's events, those of answers that did
// not end with EOSE and an event's repeats too.
func returnedSplit(all, queries, readBack, counted int64) string {
	s := fmt.Sprintf("of the %s returned in the answers checked, %s answered the queries and %s the read-back", numfmt.Count(all, "event"), numfmt.Group(queries), numfmt.Group(readBack))
	if counted != queries {
		s += fmt.Sprintf(" (the phase's events returned, %s, counts every answer to the queries: those that did not end with EOSE and repeated events too)", numfmt.Group(counted))
	}
	return s
}

// verifyByGroup gives each group of a load the verification of its own
// operations, as the Load by group table shows it: the query group the
// queries' answers (partial: validity, filter match, duplicates, order and
// limit), the publish group of a mixed load the read-back of the events the
// relay accepted from it (each asked for by id once the load was over,
// missing events included). The read-back then joins the phase's
// verification (addReadBack). A publish load reads nothing back: its group
// has no verification, as its phase has none. qv is the queries' verifier
// (nil: no query ran).
func verifyByGroup(ph *results.Phase, rb *loadReadBack, qv *loadVerifier) {
	var queries, back *results.Verification
	if v := ph.Verification; v != nil {
		c := *v
		c.Notes = slices.Clone(v.Notes)
		if rb != nil && qv != nil {
			c.Notes = mixedOverLimitNote(c.Notes, c.OverLimit, qv.overLive)
		}
		queries = &c
	}
	if rb != nil {
		back = readBackVerification(*rb)
		addReadBack(ph, *rb)
	}
	for i := range ph.Groups {
		switch g := &ph.Groups[i]; g.Name {
		case LoadQuery:
			g.Verification = queries
		case LoadPublish:
			g.Verification = back
		}
	}
}

// readBackVerification is the read-back's verification on its own: the
// accepted events asked for by id, checked for missing events, validity and
// duplicates; not verified when no read-back REQ ended with EOSE.
func readBackVerification(rb loadReadBack) *results.Verification {
	v := *rb.ver
	v.Notes = nil
	v.Verified = v.Checked > 0
	switch {
	case rb.acct.Requested == 0:
		v.Notes = append(v.Notes, "no event was accepted, so nothing was read back")
	case rb.acct.Accepted == 0:
		v.Notes = append(v.Notes, fmt.Sprintf("none of the %s read-back REQs (every event the relay accepted, by id) ended with EOSE: missing events were not checked", numfmt.Group(rb.acct.Requested)))
	default:
		v.Notes = append(v.Notes, fmt.Sprintf("every event the relay accepted was asked for by id once the load was over (%s of %s ended with EOSE) and checked for missing events, valid ids and signatures and duplicates",
			numfmt.Group(rb.acct.Accepted), numfmt.Count(rb.acct.Requested, "read-back REQ")))
	}
	verify.Finish(&v)
	return &v
}
