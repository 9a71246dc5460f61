package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// TestLiveCommandsEndToEnd runs each live workload command against the
// embedded relay (memory store, started by relaybench) and checks the
// results file: one run, the expected phases, verification where it applies,
// relay resources sampled, and no relay left running.
func TestLiveCommandsEndToEnd(t *testing.T) {
	cache := t.TempDir()
	for _, tc := range []struct {
		name   string
		args   []string
		phases []string
	}{
		{"subscribe", []string{"-sub-count", "6", "-events", "300", "-size", "200"}, []string{"subscribe"}},
		{"lifecycle", []string{"-timing-events", "100", "-size", "200"}, []string{"lifecycle"}},
		{"burst", []string{"-bursts", "2", "-burst-size", "100", "-every", "300ms", "-between-rate", "50", "-size", "200"}, []string{"burst"}},
		{"sweep", []string{"-sizes", "128,600000", "-events", "300"}, []string{"sweep/128"}},
		{"mixed", []string{"-events", "200", "-duration", "300ms", "-publish-rate", "200", "-query-rate", "20"}, []string{"publish", "mixed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{tc.name, "--store", "memory", "--out", out, "--cache-dir", cache, "--no-progress"}, tc.args...)
			res := runCLI(t, args...)
			if res.code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
			}
			files, _ := filepath.Glob(filepath.Join(out, tc.name+"-*.json"))
			if len(files) != 1 {
				t.Fatalf("want one results file, got %v", files)
			}
			f, err := results.Read(files[0])
			if err != nil {
				t.Fatal(err)
			}
			if f.Command != tc.name || len(f.Runs) != 1 {
				t.Fatalf("command %q, %d runs", f.Command, len(f.Runs))
			}
			r := f.Runs[0]
			if len(r.Phases) != len(tc.phases) {
				t.Fatalf("phases %d, want %v", len(r.Phases), tc.phases)
			}
			for i, want := range tc.phases {
				ph := r.Phases[i]
				if ph.Name != want {
					t.Errorf("phase %d is %q, want %q", i, ph.Name, want)
				}
				if ph.Duration <= 0 || ph.Resources == nil || ph.Resources.RelayCPUSecs <= 0 || ph.Resources.ClientCPUSecs <= 0 {
					t.Errorf("%s: duration %d resources %+v", ph.Name, ph.Duration, ph.Resources)
				}
				if ph.Verification != nil && !ph.Verification.Passed {
					t.Errorf("%s: verification %+v", ph.Name, ph.Verification)
				}
			}
			if tc.name == "sweep" && !strings.Contains(strings.Join(r.Phases[0].Notes, "\n"), "600,000 bytes skipped") {
				t.Errorf("skipped size not noted: %v", r.Phases[0].Notes)
			}
			if !r.Relay.Managed || r.Relay.Software == "" {
				t.Errorf("relay %+v", r.Relay)
			}
			if left := relaysUnder(out); len(left) > 0 {
				t.Fatalf("relay left running: %v", left)
			}
		})
	}
}
