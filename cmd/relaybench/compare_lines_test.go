package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
)

// TestCompareWorkloadLinesGoThroughTheProgress: what a workload says
// while compare runs it (mixed's parts, a skip) goes through the
// session's progress reporter, as run's does, which prints it above a
// bar drawn on a terminal (progress.Reporter.Write): written straight to
// standard error, the bar's next redraw erased it. Here the reporter
// writes to a buffer: a line written elsewhere is not in it.
func TestCompareWorkloadLinesGoThroughTheProgress(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()
	var out bytes.Buffer
	s := &session{ctx: ctx, prog: progress.New(&out, true)}
	crp, err := corpus.Generate(ctx, corpus.Params{Seed: 3, Events: 20, Authors: 5, AvgSize: 100}.WithDefaults(), corpus.Options{CacheDir: "off"})
	if err != nil {
		t.Fatal(err)
	}
	probe := runner.Workload{Name: "probe", Run: func(ctx context.Context, env runner.Env) ([]results.Phase, error) {
		update := env.Progress("probe: 2 steps", 2)
		update(1)
		fmt.Fprintln(env.Log, "probe: second step")
		update(2)
		return nil, nil
	}}
	cfg := s.config(runner.Config{SkipPublish: true, SkipQuery: true, Workloads: []runner.Workload{probe}})
	c := &compareCmd{Repeat: 1}
	file := &results.File{}
	refs := []relayRef{{Given: "a", URL: testrelay.Start(t, testrelay.Config{}).URL()}}
	if err := c.runRelays(ctx, file, refs, crp, cfg, map[string]any{}); err != nil {
		t.Fatal(err)
	}
	i, j := strings.Index(out.String(), "probe: 2 steps..."), strings.Index(out.String(), "probe: second step\n")
	if i < 0 || j < i {
		t.Errorf("the workload's line is not after its phase's start in the reporter's output:\n%s", out.String())
	}
}
