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
	if !strings.Contains(run, "segments 0/2, 1/2 of segment 0's command line (the Command line above): ") || strings.Contains(run, "--events") || strings.Contains(run, "seg0.json") || strings.Contains(run, "dir") {
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

// The merged notes come in order: the merge's own (what was merged and
// how, the per-second percentiles not merged), then what every segment
// said, then segment 0's own, segment 1's: a newcomer's merged summary
// read segment 0, both, segment 1 interleaved.
func TestMergedNotesInOrder(t *testing.T) {
	got := prefixed(2, func(i int) []string {
		return []string{fmt.Sprintf("window %d ms", i), "closed loop: 3 connections", fmt.Sprintf("tick %d", i)}
	})
	want := []string{"each of the 2 segments: closed loop: 3 connections", "segment 0: window 0 ms", "segment 0: tick 0",
		"segment 1: window 1 ms", "segment 1: tick 1"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	var in []Input
	for i := range 2 {
		f := segFile(i, 2, t0, []int64{1000, 2000})
		f.Runs[0].Phases[0].Series[0].LatP50Ns = 5 // per-second percentiles: the merge notes it does not merge them
		f.Runs[0].Notes = []string{fmt.Sprintf("segment %d's own note", i)}
		f.Args = []string{"run", "--segment", fmt.Sprintf("%d/2", i)}
		in = append(in, Input{Name: fmt.Sprintf("seg%d.json", i), File: f})
	}
	m, err := Merge(context.Background(), in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	notes := m.Runs[0].Notes
	if len(notes) != 4 || !strings.HasPrefix(notes[0], "segments 0/2, 1/2 of segment 0's command line") || !strings.HasPrefix(notes[1], "per-second p50/p99 are not merged") ||
		notes[2] != "segment 0: segment 0's own note" || notes[3] != "segment 1: segment 1's own note" {
		t.Errorf("run notes not the merge's first, then segment 0's, segment 1's:\n%s", strings.Join(notes, "\n"))
	}
}
