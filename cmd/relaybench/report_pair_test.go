package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// writeRelays writes to path a copy of writePassedPublish's file with one
// run per relay named in names. It returns path.
func writeRelays(t *testing.T, path string, names ...string) string {
	t.Helper()
	f, err := results.Read(writePassedPublish(t, path+".one"))
	if err != nil {
		t.Fatal(err)
	}
	one := f.Runs[0]
	f.Runs = nil
	for _, n := range names {
		r := one
		r.Relay.Name = n
		f.Runs = append(f.Runs, r)
	}
	if err := results.Write(path, f); err != nil {
		t.Fatal(err)
	}
	return path
}

// A/B pairs the only relay of each side whatever their names (a store
// change); with several relays and none in both, it is a usage error
// (exit 2) before any report is written.
func TestReportABPairing(t *testing.T) {
	dir := t.TempDir()
	native := writeRelays(t, filepath.Join(dir, "before.json"), "khatru-native")
	badger := writeRelays(t, filepath.Join(dir, "after.json"), "khatru-badger")
	if code := run([]string{"report", "--base", native, "--cand", badger, "-o", filepath.Join(dir, "ab.html")}); code != 0 {
		t.Errorf("one relay on each side: exit %d, want 0", code)
	}
	two := writeRelays(t, filepath.Join(dir, "two.json"), "a", "b")
	other := writeRelays(t, filepath.Join(dir, "other.json"), "c", "d")
	if code := run([]string{"report", "--base", two, "--cand", other, "--force"}); code != 2 {
		t.Errorf("several relays, none in both: exit %d, want 2", code)
	}
}

// --fail-on on the pair of the only relays (one run a side, --force) is
// refused as on one relay by name: 1+1 runs can never show a significant
// change (exit 2, no report), where it printed a limits table with no row
// and passed.
func TestReportFailOnOnThePair(t *testing.T) {
	dir := t.TempDir()
	native := writeRelays(t, filepath.Join(dir, "before.json"), "khatru-native")
	badger := writeRelays(t, filepath.Join(dir, "after.json"), "khatru-badger")
	code, stdout, stderr := runHere(t, "report", "--base", native, "--cand", badger, "--force", "--fail-on", "publish.rate:-10%", "--fail-on", "publish.ok.p99:+25%")
	if code != 2 || !strings.Contains(stderr, "1+1 runs can never show a significant change") || strings.Contains(stdout, "Fail-on limits") {
		t.Errorf("exit %d, want 2 naming 1+1 runs and no report; stdout:\n%s\nstderr: %s", code, stdout, stderr)
	}
}

// rewrite reads the results file at path, changes it with edit and writes
// it to a new file in dir named name. It returns the new file's path.
func rewrite(t *testing.T, path, dir, name string, edit func(*results.File)) string {
	t.Helper()
	f, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	edit(f)
	out := filepath.Join(dir, name)
	if err := results.Write(out, f); err != nil {
		t.Fatal(err)
	}
	return out
}

// An unmerged segment's file against a whole run with another anchor, and
// a load against a mixed run, are refused (exit 2, one line naming the
// difference, the command first), unless --force.
func TestReportABRefusesSegmentsAndOtherCommands(t *testing.T) {
	dir := t.TempDir()
	anchor := func(at int64) func(*results.File) {
		return func(f *results.File) {
			for i := range f.Runs {
				f.Runs[i].Corpus.Anchor = at
			}
		}
	}
	whole := rewrite(t, writeRelays(t, filepath.Join(dir, "one.json"), "strfry"), dir, "whole.json", anchor(1767225600)) // 2026-01-01
	seg := rewrite(t, whole, dir, "seg-0.json", func(f *results.File) {
		anchor(1767225600 + 3600)(f) // an hour later: another corpus
		for i := range f.Runs {
			f.Runs[i].Segment = &results.Segment{Index: 0, Count: 2}
		}
	})
	code, stdout, stderr := runHere(t, "report", "--base", seg, "--cand", whole)
	if code != 2 || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 ||
		!strings.Contains(stderr, "differ in segment (baseline 1: segment 0 of 2 (--segment 0/2), one share of a test: merge the segments' files first (relaybench merge)") ||
		!strings.Contains(stderr, "and in corpus (") {
		t.Errorf("segment against a whole run: exit %d, want 2 and one line naming the segment and the corpus; stdout:\n%s\nstderr: %s", code, stdout, stderr)
	}
	if code, _, stderr := runHere(t, "report", "--base", seg, "--cand", whole, "--force"); code != 0 {
		t.Errorf("--force: exit %d, want 0; stderr: %s", code, stderr)
	}
	mixed := rewrite(t, whole, dir, "mixed.json", func(f *results.File) { f.Command = "mixed" })
	load := rewrite(t, whole, dir, "load.json", func(f *results.File) { f.Command = "load" })
	code, _, stderr = runHere(t, "report", "--base", load, "--cand", mixed)
	if code != 2 || !strings.Contains(stderr, "baseline and candidate differ in command (baseline 1: load; candidate 1: mixed)") {
		t.Errorf("load against mixed: exit %d, want 2 naming the commands; stderr: %s", code, stderr)
	}
}
