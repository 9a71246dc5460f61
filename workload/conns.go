package workload

import (
	"context"
	"sync"

	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/wire"
)

// maxRedials is how often a connection slot is dialled again after the
// relay dropped it: a relay that keeps dropping connections ends the
// workload's use of that slot rather than being redialled forever.
const maxRedials = 3

// connSet is a workload's connections, the one redial policy of the
// engine: each slot's connection is dialled again, up to maxRedials times,
// when the relay dropped it; every connection ever dialled is kept, to be
// closed at the end and read for the connection statistics; a redial that
// failed is said in the phase's errors. Safe for concurrent use.
type connSet struct {
	url  string
	dial wire.Options

	mu      sync.Mutex
	slots   []*wire.Conn
	redials []int
	all     []*wire.Conn
	errs    []string
}

// dialSet dials n connections to url (wire.DialPool: all or an error).
func dialSet(ctx context.Context, url string, n int, dial wire.Options) (*connSet, error) {
	conns, err := wire.DialPool(ctx, url, n, dial)
	if err != nil {
		return nil, err
	}
	return &connSet{url: url, dial: dial, slots: conns, redials: make([]int, n), all: append([]*wire.Conn(nil), conns...)}, nil
}

// get is slot's connection, dialled again when the relay dropped it; nil
// when it is gone (its redials used up, the redial failed, or ctx is
// done). A slot whose redial failed keeps its closed connection, and a
// later get tries again while redials are left.
func (s *connSet) get(ctx context.Context, slot int) *wire.Conn {
	s.mu.Lock()
	cn := s.slots[slot]
	if cn != nil && cn.Err() == nil {
		s.mu.Unlock()
		return cn
	}
	if s.redials[slot] == maxRedials || ctx.Err() != nil {
		s.mu.Unlock()
		return nil
	}
	s.redials[slot]++
	s.mu.Unlock()
	nc, err := wire.Dial(ctx, s.url, s.dial)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			s.errs = verify.AppendUnique(s.errs, "redial after a lost connection failed: "+err.Error())
		}
		return nil
	}
	s.slots[slot] = nc
	s.all = append(s.all, nc)
	return nc
}

// refresh dials again every connection of the set the relay dropped (get
// on each slot) and returns the slots; one that could not be dialled again
// stays, closed, in its slot (its user sees the error and stops).
func (s *connSet) refresh(ctx context.Context) []*wire.Conn {
	for i := range s.slots {
		s.get(ctx, i)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*wire.Conn(nil), s.slots...)
}

// close closes every connection ever dialled (none of a nil set).
func (s *connSet) close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	closeAll(s.all)
}

// report adds the connections' statistics and the failed redials to ph
// (none for a nil set: nothing was dialled).
func (s *connSet) report(ctx context.Context, ph *results.Phase) { reportSets(ctx, ph, s) }

// reportSets adds the statistics of every connection of the sets, taken
// together, and their failed redials to ph.
func reportSets(ctx context.Context, ph *results.Phase, sets ...*connSet) {
	var all []*wire.Conn
	var errs []string
	for _, s := range sets {
		if s == nil {
			continue
		}
		s.mu.Lock()
		all = append(all, s.all...)
		errs = append(errs, s.errs...)
		s.mu.Unlock()
	}
	addConnStats(ctx, ph, all)
	ph.Errors = verify.AppendUnique(ph.Errors, errs...)
}
