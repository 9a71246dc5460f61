package report

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/results"
)

// withCorpus sets every run of f to a generated corpus with anchor (unix
// seconds, 0 unknown).
func withCorpus(f *results.File, anchor int64) *results.File {
	for i := range f.Runs {
		f.Runs[i].Corpus = results.Corpus{Seed: 1, Events: 2000, Authors: 10, AvgSize: 256, Anchor: anchor}
	}
	return f
}

// A segment's file (run --segment 0/2, not merged) is one share of a test:
// against a whole run it is refused, saying to merge the segments first,
// and a different anchor is named as a different corpus, in one line. The
// merge of the segments, and two sides with the same anchor (or one that
// does not know it), are compared.
func TestComparableRefusesASegmentAgainstAWholeRun(t *testing.T) {
	jan := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	whole := withCorpus(gateFile("r", 1, 2), jan+3600)
	seg := withCorpus(gateFile("r", 1, 2), jan)
	for i := range seg.Runs {
		seg.Runs[i].Segment = &results.Segment{Index: 0, Count: 2}
	}
	err := Comparable([]*results.File{seg}, []*results.File{whole})
	if err == nil {
		t.Fatal("segment 0/2 against a whole run: compared")
	}
	msg := err.Error()
	for _, want := range []string{"baseline and candidate differ in segment (baseline 1: segment 0 of 2 (--segment 0/2), one share of a test: merge",
		"relaybench merge", "candidate 1: the whole test)", " and in corpus (", "anchor 2026-01-01T00:00:00Z", "anchor 2026-01-01T01:00:00Z", "--force"} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in %q", want, msg)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("not one line: %q", msg)
	}
	merged := withCorpus(gateFile("r", 1, 2), jan+3600)
	merged.Merged = &results.Merged{Segments: 2}
	for i := range merged.Runs {
		merged.Runs[i].Segment = &results.Segment{Index: 0, Count: 2}
	}
	if err := Comparable([]*results.File{merged}, []*results.File{whole}); err != nil {
		t.Errorf("a merged file against a whole run: %v", err)
	}
	if err := Comparable([]*results.File{withCorpus(gateFile("r", 1), 0)}, []*results.File{whole}); err != nil {
		t.Errorf("an anchor one side does not know: %v", err)
	}
	if err := Comparable([]*results.File{withCorpus(gateFile("r", 1), jan)}, []*results.File{whole}); err == nil || !strings.Contains(err.Error(), "differ in corpus") {
		t.Errorf("anchors an hour apart: %v", err)
	}
}

// loadFile is a load results file that published fresh events of size
// bytes, with a key corpus of 200 small events.
func loadFile(command string, size int) *results.File {
	f := gateFile("r", 1)
	f.Command = command
	r := &f.Runs[0]
	r.Corpus = results.Corpus{Seed: 1, Events: 200, Authors: 50, AvgSize: 64}
	r.Phases = []results.Phase{{Name: "load", Workload: "load", Params: map[string]any{"kind": "publish", "size": size}, Counts: map[string]int64{"sent": 9000}}}
	return f
}

// Load against mixed: the refusal names the command difference first,
// and each side's events as its summary does — the load's fresh events,
// not its key corpus of 200 small events. run and compare are one command.
func TestComparableNamesTheCommandFirst(t *testing.T) {
	load := loadFile("load", 1024)
	mixed := gateFile("r", 1)
	mixed.Command = "mixed"
	mixed.Runs[0].Corpus = results.Corpus{Seed: 1, Events: 10000, Authors: 200, AvgSize: 1024}
	err := Comparable([]*results.File{load}, []*results.File{mixed})
	if err == nil {
		t.Fatal("load against mixed: compared")
	}
	msg := err.Error()
	want := "baseline and candidate differ in command (baseline 1: load; candidate 1: mixed) and in events (baseline 1: fresh events signed before the clock, average content 1,024 B, keys of seed 1 (50 authors); candidate 1: 10,000 events, 200 authors, average content 1,024 B, seed 1)"
	if !strings.HasPrefix(msg, want) || !strings.Contains(msg, "--force") || strings.Contains(msg, "200 events") {
		t.Errorf("got  %q\nwant %q…", msg, want)
	}
	if err := Comparable([]*results.File{load}, []*results.File{loadFile("load", 1024)}); err != nil {
		t.Errorf("two loads of the same fresh events: %v", err)
	}
	if err := Comparable([]*results.File{load}, []*results.File{loadFile("load", 64)}); err == nil ||
		!strings.Contains(err.Error(), "differ in events (baseline 1: fresh events signed before the clock, average content 1,024 B") || strings.Contains(err.Error(), "command") {
		t.Errorf("loads of other fresh events: %v", err)
	}
	run, cmp := gateFile("r", 1), gateFile("r", 1)
	run.Command, cmp.Command = "run", "compare"
	if err := Comparable([]*results.File{cmp}, []*results.File{run}); err != nil {
		t.Errorf("compare against run: %v", err)
	}
}

// A comparison made with --force of runs Comparable refuses says so first,
// with what differs, in the terminal, Markdown and HTML (a walk's forced
// A/B of other content sizes opened with "publish events/s … 1.05×" and
// never said the corpus differed); comparable runs get no such line.
func TestForcedCompareSaysWhatDiffers(t *testing.T) {
	base, cand := loadFile("load", 1024), loadFile("load", 64)
	const want = "Compared with --force although baseline and candidate differ in events (baseline 1: fresh events signed before the clock, average content 1,024 B"
	for _, format := range []string{"text", "md", "html"} {
		var b strings.Builder
		var err error
		if format == "html" {
			err = CompareHTML(&b, []*results.File{base}, []*results.File{cand}, Options{}, nil)
		} else {
			err = Compare(&b, []*results.File{base}, []*results.File{cand}, format)
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), want) {
			t.Errorf("%s: no line saying the forced difference:\n%.600s", format, b.String())
		}
	}
	var b strings.Builder
	if err := Compare(&b, []*results.File{base}, []*results.File{loadFile("load", 1024)}, "text"); err != nil || strings.Contains(b.String(), "--force") {
		t.Errorf("comparable runs: %v\n%.600s", err, b.String())
	}
}
