package runner

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testkit"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/workload"
)

var busyNote = regexp.MustCompile(`relay kept ([0-9.]+) cores busy|relay ([0-9.]+) cores`)

// A relay that holds every connection back 700 ms: each phase's relay
// resources cover its timed window only (the dial is set-up time), so the
// "cores busy" note of a relay that keeps one core busy says one core.
func TestPhaseResourcesCoverTheirTimedWindow(t *testing.T) {
	const delay = 700 * time.Millisecond
	r := testrelay.Start(t, testrelay.Config{ConnectDelay: delay})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := smallCorpus(t, ctx, 200, 10, 200)
	probe := &testkit.BusySampler{}
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
	// Three phase windows, then burst's own reading at each of its 2 bursts
	// (its CPU during the bursts), inside its phase's window. A burst whose
	// reading's goroutine woke after the whole phase was over (30 events
	// answered at once; a CI run under stress-ng) is not measured: the CPU
	// during the bursts is then over those that were. 3 windows and 0 to 2
	// burst readings.
	if n := len(probe.Begins()); len(run.Phases) != 3 || n < 3 || n > 3+2 {
		t.Fatalf("%d phases, %d windows sampled (want 3 phases, 3 windows and up to 2 bursts)", len(run.Phases), n)
	}
	for i, ph := range run.Phases {
		testkit.CheckWindow(t, ph, probe.Begins()[i], delay)
		dur, res := float64(ph.Duration)/1e9, ph.Resources
		// The judgement divides the window's CPU by the phase's duration.
		notes := strings.Join(ph.Notes, "\n")
		m := busyNote.FindStringSubmatch(notes)
		if ph.Duration < int64(minJudgedPhase) && ph.Name != "burst" {
			// publish and query of 200 events may take a few ms: too short
			// to judge; burst waits 300 ms between its bursts.
			if m != nil || !strings.Contains(notes, "too short to judge") {
				t.Errorf("%s: %v phase judged: %q", ph.Name, time.Duration(ph.Duration), ph.Notes)
			}
			continue
		}
		if ph.Name == "burst" {
			// A burst phase is judged on the CPU during its bursts
			// (workload's burst readings), not its window's average;
			// its window is checked above.
			if !strings.Contains(notes, "too short to judge") && !strings.Contains(notes, "during the bursts") {
				t.Errorf("burst: judged on neither its bursts' CPU nor said too short: %q", ph.Notes)
			}
			continue
		}
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
	probe := &testkit.BusySampler{}
	phases, err := RunWorkload(context.Background(), w, Env{}, probe, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(probe.Begins()) != 0 || phases[0].Resources.RelayCPUSecs != 0 {
		t.Errorf("sampled around the workload: %d windows, %+v", len(probe.Begins()), phases[0].Resources)
	}
	if !strings.Contains(strings.Join(phases[0].Notes, "\n"), "resources were not sampled") {
		t.Errorf("notes %q", phases[0].Notes)
	}
}
