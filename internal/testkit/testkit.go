// Package testkit holds fixtures that the tests of several packages share:
// the embedded relay on 127.0.0.1, a sampler of a busy relay with the
// check that a phase's resources cover its timed window, the message loop
// of a fake relay, a TCP peer that answers below HTTP (ServeTCP), the
// check that a CSV holds no formula, and the relaybench binary built once
// per test binary. Only tests (and the fake relays they start) import it.
package testkit

import (
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relaybench/relaybench/relay/embedded"
	"github.com/relaybench/relaybench/results"
)

// EmbeddedURL starts the embedded relay with store (its data in a
// temporary folder) on 127.0.0.1 and returns its ws:// URL; it is closed
// when the test ends.
func EmbeddedURL(t testing.TB, store string) string {
	t.Helper()
	if _, left := embedded.NotBuilt[store]; left {
		t.Skipf("skipping: store %s is not in this build (go test -tags cgostores)", store)
	}
	r, err := embedded.New(embedded.Options{Store: store, DataDir: t.TempDir(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r.Handler())
	t.Cleanup(func() { srv.Close(); r.Close() })
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// SampleInterval is the busy sampler's sample interval (the harness's),
// and the tolerance of a sampled window.
const SampleInterval = 200 * time.Millisecond

// BusySampler stands in for the harness's sampler of a relay relaybench
// started that keeps one core busy all the time, sampled every
// SampleInterval from Begin to end: its CPU seconds are the length of the
// sampled window, and its samples' times say where the window ended. It
// records when each window began.
type BusySampler struct {
	mu     sync.Mutex
	begins []time.Time
}

// Begin starts a sampled window and returns the function that ends it
// (the first call ends it; later calls return the same resources).
func (s *BusySampler) Begin() func() *results.Resources {
	t0 := time.Now()
	s.mu.Lock()
	s.begins = append(s.begins, t0)
	s.mu.Unlock()
	var once sync.Once
	var res *results.Resources
	return func() *results.Resources {
		once.Do(func() {
			w := time.Since(t0)
			res = &results.Resources{RelayCPUSecs: w.Seconds(), RelayPeakRSS: 1 << 20, RelayDataBytes: 4096}
			for t := SampleInterval; t < w; t += SampleInterval {
				res.Series = append(res.Series, results.ResourceSample{T: t.Seconds(), RelayCPU: 1, RelayRSS: 1 << 20})
			}
			res.Series = append(res.Series, results.ResourceSample{T: w.Seconds(), RelayCPU: 1, RelayRSS: 1 << 20})
		})
		return res
	}
}

// Begins is when each window sampled so far began, in order.
func (s *BusySampler) Begins() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.begins...)
}

// CheckWindow asserts that ph's resources, sampled by a BusySampler, cover
// its timed window, not its set-up: the sampling began (at began) within
// one interval (or half the set-up, if longer) of the clock's start, every
// sample lies within [0, duration + that tolerance], the (one core busy) relay CPU is no longer than the
// window nor shorter than half of it, the relay's resources were merged,
// and the set-up time holds the relay's connect delay setup.
func CheckWindow(t testing.TB, ph results.Phase, began time.Time, setup time.Duration) {
	t.Helper()
	dur := float64(ph.Duration) / 1e9
	r := ph.Resources
	if ph.Duration <= 0 || r == nil || len(r.Series) == 0 {
		t.Fatalf("%s: duration %v, resources %+v", ph.Name, time.Duration(ph.Duration), r)
	}
	// The tolerance is one sample interval, or half the set-up when that is
	// longer: a window that took in the set-up (or began a set-up late)
	// is still caught, while a busy machine's late wake-up of the goroutine
	// that opens or closes the window is not taken for one.
	tol := SampleInterval
	if setup/2 > tol {
		tol = setup / 2
	}
	if d := began.Sub(ph.Start); d < -tol || d > tol {
		t.Errorf("%s: sampling began %v from the clock's start", ph.Name, d)
	}
	limit := dur + tol.Seconds()
	for _, s := range r.Series {
		if s.T < 0 || s.T > limit {
			t.Errorf("%s: sample at %.3f s outside the timed window [0, %.3f s + %v]", ph.Name, s.T, dur, tol)
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
