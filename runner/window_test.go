package runner

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/workload"
)

// sampleInterval is the harness's sample interval, the tolerance of a window.
const sampleInterval = 200 * time.Millisecond

// busyProbe stands in for a relay relaybench started that keeps one core
// busy all the time: the CPU seconds it reports are the length of the
// sampled window, and it records when each window began.
type busyProbe struct {
	mu     sync.Mutex
	begins []time.Time
}

func (p *busyProbe) Begin() func() *results.Resources {
	t0 := time.Now()
	p.mu.Lock()
	p.begins = append(p.begins, t0)
	p.mu.Unlock()
	var once sync.Once
	var res *results.Resources
	return func() *results.Resources {
		once.Do(func() {
			w := time.Since(t0)
			res = &results.Resources{RelayCPUSecs: w.Seconds(), RelayPeakRSS: 1 << 20}
			for t := sampleInterval; t < w; t += sampleInterval {
				res.Series = append(res.Series, results.ResourceSample{T: t.Seconds(), RelayCPU: 1, RelayRSS: 1 << 20})
			}
			res.Series = append(res.Series, results.ResourceSample{T: w.Seconds(), RelayCPU: 1, RelayRSS: 1 << 20})
		})
		return res
	}
}

var busyNote = regexp.MustCompile(`relay kept ([0-9.]+) cores busy|relay ([0-9.]+) cores`)

// A relay that holds every connection back 700 ms: each phase's relay
// resources cover its timed window only (the dial is set-up time), so the
// "cores busy" note of a relay that keeps one core busy says one core.
func TestPhaseResourcesCoverTheirTimedWindow(t *testing.T) {
	const delay = 700 * time.Millisecond
	r := testrelay.New(testrelay.Config{ConnectDelay: delay})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := corpus.Generate(ctx, corpus.Params{Seed: 3, Events: 200, Authors: 10, AvgSize: 200,
		Anchor: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Unix()}.WithDefaults(), corpus.Options{CacheDir: "off"})
	if err != nil {
		t.Fatal(err)
	}
	probe := &busyProbe{}
	burst := Workload{Name: "burst", Run: func(ctx context.Context, env Env) ([]results.Phase, error) {
		ph, err := workload.Burst(ctx, env.URL, env.Corpus, workload.BurstOptions{Base: workload.Base{Begin: env.Sample}, Bursts: 2, BurstSize: 30, Every: 300 * time.Millisecond,
			Connections: 2, Size: 100})
		return []results.Phase{ph}, err
	}}
	run, err := Run(ctx, c, Config{Publish: workload.PublishOptions{Connections: 3}, Query: workload.QueryOptions{Queries: 12, Limit: 20},
		Workloads: []Workload{burst}}, Target{URL: r.URL(), Managed: true, Probe: probe})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Phases) != 3 || len(probe.begins) != 3 {
		t.Fatalf("%d phases, %d windows sampled", len(run.Phases), len(probe.begins))
	}
	for i, ph := range run.Phases {
		dur := float64(ph.Duration) / 1e9
		res := ph.Resources
		if d := probe.begins[i].Sub(ph.Start); d < -sampleInterval || d > sampleInterval {
			t.Errorf("%s: sampling began %v from the clock's start", ph.Name, d)
		}
		for _, s := range res.Series {
			if s.T < 0 || s.T > dur+sampleInterval.Seconds() {
				t.Errorf("%s: sample at %.3f s outside [0, %.3f s + one interval]", ph.Name, s.T, dur)
			}
		}
		if res.RelayCPUSecs > dur+sampleInterval.Seconds() || res.RelayCPUSecs < dur/2 {
			t.Errorf("%s: relay CPU %.3f s (one core busy) over a %.3f s phase", ph.Name, res.RelayCPUSecs, dur)
		}
		if ph.SetupSecs < delay.Seconds()*0.9 {
			t.Errorf("%s: setup %.3f s, want at least the %v connect delay", ph.Name, ph.SetupSecs, delay)
		}
		// The judgement divides the window's CPU by the phase's duration.
		notes := strings.Join(ph.Notes, "\n")
		m := busyNote.FindStringSubmatch(notes)
		if m == nil && strings.Contains(notes, "client-limited: the client kept") {
			continue // a busy machine: the note names the client alone
		}
		if m == nil {
			t.Errorf("%s: no relay cores in the notes: %q", ph.Name, ph.Notes)
			continue
		}
		cores, _ := strconv.ParseFloat(m[1]+m[2], 64)
		if want := res.RelayCPUSecs / dur; cores < want-0.01 || cores > want+0.01 || cores < 0.5 {
			t.Errorf("%s: note says the relay kept %.2f cores busy; its CPU over the phase is %.2f", ph.Name, cores, want)
		}
	}
}

// A workload that does not pass env.Sample on is not sampled, and says so.
func TestUnsampledWorkloadIsNoted(t *testing.T) {
	w := Workload{Name: "idle", Run: func(ctx context.Context, env Env) ([]results.Phase, error) {
		if env.Sample == nil {
			t.Error("env.Sample is nil with a probe")
		}
		return []results.Phase{{Name: "idle", Duration: int64(time.Second), Resources: &results.Resources{ClientCPUSecs: 0.1}}}, nil
	}}
	probe := &busyProbe{}
	phases, err := RunWorkload(context.Background(), w, Env{}, probe, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(probe.begins) != 0 || phases[0].Resources.RelayCPUSecs != 0 {
		t.Errorf("sampled around the workload: %d windows, %+v", len(probe.begins), phases[0].Resources)
	}
	if !strings.Contains(strings.Join(phases[0].Notes, "\n"), "resources were not sampled") {
		t.Errorf("notes %q", phases[0].Notes)
	}
}
