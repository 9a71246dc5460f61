package workload

import (
	"strings"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/results"
)

// Sampler starts sampling the relay's resources and returns the function
// that ends the sampling with what was measured (the harness's
// Instance.Begin; nil when the relay is not relaybench's to observe). Every
// workload starts it when its clock starts, once its connections are
// dialled and its subscriptions open, and ends it when the clock stops, so
// that a phase's resources cover exactly its timed window.
type Sampler = func() (end func() *results.Resources)

// sampling is the relay's resource sampling over one timed window.
type sampling struct {
	end   func() *results.Resources
	relay *results.Resources
}

// startSampling starts sampling with begin (nothing when it is nil). Call it
// right before the clock's start is read: the sampling then covers the
// whole timed window (the sampler's first reading takes a few ms).
func startSampling(begin Sampler) *sampling {
	s := &sampling{}
	if begin != nil {
		s.end = begin()
	}
	return s
}

// stop ends the sampling; call it right after the clock's end is read.
// Later calls do nothing.
func (s *sampling) stop() {
	if s != nil && s.end != nil {
		s.relay, s.end = s.end(), nil
	}
}

// into stops the sampling and puts the relay's resources into ph, keeping
// the client CPU the workload measured, cut to ph's timed window when the
// sampling went on after it (see fitWindow).
func (s *sampling) into(ph *results.Phase) {
	s.stop()
	if s == nil || s.relay == nil {
		return
	}
	r := *s.relay
	r.Series = append([]results.ResourceSample(nil), r.Series...)
	if ph.Resources != nil {
		r.ClientCPUSecs = ph.Resources.ClientCPUSecs
		r.ClientCPUUtil = ph.Resources.ClientCPUUtil
	}
	ph.Resources = &r
	fitWindow(&r, float64(ph.Duration)/1e9)
}

// fitWindow cuts resources sampled past a phase's timed window (a phase
// whose end is its last answer, found after waiting for answers that never
// came) to the window of secs seconds: it keeps the samples up to the first
// one at or after secs, and recomputes the relay CPU, peak RSS and client
// CPU from them. Resources that fit are left alone.
func fitWindow(r *results.Resources, secs float64) {
	keep := len(r.Series)
	for i, smp := range r.Series {
		if smp.T >= secs {
			keep = i + 1
			break
		}
	}
	if keep == len(r.Series) {
		return
	}
	r.Series = r.Series[:keep]
	var relay, client, prev float64
	var peak int64
	for _, smp := range r.Series {
		relay += smp.RelayCPU * (smp.T - prev)
		client += smp.ClientCPU * (smp.T - prev)
		prev = smp.T
		peak = max(peak, smp.RelayRSS)
	}
	r.RelayCPUSecs = relay
	if peak > 0 {
		r.RelayPeakRSS = peak
	}
	if r.ClientCPUSecs > client {
		// The workload counted its CPU until it stopped waiting: the
		// series says what the client used within the window.
		if old := r.ClientCPUSecs; old > 0 {
			r.ClientCPUUtil *= client / old
		}
		r.ClientCPUSecs = client
	}
}

// setupSince is the time in seconds from from (mono, when the phase began
// dialling) to the clock's start.
func setupSince(from, start int64) float64 {
	if from <= 0 || start <= from {
		return 0
	}
	return float64(start-from) / 1e9
}

// window is the resources sampled over one timed part of a phase and the
// part's length in seconds.
type window struct {
	relay *results.Resources
	secs  float64
}

// joinWindows joins the resources of a phase's timed parts, end to end:
// CPU adds up, the peak RSS is the largest, the data size is the last, and
// each part's samples are shifted by the lengths of the parts before it, so
// that T counts timed seconds. Nil when no part was sampled.
func joinWindows(wins []window) *results.Resources {
	var out *results.Resources
	var off float64
	for _, w := range wins {
		if r := w.relay; r != nil {
			if out == nil {
				out = &results.Resources{}
			}
			cut := *r
			cut.Series = append([]results.ResourceSample(nil), r.Series...)
			fitWindow(&cut, w.secs)
			out.RelayCPUSecs += cut.RelayCPUSecs
			out.RelayPeakRSS = max(out.RelayPeakRSS, cut.RelayPeakRSS)
			out.RelayDataBytes = cut.RelayDataBytes
			for _, smp := range cut.Series {
				smp.T += off
				out.Series = append(out.Series, smp)
			}
		}
		off += w.secs
	}
	return out
}

// Skipped is the phase of a workload that did not run on this relay, with
// the one-line reason (e.g. the relay does not announce the NIP; a leading
// "skipped: " is left out): no operation ran, so no account blames the
// relay, but the work asked for was not done (judged incomplete).
func Skipped(name, why string) results.Phase {
	why = strings.TrimPrefix(why, "skipped: ")
	ph := results.NewPhase(name, name)
	ph.Skipped, ph.Notes = why, []string{"skipped: " + why}
	return ph
}

// Window is a phase's timed window: opened once its connections are
// dialled and its subscriptions open, closed when its last answer is in.
// Between the two it samples the relay's resources and the client's CPU on
// the monotonic clock; every workload's clock is one of these.
type Window struct {
	setup int64 // mono time the phase began dialling (0: not told)
	smp   *sampling
	cpu0  time.Duration
	cpu   time.Duration
	Start int64 // mono time the clock started
	End   int64 // mono time the clock stopped (0 while open)

	watch func(start, end int64) // the window watcher's (watch.go); nil: none
}

// open starts the clock of a phase that began dialling at setup (mono;
// 0 when it did not dial), with the relay's sampling (b.Begin) and the
// client's CPU.
func (b Base) open(setup int64) *Window {
	watch := windowOpening() // before the relay's sampling and the clock
	w := &Window{setup: setup, smp: startSampling(b.Begin), watch: watch}
	w.cpu0 = CPUTime()
	w.Start = mono.Now()
	return w
}

// Close stops the clock at end (mono; 0: now), no earlier than a
// nanosecond after the start, and ends the sampling. Later calls do
// nothing.
func (w *Window) Close(end int64) {
	if w.End != 0 {
		return
	}
	if end == 0 {
		end = mono.Now()
	}
	w.End = max(end, w.Start+1)
	w.cpu = CPUTime() - w.cpu0
	w.smp.stop()
	if w.watch != nil {
		w.watch(w.Start, w.End)
	}
}

// Trim ends the timed window at end (mono, no earlier than its start): the
// phase's last answer, when the clock went on waiting for answers that
// never came. The client CPU stays as measured until Close; Finish cuts
// the relay's resources to the trimmed window.
func (w *Window) Trim(end int64) {
	w.End = max(end, w.Start)
}

// CPU is the client CPU used while the window was open.
func (w *Window) CPU() time.Duration { return w.cpu }

// Secs is the window's length in seconds (so far, while it is open).
func (w *Window) Secs() float64 {
	end := w.End
	if end == 0 {
		end = mono.Now()
	}
	return float64(end-w.Start) / 1e9
}

// Phase is the phase timed by w (closing it now if it is open): results.NewPhase
// with its start, duration, setup time and client CPU. Finish adds the
// relay's resources once the phase is filled.
func (w *Window) Phase(name, kind string) results.Phase {
	w.Close(0)
	ph := results.NewPhase(name, kind)
	ph.Start = mono.Time(w.Start)
	ph.Duration = w.End - w.Start
	ph.SetupSecs = setupSince(w.setup, w.Start)
	ph.Resources = &results.Resources{ClientCPUSecs: w.cpu.Seconds()}
	return ph
}

// Finish puts the relay's resources sampled over the window into ph (cut
// to ph's duration), keeping the client CPU.
func (w *Window) Finish(ph *results.Phase) {
	w.smp.into(ph)
}
