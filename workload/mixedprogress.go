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
// relaybench_phase_planned): the operations of all three parts and the
// read-back's REQs after them, and how many have ended so far. A part's
// operations all end with it, each in one outcome: an event still unsent
// at its end is not run (mixedBehindWhy), and a part not run books its
// work cancelled or not run; none is left out of the total, and the
// parts' accounts request what it planned. The read-back plans a REQ per
// readBackChunk events the parts publish (all of them accepted: the
// phase's read account then requests as many, and the accounts add up to
// the plan); the REQs it does not need, for events not accepted, are
// counted ended with it and requested by no account.
type mixedProgress struct {
	update   func(done int64) // nil: no progress reporter
	total    int64
	readBack int64  // the read-back's REQs in the plan
	stop     func() // stops the ticks (nil: none started)

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

// readBackIDs is the most ids one read-back REQ asks for: readBackChunk,
// or the relay's NIP-11 max_limit when lower.
func (e *mixedEnv) readBackIDs() int {
	if e.o.RelayCap > 0 {
		return min(readBackChunk, e.o.RelayCap)
	}
	return readBackChunk
}

// readBackPlanned is the read-back's REQs when every event specs publish
// is accepted.
func (e *mixedEnv) readBackPlanned(specs []mixedSpec) int64 {
	var events int64
	for _, s := range specs {
		if s.pub {
			events += int64(e.perPart)
		}
	}
	per := int64(e.readBackIDs())
	return (events + per - 1) / per
}

// mixedPlanLabel is the plan as the progress display says it, short
// enough to leave a terminal's bar room (each part's line says what it
// runs).
func mixedPlanLabel(o *MixedOptions, total int64) string {
	return fmt.Sprintf("mixed: %s in three parts of %v each, then the read-back", numfmt.Count(total, "operation"), o.Duration)
}

// startProgress announces the plan of specs and the read-back after them,
// and reports the operations ended every quarter second until done.
func (e *mixedEnv) startProgress(specs []mixedSpec) *mixedProgress {
	mp := &mixedProgress{readBack: e.readBackPlanned(specs)}
	mp.total = mp.readBack
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

// reading follows the read-back's REQs as they end.
func (mp *mixedProgress) reading(led *outcome.Ledger) {
	mp.mu.Lock()
	defer mp.mu.Unlock()
	mp.qled = led
}

// partOver counts the n operations of a part over (run or not).
func (mp *mixedProgress) partOver(n int64) {
	mp.mu.Lock()
	defer mp.mu.Unlock()
	mp.ended += n
	mp.pub, mp.qled = nil, nil
}

// done ends the ticks and reports the operations ended: all of them, once
// every part and the read-back are over.
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
