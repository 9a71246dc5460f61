package workload

import (
	"sync/atomic"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/results"
)

// The burst workload's CPU figures during the bursts themselves (the
// runner judges them in place of the averages over the timed window, which
// the idle time between bursts dilutes): cores busy, CPU time over the
// bursts' time, and that time.
const (
	RateBurstClientCores = "burst_client_cores"
	RateBurstRelayCores  = "burst_relay_cores" // only when the relay's CPU was read
	CountBurstCPUTime    = "burst_cpu_window_ns"
)

// burstCPU reads the client's process CPU time, and the relay's through
// the harness's sampler when relaybench observes the relay, at each
// burst's start and when its last event was answered (or the next burst
// began, or the engine returned: the windows never overlap).
type burstCPU struct {
	begin Sampler
	left  []atomic.Int64  // per burst: its events not yet answered
	ended []chan struct{} // per burst: closed when left reaches 0
	stop  chan struct{}   // closed once the engine returned
	done  chan struct{}   // closed when run returned

	// Summed over the bursts measured (written by run only).
	n          int
	ns         int64 // the windows' length, monotonic nanoseconds
	client     time.Duration
	relay      float64 // CPU seconds
	relayKnown bool
}

func newBurstCPU(o BurstOptions) *burstCPU {
	m := &burstCPU{begin: o.Begin, left: make([]atomic.Int64, o.Bursts), ended: make([]chan struct{}, o.Bursts),
		stop: make(chan struct{}), done: make(chan struct{})}
	for k := range m.ended {
		m.ended[k] = make(chan struct{})
		m.left[k].Store(int64(o.BurstSize))
	}
	return m
}

// booked is the engine's hook: it counts burst event n's answer.
func (m *burstCPU) booked(s burstSchedule) func(n int) {
	return func(n int) {
		if n < s.nBurst && m.left[s.burstOf[n]].Add(-1) == 0 {
			close(m.ended[s.burstOf[n]])
		}
	}
}

// run measures each burst in turn (bursts due at start+burstAt, mono)
// until the engine returns; call halt then.
func (m *burstCPU) run(start int64, burstAt []int64) {
	defer close(m.done)
	for k, at := range burstAt {
		if !m.waitUntil(start + at) {
			return
		}
		end := m.open()
		next := time.NewTimer(time.Hour) // the last burst: until it is answered or the engine returns
		if k+1 < len(burstAt) {
			next.Reset(time.Duration(start + burstAt[k+1] - mono.Now()))
		}
		select {
		case <-m.ended[k]:
		case <-next.C:
		case <-m.stop:
		}
		next.Stop()
		end()
	}
}

// waitUntil waits until the mono time at; false when the engine returned
// first.
func (m *burstCPU) waitUntil(at int64) bool {
	t := time.NewTimer(time.Duration(at - mono.Now()))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-m.stop:
		return false
	}
}

// open reads both sides' CPU time now and returns what reads them again
// and adds the difference. The relay's reading (a scan of /proc) comes
// before the client's at the start and after it at the end, so the client
// does not count it.
func (m *burstCPU) open() (end func()) {
	var relayEnd func() *results.Resources
	if m.begin != nil {
		relayEnd = m.begin()
	}
	c0, t0 := CPUTime(), mono.Now()
	return func() {
		t1, c1 := mono.Now(), CPUTime()
		m.n++
		m.ns += t1 - t0
		m.client += c1 - c0
		if relayEnd != nil {
			if r := relayEnd(); r != nil {
				m.relay += r.RelayCPUSecs
				m.relayKnown = true
			}
		}
	}
}

// halt stops the measuring; call it once the engine returned.
func (m *burstCPU) halt() {
	close(m.stop)
	<-m.done
}

// into puts the figures in ph (nothing when no burst was measured).
func (m *burstCPU) into(ph *results.Phase) {
	if m.n == 0 || m.ns <= 0 {
		return
	}
	secs := float64(m.ns) / 1e9
	if ph.Rates == nil {
		ph.Rates = map[string]float64{}
	}
	ph.Rates[RateBurstClientCores] = m.client.Seconds() / secs
	if m.relayKnown {
		ph.Rates[RateBurstRelayCores] = m.relay / secs
	}
	ph.Counts[CountBurstCPUTime] = m.ns
}
