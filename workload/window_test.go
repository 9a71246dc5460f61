package workload

import (
	"sync"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
)

// fakeInterval is the fake sampler's sample interval (the harness's).
const fakeInterval = 200 * time.Millisecond

// fakeSampler stands in for the harness's sampler: a relay that keeps one
// core busy all the time, sampled every fakeInterval from Begin to end. So
// its CPU seconds are the length of the sampled window, and its samples'
// times say where the window ended.
type fakeSampler struct {
	mu     sync.Mutex
	begins []time.Time
}

func (f *fakeSampler) begin() func() *results.Resources {
	t0 := time.Now()
	f.mu.Lock()
	f.begins = append(f.begins, t0)
	f.mu.Unlock()
	var once sync.Once
	var res *results.Resources
	return func() *results.Resources {
		once.Do(func() {
			w := time.Since(t0)
			res = &results.Resources{RelayCPUSecs: w.Seconds(), RelayPeakRSS: 1 << 20, RelayDataBytes: 4096}
			for t := fakeInterval; t < w; t += fakeInterval {
				res.Series = append(res.Series, results.ResourceSample{T: t.Seconds(), RelayCPU: 1, RelayRSS: 1 << 20})
			}
			res.Series = append(res.Series, results.ResourceSample{T: w.Seconds(), RelayCPU: 1, RelayRSS: 1 << 20})
		})
		return res
	}
}

// connectDelay is how long the test relay holds each WebSocket upgrade
// back: far longer than a sample interval, so resources sampled from before
// the dial would show it.
const connectDelay = 700 * time.Millisecond

// checkWindow asserts that ph's resources cover its timed window, not its
// set-up: the sampling began (at began) within one interval of the clock's
// start, every sample lies within [0, duration + one interval], the (one
// core busy) relay CPU is no longer than the window, and the set-up time
// holds the relay's connect delay.
func checkWindow(t *testing.T, ph results.Phase, began time.Time, setup time.Duration) {
	t.Helper()
	dur := float64(ph.Duration) / 1e9
	r := ph.Resources
	if ph.Duration <= 0 || r == nil || len(r.Series) == 0 {
		t.Fatalf("%s: duration %v, resources %+v", ph.Name, time.Duration(ph.Duration), r)
	}
	if d := began.Sub(ph.Start); d < -fakeInterval || d > fakeInterval {
		t.Errorf("%s: sampling began %v from the clock's start", ph.Name, d)
	}
	limit := dur + fakeInterval.Seconds()
	for _, s := range r.Series {
		if s.T < 0 || s.T > limit {
			t.Errorf("%s: sample at %.3f s outside the timed window [0, %.3f s + one interval]", ph.Name, s.T, dur)
		}
	}
	if r.RelayCPUSecs > limit {
		t.Errorf("%s: relay CPU %.3f s over a %.3f s window: sampled beyond it", ph.Name, r.RelayCPUSecs, dur)
	}
	if r.RelayCPUSecs < dur/2 {
		t.Errorf("%s: relay CPU %.3f s over a %.3f s window: the sampling missed most of it", ph.Name, r.RelayCPUSecs, dur)
	}
	if r.RelayPeakRSS == 0 || r.RelayDataBytes == 0 {
		t.Errorf("%s: RSS %d, data %d: the relay's resources were not merged", ph.Name, r.RelayPeakRSS, r.RelayDataBytes)
	}
	if got := time.Duration(ph.SetupSecs * 1e9); got < setup*9/10 {
		t.Errorf("%s: setup %v, want at least the relay's %v connect delay", ph.Name, got, setup)
	}
}

// Every workload samples the relay over its timed window only: a relay
// that holds every connection back 700 ms before answering shows that as
// set-up time, not in the phase's resources.
func TestResourcesCoverTheTimedWindow(t *testing.T) {
	c := testKeys(t)
	relay := func(t *testing.T) *testrelay.Relay {
		r := startRelay(t, testrelay.Config{ConnectDelay: connectDelay})
		return r
	}
	t.Run("publish+query", func(t *testing.T) {
		r, f, c := relay(t), &fakeSampler{}, smallCorpus(t)
		pr, err := Publish(testCtx(t), r.URL(), c, all(c)[:200], PublishOptions{Base: Base{Begin: f.begin}, Connections: 3})
		if err != nil {
			t.Fatal(err)
		}
		checkWindow(t, pr.Phase, f.begins[0], connectDelay)
		var live []*nostr.Event
		for _, i := range pr.StoredIndexes() {
			live = append(live, c.Events[i])
		}
		ph, err := Query(testCtx(t), r.URL(), nil, live, QueryOptions{Base: Base{Begin: f.begin}, Queries: 12, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		checkWindow(t, ph, f.begins[1], connectDelay)
	})
	t.Run("burst", func(t *testing.T) {
		f, o := &fakeSampler{}, smallBurst
		o.Begin = f.begin
		ph, err := Burst(testCtx(t), relay(t).URL(), c, o)
		if err != nil {
			t.Fatal(err)
		}
		checkWindow(t, ph, f.begins[0], connectDelay)
	})
	t.Run("lifecycle", func(t *testing.T) {
		f := &fakeSampler{}
		ph, err := Lifecycle(testCtx(t), relay(t).URL(), c, LifecycleOptions{Base: Base{Begin: f.begin}, Events: 10, Size: 100})
		if err != nil {
			t.Fatal(err)
		}
		checkWindow(t, ph, f.begins[0], connectDelay)
	})
	t.Run("subscribe", func(t *testing.T) {
		f := &fakeSampler{}
		ph, err := Subscribe(testCtx(t), relay(t).URL(), c, SubscribeOptions{Base: Base{Begin: f.begin}, Subscribers: 3, Events: 60, Size: 100, Rate: 150})
		if err != nil {
			t.Fatal(err)
		}
		checkWindow(t, ph, f.begins[0], connectDelay)
	})
	t.Run("sweep", func(t *testing.T) {
		f := &fakeSampler{}
		phases, err := Sweep(testCtx(t), relay(t).URL(), c, SweepOptions{Base: Base{Begin: f.begin}, Sizes: []int{100, 1000}, Events: 30, Rate: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(phases) != 2 || len(f.begins) != 2 {
			t.Fatalf("%d phases, %d windows sampled", len(phases), len(f.begins))
		}
		for i, ph := range phases {
			checkWindow(t, ph, f.begins[i], connectDelay)
		}
	})
	t.Run("mixed", func(t *testing.T) {
		r := relay(t)
		r.Add(c.Events...)
		f := &fakeSampler{}
		o := smallMixed
		o.Begin = f.begin
		ph, err := Mixed(testCtx(t), r.URL(), c, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.begins) != 3 {
			t.Fatalf("%d windows sampled, want one per part", len(f.begins))
		}
		checkWindow(t, ph, f.begins[0], connectDelay)
	})
	t.Run("load", func(t *testing.T) {
		f := &fakeSampler{}
		ph, err := Load(testCtx(t), relay(t).URL(), c, LoadOptions{Base: Base{Begin: f.begin}, Name: "load", Kind: LoadPublish, Pattern: constant(t, 100, 600*time.Millisecond),
			Connections: 2, Size: 100})
		if err != nil {
			t.Fatal(err)
		}
		checkWindow(t, ph, f.begins[0], connectDelay)
	})
}

// Resources sampled past the timed window (the phase ends at its last
// answer, found after waiting for answers that never came) are cut to it.
func TestFitWindowCutsSettleTime(t *testing.T) {
	r := &results.Resources{RelayCPUSecs: 3, RelayPeakRSS: 900, ClientCPUSecs: 1.5, ClientCPUUtil: 0.75}
	for i := 1; i <= 10; i++ {
		rss := int64(100 * i)
		r.Series = append(r.Series, results.ResourceSample{T: 0.2 * float64(i), RelayCPU: 1.5, RelayRSS: rss, ClientCPU: 0.5})
	}
	fitWindow(r, 0.5) // samples at 0.2, 0.4 and 0.6 (which holds the end) stay
	if len(r.Series) != 3 || r.Series[2].RelayRSS != 300 {
		t.Fatalf("series %+v", r.Series)
	}
	if d := r.RelayCPUSecs - 0.9; d > 1e-9 || d < -1e-9 {
		t.Errorf("relay CPU %v, want 0.9 (1.5 cores × 0.6 s)", r.RelayCPUSecs)
	}
	if r.RelayPeakRSS != 300 {
		t.Errorf("peak RSS %d, want 300", r.RelayPeakRSS)
	}
	if d := r.ClientCPUSecs - 0.3; d > 1e-9 || d < -1e-9 {
		t.Errorf("client CPU %v, want 0.3", r.ClientCPUSecs)
	}
	// Resources that fit are left alone.
	fit := &results.Resources{RelayCPUSecs: 7, Series: []results.ResourceSample{{T: 0.2, RelayCPU: 1}, {T: 0.41, RelayCPU: 1}}}
	fitWindow(fit, 0.4)
	if fit.RelayCPUSecs != 7 || len(fit.Series) != 2 {
		t.Errorf("fitting resources changed: %+v", fit)
	}
}

// The parts of a phase are joined end to end: T counts timed seconds.
func TestJoinWindows(t *testing.T) {
	part := func(cpu float64, ts ...float64) *results.Resources {
		r := &results.Resources{RelayCPUSecs: cpu, RelayPeakRSS: int64(cpu * 100), RelayDataBytes: int64(cpu)}
		for _, x := range ts {
			r.Series = append(r.Series, results.ResourceSample{T: x, RelayCPU: 1})
		}
		return r
	}
	j := joinWindows([]window{{part(1, 0.2, 0.4), 0.4}, {nil, 1}, {part(2, 0.2, 0.4, 0.6), 0.6}})
	if j.RelayCPUSecs != 3 || j.RelayPeakRSS != 200 || j.RelayDataBytes != 2 {
		t.Errorf("joined %+v", j)
	}
	var ts []float64
	for _, s := range j.Series {
		ts = append(ts, s.T)
	}
	want := []float64{0.2, 0.4, 1.6, 1.8, 2.0}
	if len(ts) != len(want) {
		t.Fatalf("times %v, want %v", ts, want)
	}
	for i := range want {
		if d := ts[i] - want[i]; d > 1e-9 || d < -1e-9 {
			t.Fatalf("times %v, want %v", ts, want)
		}
	}
	if joinWindows([]window{{nil, 1}}) != nil {
		t.Error("no part sampled, yet resources")
	}
}
