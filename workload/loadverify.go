package workload

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
)

// loadVerifier checks every answer a load's queries got (ended with EOSE)
// with the one verifier (verify.Judge), as the answers come: each event's
// id and signature, its match with the filter, duplicates, newest-first
// order and the filter's limit. Answers are checked on a few goroutines of
// their own, fed through a bounded queue, and dropped once counted: the
// client holds at most loadVerifyQueue answers, however many queries the
// load runs (each is bounded by wire's answer cap).
//
// What an answer owed (missing or extra events) is not judged: while a
// load publishes, the relay's set moves under the queries (an event whose
// OK had not come when the REQ was sent may or may not be in it), and the
// relay may hold events this run did not publish (earlier phases, an
// existing relay's data). The verification is partial ("PASSED
// (partial)"): decisive for what it checks, silent on completeness.
type loadVerifier struct {
	sigs    *verify.Checker
	in      chan loadAnswer
	wg      sync.WaitGroup
	sendMu  sync.RWMutex // held (read) while sending; close takes it to close in
	closed  bool
	once    sync.Once
	mu      sync.Mutex
	ver     results.Verification
	repeats int64 // mixed load: repeats of an event in one answer, set aside (dropRepeats)
	late    int64 // answers that came after the phase's verification closed
	// overLive: of the events beyond a filter's limit, those still being
	// published when their REQ was sent (mixed load: okTimes.liveIn).
	overLive int64
	mixed    bool
}

// loadAnswer is one answer to check.
type loadAnswer struct {
	f    *nostr.Filter
	raws [][]byte
	live int64 // its events still being published when the REQ was sent
}

// loadVerifyQueue is how many answers may wait to be checked: past it, a
// query op waits for the verifier (the client's CPU is then the limit, as
// it should be: checking is part of the work asked for).
const loadVerifyQueue = 64

// newLoadVerifier starts the verifier. The source events, which relaybench
// signed, are vouched for (verify.Checker.Vouch): the relay's bytes of them
// need their id checked, not their signature, so checking keeps up with
// answers of mostly the same events.
func newLoadVerifier(mixed bool, source []*nostr.Event) *loadVerifier {
	v := &loadVerifier{sigs: verify.NewChecker(), in: make(chan loadAnswer, loadVerifyQueue), mixed: mixed}
	for _, e := range source {
		v.sigs.Vouch(e)
	}
	n := max(1, min(4, runtime.GOMAXPROCS(0)/2))
	v.wg.Add(n)
	for range n {
		go func() {
			defer v.wg.Done()
			for a := range v.in {
				v.check(a)
			}
		}()
	}
	return v
}

// add queues an answer to f for checking, with how many of its events
// were still being published when the REQ was sent (counted at most up to
// its excess beyond the limit).
func (v *loadVerifier) add(f *nostr.Filter, raws [][]byte, live int64) {
	v.sendMu.RLock()
	defer v.sendMu.RUnlock()
	if v.closed {
		v.mu.Lock()
		v.late++
		v.mu.Unlock()
		return
	}
	v.in <- loadAnswer{f, raws, live}
}

// check judges one answer and adds it to the phase's verification. In a
// mixed load, an event sent twice in one answer is set aside first (a relay
// may send an event stored during the REQ from its live feed and from its
// stored results: NIP-01 does not forbid it; mixed's rule, dropRepeats,
// here on the parsed events: no second parse of the answer).
func (v *loadVerifier) check(a loadAnswer) {
	evs, invalid := v.sigs.Events(a.raws)
	var repeats int
	if v.mixed {
		evs, repeats = dropRepeatedEvents(evs)
	}
	j := verify.Judge([]verify.Reply{{Filter: a.f, Events: evs, Invalid: invalid}}, nil, 0, false)
	v.mu.Lock()
	defer v.mu.Unlock()
	verify.Add(&v.ver, &j.Answers[0])
	v.repeats += int64(repeats)
	v.overLive += min(a.live, j.Answers[0].OverLimit)
}

// close stops taking answers and waits for those queued to be checked
// (more than once: a no-op).
func (v *loadVerifier) close() {
	v.once.Do(func() {
		v.sendMu.Lock()
		v.closed = true
		close(v.in)
		v.sendMu.Unlock()
		v.wg.Wait()
	})
}

// result waits for the answers queued, and returns the phase's
// verification: partial (Verified false), passed when at least one answer
// was checked and none failed, "not verified" when none was.
func (v *loadVerifier) result(kind string) *results.Verification {
	v.close()
	v.mu.Lock()
	defer v.mu.Unlock()
	ver := v.ver
	ver.Verified = false
	why := "the relay may hold events this run did not publish"
	if kind == LoadMixed {
		why = "events were published while the queries ran (one whose OK had not come when the REQ was sent may or may not be in its answer), and the relay may hold events this run did not publish"
	}
	ver.Notes = append([]string{fmt.Sprintf("partial: each of the %s answered with EOSE was checked for valid ids and signatures, filter match, duplicates, newest-first order and the filter's limit; not for missing or extra events: %s, so what an answer owed is not known decisively",
		numfmt.Count(ver.Checked, "query"), why)}, ver.Notes...)
	if v.repeats > 0 {
		ver.Notes = append(ver.Notes, fmt.Sprintf("%s came twice in one answer while publishing ran alongside (a relay whose live feed and stored results overlap for an event stored during the REQ; NIP-01 does not forbid it, clients drop repeats by id): counted once, not failed",
			numfmt.Count(v.repeats, "event")))
	}
	if v.late > 0 {
		ver.Notes = append(ver.Notes, fmt.Sprintf("%s came after the phase ended and were not checked", numfmt.Count(v.late, "answer")))
	}
	verify.Finish(&ver)
	return &ver
}

// dropRepeatedEvents removes the repeats of an event id from evs, keeping
// the first copy, and returns how many it removed.
func dropRepeatedEvents(evs []*nostr.Event) ([]*nostr.Event, int) {
	seen := make(map[string]bool, len(evs))
	kept := evs[:0]
	for _, e := range evs {
		if !seen[e.ID] {
			seen[e.ID] = true
			kept = append(kept, e)
		}
	}
	return kept, len(evs) - len(kept)
}
