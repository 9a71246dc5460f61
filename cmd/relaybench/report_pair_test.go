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
