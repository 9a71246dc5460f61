package wire

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// seqCheck follows one subscription's events, which the relay numbers
// 0, 1, 2, … (fakeEvent ids): every one delivered once, in order.
type seqCheck struct {
	next atomic.Int64 // the number expected next
	bad  atomic.Value // string: the first event out of sequence
}

func (s *seqCheck) event(raw []byte) {
	n := s.next.Load()
	if id, _ := fakeEvent(int(n), ""); !strings.Contains(string(raw), `"id":"`+id+`"`) {
		s.bad.CompareAndSwap(nil, fmt.Sprintf("event %d expected, got %.90s", n, raw))
	}
	s.next.Add(1)
}

func (s *seqCheck) check(t *testing.T, what string, want int) {
	t.Helper()
	if b := s.bad.Load(); b != nil {
		t.Fatalf("%s: %s", what, b)
	}
	if n := s.next.Load(); n != int64(want) {
		t.Fatalf("%s: %d events delivered, want %d", what, n, want)
	}
}

// switchContent is event i's content: mostly small, now and then bigger
// than a read, so frames straddle reads and edges.
func switchContent(i int) string {
	if i%37 == 5 {
		return strings.Repeat("é", 40<<10)
	}
	return strings.Repeat("x", i%300)
}

// pollersIn waits (a hang guard of 10 s) until every shared reader is
// blocking (out of the netpoller) or not, and, for not, holds at most
// netpollMax connections.
func pollersIn(t *testing.T, blocking bool, cycle int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok := true
		for _, p := range pollers {
			ok = ok && p.blocking.Load() == blocking && (blocking || !p.crowded())
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cycle %d: a shared reader is not in the mode expected (blocking %v)", cycle, blocking)
		}
		time.Sleep(time.Millisecond)
	}
}

// A shared reader's set crosses netpollMax both ways many times while
// events flow: subscribers join (the reader leaves the netpoller) and
// leave (it returns), with steady subscriptions streaming across every
// switch. Every event of every subscription arrives once, in order (run
// with -race).
func TestSharedReaderModeSwitchUnderTraffic(t *testing.T) {
	const cycles, burst, extraEvents = 25, 60, 80
	old := netpollMax.Swap(3)
	t.Cleanup(func() { netpollMax.Store(old) })
	if _, err := sharedPoller(); err != nil {
		t.Fatal(err)
	}
	steadyN, extraN := 2*len(pollers), 4*len(pollers) // 2 a reader, then 6: over 3
	pollersIn(t, false, -1)
	// two waves of the steady streams a cycle: as extras join, as they leave
	var waves [2 * cycles]chan struct{}
	for i := range waves {
		waves[i] = make(chan struct{})
	}
	r := streamOnREQ(t, func(tc *tconn, sub string) {
		if sub != `"steady"` {
			for i := range extraEvents {
				_, ev := fakeEvent(i, switchContent(i))
				if tc.send(`["EVENT",`+sub+`,`+string(ev)+`]`) != nil {
					return
				}
			}
			_ = tc.send(`["EOSE",` + sub + `]`)
			return
		}
		n := 0
		for _, w := range waves {
			select {
			case <-w:
			case <-time.After(60 * time.Second): // a hang guard: the test has failed
				return
			}
			for range burst {
				_, ev := fakeEvent(n, switchContent(n))
				if tc.send(`["EVENT",`+sub+`,`+string(ev)+`]`) != nil {
					return
				}
				n++
			}
		}
		_ = tc.send(`["EOSE",` + sub + `]`)
	})
	steady := make([]seqCheck, steadyN)
	var steadyWG sync.WaitGroup
	for k := range steadyN {
		c := dialT(t, r.url, Options{SharedReader: true})
		steadyWG.Add(1)
		if _, err := c.Req("steady", nil, SubHandler{OnEvent: func(raw []byte, _ int64) { steady[k].event(raw) },
			OnEOSE: func(int64) { steadyWG.Done() }}); err != nil {
			t.Fatal(err)
		}
	}
	for cy := range cycles {
		close(waves[2*cy])
		switchCycle(t, r.url, cy, extraN, extraEvents, waves[2*cy+1])
	}
	done := make(chan struct{})
	go func() { steadyWG.Wait(); close(done) }()
	within(t, done, "the steady subscriptions' EOSE")
	for k := range steady {
		steady[k].check(t, fmt.Sprintf("steady subscription %d", k), 2*cycles*burst)
	}
}

// switchCycle dials n subscribers that each get events numbered events,
// waits for every reader to leave the netpoller, closes leaving (the
// steady streams' second wave) and the subscribers, and waits for every
// reader to return.
func switchCycle(t *testing.T, url string, cy, n, events int, leaving chan struct{}) {
	t.Helper()
	seq := make([]seqCheck, n)
	cs := subscribeAll(t, url, "x", n, func(k int, raw []byte) { seq[k].event(raw) }, fmt.Sprintf("cycle %d: every EOSE", cy))
	for k := range seq {
		seq[k].check(t, fmt.Sprintf("cycle %d, subscriber %d", cy, k), events)
	}
	pollersIn(t, true, cy)
	close(leaving)
	for _, c := range cs {
		c.Close()
	}
	for _, c := range cs {
		within(t, c.Done(), "Done")
	}
	pollersIn(t, false, cy)
}
