package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/live"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
)

// TestPlainMixedShowsThePartUnderWay: the mixed command's --web page says
// which part is under way, as run --workloads mixed's does: a live
// command's workload tells the live view of itself through the same code
// (webRun.workload), where the page showed the plan but no part. With
// --no-progress the part lines stay off standard error, not off the page;
// a skip line is printed either way.
func TestPlainMixedShowsThePartUnderWay(t *testing.T) {
	for _, noProgress := range []bool{false, true} {
		var stderr bytes.Buffer
		w := &webRun{st: live.New(live.Options{Run: "r", Command: "mixed"})}
		s := &liveSession{session: &session{ctx: context.Background(), prog: progress.New(&stderr, !noProgress), web: w}, run: &results.Run{}}
		var of string
		wl := runner.Workload{Name: "mixed", Run: func(ctx context.Context, env runner.Env) ([]results.Phase, error) {
			fmt.Fprintln(env.Log, "mixed: together (2s)")
			w.st.Tick()
			h := w.st.History()
			of = h[len(h)-1].Of
			fmt.Fprintln(env.Log, "mixed: skipped on ws://x: no")
			return nil, nil
		}}
		if noProgress {
			wl = withQuietParts(wl)
		}
		if err := s.measure(wl, nil, nil); err != nil {
			t.Fatal(err)
		}
		w.st.Close()
		if !strings.Contains(of, "now: together (2s)") {
			t.Errorf("--no-progress %v: the page's phase in flight says %q, not the part under way", noProgress, of)
		}
		if printed := strings.Contains(stderr.String(), "mixed: together (2s)\n"); printed == noProgress || !strings.Contains(stderr.String(), "skipped on ws://x") {
			t.Errorf("--no-progress %v: standard error %q", noProgress, stderr.String())
		}
	}
}
