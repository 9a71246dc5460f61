package workload

import (
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/results"
)

// fakeSampler is a relay sampler whose every window used relaySecs of the
// relay's CPU; ended is told of each window's end.
type fakeSampler struct {
	begun, endedN atomic.Int64
	relaySecs     float64
	ended         chan struct{}
}

func (f *fakeSampler) begin() func() *results.Resources {
	f.begun.Add(1)
	return func() *results.Resources {
		f.endedN.Add(1)
		if f.ended != nil {
			f.ended <- struct{}{}
		}
		return &results.Resources{RelayCPUSecs: f.relaySecs, RelayPeakRSS: 1}
	}
}

// A burst's CPU window closes when its last event is answered, not at the
// next burst's start (an hour away here), and a burst the engine never
// reached is not measured.
func TestBurstCPUWindowEndsAtLastAnswer(t *testing.T) {
	f := &fakeSampler{relaySecs: 0.5, ended: make(chan struct{}, 1)}
	o := BurstOptions{Bursts: 2, BurstSize: 3}
	o.Begin = f.begin
	s := burstSchedule{nBurst: 6, burstOf: []int{0, 0, 0, 1, 1, 1}}
	m := newBurstCPU(o)
	go m.run(mono.Now(), []int64{0, int64(time.Hour)})
	booked := m.booked(s)
	for n := 0; n < 3; n++ {
		booked(n)
	}
	booked(6) // a background event: no burst's
	select {
	case <-f.ended:
	case <-time.After(time.Minute): // hang guard only
		t.Fatal("burst 1's window did not close at its last answer")
	}
	m.halt()
	ph := results.NewPhase("burst", "burst")
	m.into(&ph)
	if m.n != 1 || f.begun.Load() != 1 || f.endedN.Load() != 1 {
		t.Fatalf("%d bursts measured, sampler begun %d ended %d: want 1", m.n, f.begun.Load(), f.endedN.Load())
	}
	ns := ph.Counts[CountBurstCPUTime]
	want := 0.5 / (float64(ns) / 1e9)
	if ns <= 0 || !near(ph.Rates[RateBurstRelayCores], want) {
		t.Fatalf("window %d ns, relay %v cores, want %v", ns, ph.Rates[RateBurstRelayCores], want)
	}
	if _, ok := ph.Rates[RateBurstClientCores]; !ok {
		t.Fatalf("no client figure: %v", ph.Rates)
	}
}

// Every burst due before the engine returns is measured, one window each,
// in turn: here all three are due at once, so the first two windows close
// when the next burst is due (at once), and the last when its events are
// answered; the sampler is begun and ended three times.
func TestBurstCPUMeasuresEachBurst(t *testing.T) {
	f := &fakeSampler{relaySecs: 0.25, ended: make(chan struct{}, 3)}
	o := BurstOptions{Bursts: 3, BurstSize: 2}
	o.Begin = f.begin
	s := burstSchedule{nBurst: 6, burstOf: []int{0, 0, 1, 1, 2, 2}}
	m := newBurstCPU(o)
	go m.run(mono.Now(), []int64{0, 0, 0})
	wait := func(n int64) {
		for f.endedN.Load() < n {
			select {
			case <-f.ended:
			case <-time.After(time.Minute): // hang guard only
				t.Fatalf("%d of %d windows closed", f.endedN.Load(), n)
			}
		}
	}
	wait(2)
	booked := m.booked(s)
	booked(4)
	booked(5)
	wait(3)
	m.halt()
	ph := results.NewPhase("burst", "burst")
	m.into(&ph)
	if m.n != 3 || f.begun.Load() != 3 || ph.Rates[RateBurstRelayCores] <= 0 {
		t.Fatalf("%d bursts measured, sampler begun %d, rates %v", m.n, f.begun.Load(), ph.Rates)
	}
}

// A burst run's figures agree with what its meter read: the relay's CPU
// through the sampler, which the phase's own window also uses once, one
// window per burst measured (every window begun is ended), and without a
// sampler the client's figure only. (Which bursts the meter reached
// before the engine returned is the scheduler's business here;
// TestBurstCPUMeasuresEachBurst checks that it measures each.)
func TestBurstCPUFigures(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{})
	f := &fakeSampler{relaySecs: 0.001}
	o := BurstOptions{Bursts: 3, BurstSize: 20, Every: 200 * time.Millisecond, Connections: 2, BetweenRate: 20, Size: 100}
	o.Begin = f.begin
	ph, err := Burst(testCtx(t), r.URL(), testKeys(t), o)
	if err != nil {
		t.Fatal(err)
	}
	n := f.begun.Load() - 1 // bursts measured
	if f.endedN.Load() != f.begun.Load() || n < 0 || n > 3 {
		t.Fatalf("sampler begun %d, ended %d times: want the phase's window and one per burst measured, at most 3", f.begun.Load(), f.endedN.Load())
	}
	ns := ph.Counts[CountBurstCPUTime]
	if _, ok := ph.Rates[RateBurstClientCores]; ok != (ns > 0) || (n > 0) != (ns > 0) {
		t.Fatalf("%d bursts measured: window %d ns, rates %v", n, ns, ph.Rates)
	}
	if ns > 0 && !near(ph.Rates[RateBurstRelayCores], float64(n)*0.001/(float64(ns)/1e9)) {
		t.Fatalf("%d bursts measured: window %d ns, relay %v cores", n, ns, ph.Rates[RateBurstRelayCores])
	}
	o.Begin = nil
	ph, err = Burst(testCtx(t), r.URL(), testKeys(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ph.Rates[RateBurstRelayCores]; ok {
		t.Fatalf("no sampler, a relay figure: rates %v", ph.Rates)
	}
	if _, ok := ph.Rates[RateBurstClientCores]; ok != (ph.Counts[CountBurstCPUTime] > 0) {
		t.Fatalf("no sampler: rates %v counts %v", ph.Rates, ph.Counts)
	}
}

// near: a and b agree within a millionth (the window's length is kept in
// whole nanoseconds).
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Abs(b) }
