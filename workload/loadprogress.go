package workload

import (
	"fmt"
	"sync"
	"time"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/schedule"
)

// A load says what it is about to do and how far it is, as every workload
// does: its plan (the pattern and the operations it intends) before the
// clock starts, then either the per-second lines (LoadOptions.Live: the
// load command) or a progress display of the operations ended, through
// LoadOptions.Show (run and compare --workloads load: a bar on a
// terminal, a line every tenth otherwise, and --web's view), a mixed
// load's read-back in that plan (loadProgress).

// loadPlanText is a load phase's plan: its pattern and the operations it
// intends, by kind ("constant 1,000/s for 5.00s: 5,000 operations (4,000
// EVENTs, 1,000 REQs)").
func loadPlanText(p schedule.Pattern, total, nPub int64) string {
	var kinds string
	switch nQuery := total - nPub; {
	case nQuery == 0:
		kinds = numfmt.Count(nPub, "EVENT")
	case nPub == 0:
		kinds = numfmt.Count(nQuery, "REQ")
	default:
		kinds = numfmt.Count(nPub, "EVENT") + ", " + numfmt.Count(nQuery, "REQ")
	}
	return fmt.Sprintf("%s: %s (%s)", p, numfmt.Count(total, "operation"), kinds)
}

// PlanText is the plan of the phase o runs (its segment's share), as the
// load command says it before the clock starts.
func (o LoadOptions) PlanText() (string, error) {
	if err := o.defaults(); err != nil {
		return "", err
	}
	total, nPub := o.segmentPlan(schedule.Count(o.Pattern))
	return loadPlanText(o.Pattern, total, nPub), nil
}

// loadProgress is a load phase's progress display (LoadOptions.Show):
// without per-second lines (run and compare), one plan, announced before
// the clock starts, of the pattern's operations and, for a mixed load, the
// read-back's REQs after them (a REQ per readBackChunk events it publishes,
// all accepted: the phase's accounts then request as many), counted as
// each is booked in its one outcome, dropped ones included; the REQs the
// read-back did not need (events not accepted) end with it, as mixed's
// do. With per-second lines (the load command), they are the phase's
// display, and the read-back alone has one, in events.
type loadProgress struct {
	o        *LoadOptions
	a        *loadAccount
	update   func(done int64) // nil: no plan shown
	total    int64
	readBack int64  // the read-back's REQs in the plan
	stop     func() // stops the ticks

	mu   sync.Mutex
	rled *outcome.Ledger // the read-back's, while it runs
	over bool            // the read-back is over (or there is none)
}

// showProgress announces the phase's plan and reports the operations
// ended every quarter second until done.
func (a *loadAccount) showProgress(o *LoadOptions, plan *loadPlan) *loadProgress {
	lp := &loadProgress{o: o, a: a, over: o.Kind != LoadMixed}
	if o.Show == nil || o.Live != nil || plan.total == 0 {
		return lp
	}
	label := o.Name + ": " + loadPlanText(o.Pattern, plan.total, plan.nPub)
	if o.Kind == LoadMixed {
		lp.readBack = (plan.nPub + readBackChunk - 1) / readBackChunk
		label += ", then the read-back"
	}
	lp.total = plan.total + lp.readBack
	lp.update = o.Show(progress.Counting(label, "Ended", "operation", "operations", lp.total), lp.total)
	lp.stop = every(250*time.Millisecond, func() { lp.update(min(lp.ended(), lp.total-1)) })
	return lp
}

// ended is how many operations of the plan have ended so far.
func (lp *loadProgress) ended() int64 {
	n := lp.a.booked()
	lp.mu.Lock()
	defer lp.mu.Unlock()
	switch {
	case lp.over:
		n += lp.readBack
	case lp.rled != nil:
		n += lp.rled.Booked()
	}
	return n
}

// reading follows the read-back of n accepted events, booked in led: its
// REQs count in the plan as they end; with no plan shown, it announces
// itself and returns the function counting the events read back.
func (lp *loadProgress) reading(led *outcome.Ledger, n int) func(done int64) {
	if lp.update != nil {
		lp.mu.Lock()
		lp.rled = led
		lp.mu.Unlock()
		return func(int64) {}
	}
	if lp.o.Show == nil || n == 0 {
		return func(int64) {}
	}
	label := lp.o.Name + ": reading back " + numfmt.Count(n, "accepted event") + " by id"
	return lp.o.Show(progress.Counting(label, "Read back", "event", "events", int64(n)), int64(n))
}

// done ends the ticks and reports every operation of the plan ended: the
// phase's slots all booked (its account settled) and the read-back over.
func (lp *loadProgress) done() {
	if lp.update == nil {
		return
	}
	lp.stop()
	lp.mu.Lock()
	lp.over = true
	lp.mu.Unlock()
	lp.update(lp.ended())
}

// booked is how many slots have their outcome so far.
func (a *loadAccount) booked() int64 {
	var n int64
	if a.pub != nil {
		n += a.pub.Booked()
	}
	if a.query != nil {
		n += a.query.Booked()
	}
	return n
}
