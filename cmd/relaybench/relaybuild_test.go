package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// Every command that starts the embedded relay records its catalog build,
// and its Relay line gives it first: lifecycle (one of the commands that
// run their workload without the publish-and-query runner) gave only the
// relay's NIP-11 claim where run gave the build.
func TestRelayBuildInEveryCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	res := runCLI(t, "lifecycle", "--no-progress", "--cache-dir", "off", "--out", dir, "--json", out)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, lastLines(res.stderr, 5))
	}
	stdout := res.stdout
	f, err := results.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if b := f.Runs[0].Relay.Build; !strings.HasPrefix(b, "khatru ") {
		t.Errorf("relay.build %q, want the catalog's pinned versions", b)
	}
	if !strings.Contains(stdout, "started by relaybench; its NIP-11 says: ") {
		t.Errorf("the Relay line does not give the build first:\n%s", lastLines(stdout, 30))
	}
}
