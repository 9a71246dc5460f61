package merge

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The merged file's command is segment 0's, --segment 0/2 as it ran it
// (pasted into a shell, it runs a real segment), without its own output
// flags, and the merge's own command line is its Merged one; its run note
// names the segments and segment 0's command without its output flags;
// how phases are merged is said once for the run, not in every phase.
func TestMergedCommandAndNotesOnce(t *testing.T) {
	var in []Input
	for i := range 2 {
		f := segFile(i, 2, t0, []int64{1000, 2000})
		f.Runs[0].Phases[0].Series[0].LatP50Ns = 5 // per-second percentiles, which are not merged
		f.Runs[0].Phases = append(f.Runs[0].Phases, f.Runs[0].Phases[0])
		f.Runs[0].Phases[1].Name = "query"
		f.Args = []string{"run", "--events", "300", "--segment", string(rune('0'+i)) + "/2", "--json", "seg" + string(rune('0'+i)) + ".json", "--out=dir"}
		in = append(in, Input{Name: "seg" + string(rune('0'+i)) + ".json", File: f})
	}
	args := []string{"merge", "seg0.json", "seg1.json", "-o", "m.json"}
	m, err := Merge(context.Background(), in, Options{Args: args})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Merged.Command, args) || m.Command != "run" || strings.Join(m.Args, " ") != "run --events 300 --segment 0/2" {
		t.Errorf("command %q args %q, merge's %q", m.Command, m.Args, m.Merged.Command)
	}
	run := strings.Join(m.Runs[0].Notes, "\n")
	if !strings.Contains(run, "segments 0/2, 1/2 of relaybench run --events 300 --segment 0/2 (segment 0's command line): ") || strings.Contains(run, "seg0.json") || strings.Contains(run, "dir") {
		t.Errorf("run notes:\n%s", run)
	}
	if n := strings.Count(run, "per-second p50/p99 are not merged"); n != 1 {
		t.Errorf("per-second note %d times in the run's notes:\n%s", n, run)
	}
	for _, p := range m.Runs[0].Phases {
		for _, n := range p.Notes {
			if strings.Contains(n, "merged from") || strings.Contains(n, "window runs from") || strings.Contains(n, "per-second p50/p99") {
				t.Errorf("phase %s repeats a merge note: %s", p.Name, n)
			}
		}
	}
	m, err = Merge(context.Background(), in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.Args, " "); got != "run --events 300 --segment 0/2" {
		t.Errorf("without the merge's command: args %q", got)
	}
}

// A note that each segment starts with its own "segment I/N: " and that
// otherwise is the same is given once, of each segment.
func TestPrefixedOwnSegment(t *testing.T) {
	got := prefixed(2, func(i int) []string {
		return []string{fmt.Sprintf("segment %d/2: this segment's share of the queries", i), fmt.Sprintf("window %d ms", i)}
	})
	want := []string{"each of the 2 segments: this segment's share of the queries", "segment 0: window 0 ms", "segment 1: window 1 ms"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
