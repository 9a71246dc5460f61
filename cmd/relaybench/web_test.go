package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/workload"
)

// TestWebFlags: --web, --web-keep, --prometheus-rw and --relay-metrics
// refuse bad values as usage errors, on every measuring command (they are
// in outputFlags), before anything runs; a non-loopback --web needs
// --web-any-address.
func TestWebFlags(t *testing.T) {
	cases := []usageCase{}
	for _, cmd := range []string{"run", "subscribe", "load", "conformance"} {
		cases = append(cases,
			usageCase{[]string{cmd, "--web", "0.0.0.0:8080"}, []string{"--web 0.0.0.0:8080", "not a loopback address", "--web-any-address"}},
			usageCase{[]string{cmd, "--web", "abc"}, []string{`--web "abc"`, "want a port or HOST:PORT"}},
			usageCase{[]string{cmd, "--web-keep", "5s"}, []string{"need --web ADDR"}},
			usageCase{[]string{cmd, "--web", "0", "--web-keep", "-1s"}, []string{"--web-keep -1s: must not be negative"}},
			usageCase{[]string{cmd, "--prometheus-rw", "ftp://x"}, []string{`--prometheus-rw "ftp://x"`, "http(s) URL"}},
			usageCase{[]string{cmd, "--relay-metrics", "metrics"}, []string{`--relay-metrics "metrics"`, "/metrics"}},
			usageCase{[]string{cmd, "--web", ""}, []string{"--web: empty value"}},
			usageCase{[]string{cmd, "--prometheus-rw="}, []string{"--prometheus-rw: empty value"}},
			usageCase{[]string{cmd, "--relay-metrics", " "}, []string{"--relay-metrics: empty value"}},
		)
	}
	wantUsage(t, cases)
}

// TestInterruptedRunClosesTheLiveViewWithinASecond: once the run is
// interrupted (Ctrl-C, SIGTERM), the last remote-write push and the
// server's shutdown get closeBudgetInterrupted, not closeBudget (a
// receiver that does not answer held the exit 10 s).
func TestInterruptedRunClosesTheLiveViewWithinASecond(t *testing.T) {
	run, stop := context.WithCancel(context.Background())
	ctx, cancel := closeContext(run)
	dl, _ := ctx.Deadline()
	cancel()
	if time.Until(dl) <= closeBudgetInterrupted {
		t.Fatalf("a running run's close has less than %s", closeBudgetInterrupted)
	}
	stop()
	ctx, cancel = closeContext(run)
	defer cancel()
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > closeBudgetInterrupted || closeBudgetInterrupted > time.Second {
		t.Fatalf("an interrupted run's close may take %s", time.Until(dl))
	}
}

// TestLiveViewOfSeveralRelays: the live view of a command measuring
// relays one after another (compare) shows each phase as it ends, named
// with the relay it measured, and the relay's own metrics (--relay-metrics
// /metrics on each relay's address) read per relay, checked beside
// relaybench's counts.
func TestLiveViewOfSeveralRelays(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second) // a hang guard
	defer cancel()
	var events atomic.Int64
	relays := map[string]*testrelay.Relay{}
	for _, name := range []string{"a", "b"} {
		r := testrelay.Start(t, testrelay.Config{})
		relays[name] = r
	}
	// The relays' metrics: one server answering for both, on its own
	// address (--relay-metrics URL reads the same endpoint for each).
	metricsSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "# TYPE nostr_cmd_req_total counter\nnostr_cmd_req_total %d\n", events.Add(7))
	}))
	defer metricsSrv.Close()
	prog := progress.New(io.Discard, false)
	w, err := startWeb(ctx, webFlags{Web: "0", RelayMetrics: flagValue(metricsSrv.URL)}, "compare", "-", time.Now(), prog)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close(ctx)
	c, err := corpus.Generate(ctx, corpus.Params{Seed: 3, Events: 40, Authors: 5, AvgSize: 100}.WithDefaults(), corpus.Options{CacheDir: "off"})
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"a", "b"} {
		url := relays[name].URL()
		cfg := runner.Config{Query: workload.QueryOptions{Queries: 5, Limit: 10}}
		cfg.Workloads = []runner.Workload{{Name: "probe", Run: func(ctx context.Context, env runner.Env) ([]results.Phase, error) {
			// The workload under way is the phase in flight (it announces
			// no progress of its own).
			w.st.Tick()
			if h := w.st.History(); h[len(h)-1].Phase != "probe" {
				t.Errorf("relay %s: phase in flight %q, want probe", name, h[len(h)-1].Phase)
			}
			// While this relay's third step runs, its first two are shown.
			phs := w.st.Phases()
			if len(phs) != 2*i+2 || phs[2*i].Relay != url || phs[2*i+1].Name != "query" {
				t.Errorf("relay %s: shown while its run goes: %+v", name, phs)
			}
			if len(phs[2*i+1].RelayChecks) != 1 || phs[2*i+1].RelayChecks[0].Series != "nostr_cmd_req_total" {
				t.Errorf("relay %s: query phase's relay checks %+v", name, phs[2*i+1].RelayChecks)
			}
			return nil, nil
		}}}
		w.hook(&cfg)
		if _, err := runner.Run(ctx, c, cfg, runner.Target{URL: url}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(w.recorders()); n != 2 {
		t.Errorf("%d relay metrics readings, want one per relay", n)
	}
}

// TestSignalAfterTheRunEndsTheKeep: once a run ended (its verdict printed,
// its results saved), a signal ends --web-keep and the live view, not the
// run: the run's context is not cancelled (the exit status stays the
// run's, not 130), and a signal after the end interrupts as usual.
func TestSignalAfterTheRunEndsTheKeep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := startWeb(ctx, webFlags{Web: "0", WebKeep: time.Hour}, "run", "-", time.Now(), progress.New(io.Discard, false))
	if err != nil {
		t.Fatal(err)
	}
	if endServing(os.Interrupt) {
		t.Fatal("a signal during the run was taken for one after it")
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		w.end(ctx, &results.File{Verdict: &results.Verdict{Status: 0, Outcome: "passed"}})
	}()
	deadline := time.Now().Add(time.Minute) // hang guard
	for !endServing(os.Interrupt) {
		if time.Now().After(deadline) {
			t.Fatal("the run's end never began")
		}
		time.Sleep(10 * time.Millisecond) // polling pace: end runs on its own goroutine
	}
	select {
	case <-ended:
	case <-time.After(time.Minute): // hang guard: the keep is an hour
		t.Fatal("a signal after the run did not end --web-keep")
	}
	if ctx.Err() != nil {
		t.Fatal("a signal after the run cancelled the run")
	}
	if endServing(os.Interrupt) {
		t.Fatal("a signal after the live view stopped was still taken for the keep's")
	}
}

// partLines gives the live view the part a workload's line names as it
// starts ("mixed: together (10s)"), passes every line on, and names no
// part for a skip line or another workload's line.
func TestPartLines(t *testing.T) {
	var out strings.Builder
	var parts []string
	w := partLines{&out, "mixed: ", func(p string) { parts = append(parts, p) }}
	for _, l := range []string{"mixed: together (10s)\n", "mixed: skipped on ws://x: no\n", "load: x\n"} {
		fmt.Fprint(w, l)
	}
	if strings.Join(parts, "|") != "together (10s)" || strings.Count(out.String(), "\n") != 3 {
		t.Errorf("parts %q, passed on %q", parts, out.String())
	}
}
