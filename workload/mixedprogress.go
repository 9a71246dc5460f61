package workload

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/outcome"
)

// mixedProgress is mixed's whole plan, announced before the first part
// starts (a progress reporter: the terminal's display, --web's bar and
// relaybench_phase_planned): the operations of all three parts, and how
// many have ended so far. A part's operations all end with it: each in one
// outcome, or cut at its end (scheduled, not requested), or, for a part not
// run, booked cancelled or not run; none is left out of the total. The
// read-back after the parts is not timed and announces its own progress.
type mixedProgress struct {
	update func(done int64) // nil: no progress reporter
	total  int64
	stop   func() // stops the ticks (nil: none started)

	mu    sync.Mutex
	ended int64           // the operations of the parts over
	pub   *atomic.Int64   // the part under way: its events answered so far (nil: none)
	qled  *outcome.Ledger // its queries (nil: none)
}

// mixedPlanned is the operations of a part: its events and its queries.
func (e *mixedEnv) mixedPlanned(spec mixedSpec) int64 {
	var n int64
	if spec.pub {
		n += int64(e.perPart)
	}
	if spec.query {
		n += int64(e.nQ)
	}
	return n
}

// mixedPlanLabel is the plan as the progress display says it, short
// enough to leave a terminal's bar room (each part's line says what it
// runs).
func mixedPlanLabel(o *MixedOptions, total int64) string {
	return fmt.Sprintf("mixed: %s in three parts of %v each", numfmt.Count(total, "operation"), o.Duration)
}

// startProgress announces the plan of specs and reports the operations
// ended every quarter second until done.
func (e *mixedEnv) startProgress(specs []mixedSpec) *mixedProgress {
	mp := &mixedProgress{}
	for _, s := range specs {
		mp.total += e.mixedPlanned(s)
	}
	if e.o.progressFor == nil || mp.total == 0 {
		return mp
	}
	mp.update = e.o.progressFor(progress.Counting(mixedPlanLabel(e.o, mp.total), "Ended", "operation", "operations", mp.total), mp.total)
	mp.stop = every(250*time.Millisecond, mp.tick)
	return mp
}

// tick reports the operations ended so far; below the total until done
// says the parts are over (the reporter stops at the total).
func (mp *mixedProgress) tick() {
	mp.mu.Lock()
	n := mp.ended
	if mp.pub != nil {
		n += mp.pub.Load()
	}
	if mp.qled != nil {
		n += mp.qled.Booked()
	}
	mp.mu.Unlock()
	mp.update(min(n, mp.total-1))
}

// begin follows part p's queries as they end (publishing: its events).
func (mp *mixedProgress) begin(p *mixedPart) {
	mp.mu.Lock()
	defer mp.mu.Unlock()
	mp.qled = p.qled
}

// publishing follows the part's events answered so far.
func (mp *mixedProgress) publishing(answered *atomic.Int64) {
	mp.mu.Lock()
	defer mp.mu.Unlock()
	mp.pub = answered
}

// partOver counts the n operations of a part over (run or not).
func (mp *mixedProgress) partOver(n int64) {
	mp.mu.Lock()
	defer mp.mu.Unlock()
	mp.ended += n
	mp.pub, mp.qled = nil, nil
}

// done ends the ticks and reports the parts' operations ended: all of
// them, once every part is over.
func (mp *mixedProgress) done() {
	if mp.stop != nil {
		mp.stop()
	}
	if mp.update != nil {
		mp.mu.Lock()
		n := mp.ended
		mp.mu.Unlock()
		mp.update(n)
	}
}
