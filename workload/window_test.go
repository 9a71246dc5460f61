package workload

import (
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testkit"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
)

// connectDelay is how long the test relay holds each WebSocket upgrade
// back: far longer than a sample interval, so resources sampled from before
// the dial would show it.
const connectDelay = 700 * time.Millisecond

// Every workload samples the relay over its timed window only: a relay
// that holds every connection back 700 ms before answering shows that as
// set-up time, not in the phase's resources.
func TestResourcesCoverTheTimedWindow(t *testing.T) {
	c := testKeys(t)
	relay := func(t *testing.T) *testrelay.Relay {
		r := testrelay.Start(t, testrelay.Config{ConnectDelay: connectDelay})
		return r
	}
	t.Run("publish+query", func(t *testing.T) {
		r, f, c := relay(t), &testkit.BusySampler{}, smallCorpus(t)
		pr, err := Publish(testCtx(t), r.URL(), c, all(c)[:200], PublishOptions{Base: Base{Begin: f.Begin}, Connections: 3})
		if err != nil {
			t.Fatal(err)
		}
		testkit.CheckWindow(t, pr.Phase, f.Begins()[0], connectDelay)
		var live []*nostr.Event
		for _, i := range pr.StoredIndexes() {
			live = append(live, c.Events[i])
		}
		ph, err := Query(testCtx(t), r.URL(), nil, live, QueryOptions{Base: Base{Begin: f.Begin}, Queries: 12, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		testkit.CheckWindow(t, ph, f.Begins()[1], connectDelay)
	})
	t.Run("burst", func(t *testing.T) {
		f, o := &testkit.BusySampler{}, smallBurst
		o.Begin = f.Begin
		ph, err := Burst(testCtx(t), relay(t).URL(), c, o)
		if err != nil {
			t.Fatal(err)
		}
		testkit.CheckWindow(t, ph, f.Begins()[0], connectDelay)
	})
	t.Run("lifecycle", func(t *testing.T) {
		f := &testkit.BusySampler{}
		ph, err := Lifecycle(testCtx(t), relay(t).URL(), c, LifecycleOptions{Base: Base{Begin: f.Begin}, Events: 10, Size: 100})
		if err != nil {
			t.Fatal(err)
		}
		testkit.CheckWindow(t, ph, f.Begins()[0], connectDelay)
	})
	t.Run("subscribe", func(t *testing.T) {
		f := &testkit.BusySampler{}
		ph, err := Subscribe(testCtx(t), relay(t).URL(), c, SubscribeOptions{Base: Base{Begin: f.Begin}, Subscribers: 3, Events: 60, Size: 100, Rate: 150})
		if err != nil {
			t.Fatal(err)
		}
		testkit.CheckWindow(t, ph, f.Begins()[0], connectDelay)
	})
	t.Run("sweep", func(t *testing.T) {
		f := &testkit.BusySampler{}
		phases, err := Sweep(testCtx(t), relay(t).URL(), c, SweepOptions{Base: Base{Begin: f.Begin}, Sizes: []int{100, 1000}, Events: 30, Rate: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(phases) != 2 || len(f.Begins()) != 2 {
			t.Fatalf("%d phases, %d windows sampled", len(phases), len(f.Begins()))
		}
		for i, ph := range phases {
			testkit.CheckWindow(t, ph, f.Begins()[i], connectDelay)
		}
	})
	t.Run("mixed", func(t *testing.T) {
		r := relay(t)
		r.Add(c.Events...)
		f := &testkit.BusySampler{}
		o := smallMixed
		o.Begin = f.Begin
		ph, err := Mixed(testCtx(t), r.URL(), c, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Begins()) != 3 {
			t.Fatalf("%d windows sampled, want one per part", len(f.Begins()))
		}
		testkit.CheckWindow(t, ph, f.Begins()[0], connectDelay)
	})
	t.Run("load", func(t *testing.T) {
		f := &testkit.BusySampler{}
		ph, err := Load(testCtx(t), relay(t).URL(), c, LoadOptions{Base: Base{Begin: f.Begin}, Name: "load", Kind: LoadPublish, Pattern: constant(t, 100, 600*time.Millisecond),
			Connections: 2, Size: 100})
		if err != nil {
			t.Fatal(err)
		}
		testkit.CheckWindow(t, ph, f.Begins()[0], connectDelay)
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
