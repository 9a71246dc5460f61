package workload

import (
	"fmt"
	"time"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/schedule"
)

// A load says what it is about to do and how far it is, as every workload
// does: its plan (the pattern and the operations it intends) before the
// clock starts, then either the per-second lines (LoadOptions.Live: the
// load command) or a progress display of the operations ended, through
// LoadOptions.Show (run and compare --workloads load: a bar on a
// terminal, a line every tenth otherwise, and --web's view); a mixed load
// then announces its read-back and counts the events read back.

// loadPlanText is a load phase's plan: its pattern and the operations it
// intends, by kind ("constant 1,000/s for 5s: 5,000 operations (4,000
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

// showProgress shows the phase's operations ended (every slot booked in
// its one outcome, dropped ones included), every quarter second, under its
// plan, when o.Show is set and no per-second lines are its display. stop
// reports the count booked: the total once the account is settled (call it
// after settle).
func (a *loadAccount) showProgress(o *LoadOptions, plan *loadPlan) (stop func()) {
	if o.Show == nil || o.Live != nil || plan.total == 0 {
		return func() {}
	}
	total := plan.total
	label := o.Name + ": " + loadPlanText(o.Pattern, total, plan.nPub)
	update := o.Show(progress.Counting(label, "Ended", "operation", "operations", total), total)
	end := every(250*time.Millisecond, func() { update(min(a.booked(), total-1)) })
	return func() { end(); update(a.booked()) }
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

// readBackProgress announces a mixed load's read-back of n accepted events
// and returns the function that counts the events read back (a no-op
// without o.Show).
func readBackProgress(o *LoadOptions, n int) func(done int64) {
	if o.Show == nil || n == 0 {
		return func(int64) {}
	}
	label := o.Name + ": reading back " + numfmt.Count(n, "accepted event") + " by id"
	return o.Show(progress.Counting(label, "Read back", "event", "events", int64(n)), int64(n))
}
