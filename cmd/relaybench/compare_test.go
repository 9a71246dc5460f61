package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/harness"
	"github.com/relaybench/relaybench/results"
)

func TestCompareKhatruStoresAndRelayer(t *testing.T) {
	integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := harness.Install(ctx, "relayer-postgres", harness.Options{}); err != nil {
		t.Fatalf("install relayer: %v", err)
	}
	out := t.TempDir()
	relays := []string{"khatru-badger", "khatru-memory", "relayer-postgres"}
	res := runCLI(t, "compare", "-relays", strings.Join(relays, ","), "-events", "300", "-queries", "18",
		"-concurrency", "4", "--out", out, "--cache-dir", t.TempDir(), "--no-progress", "--anchor", testAnchor)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	jsons, _ := filepath.Glob(filepath.Join(out, "compare-*.json")) // and its .md beside it: no --json
	if len(jsons) != 1 {
		t.Fatalf("results files %v, want one", jsons)
	}
	f, err := results.Read(jsons[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runs) != len(relays) {
		t.Fatalf("runs %d, want %d", len(f.Runs), len(relays))
	}
	for i, r := range f.Runs {
		if r.Relay.Name != relays[i] || !r.Relay.Managed || r.Relay.Software == "" {
			t.Errorf("run %d relay %+v", i, r.Relay)
		}
		pub, q := r.Phase("publish"), r.Phase("query")
		if pub == nil || q == nil {
			t.Fatalf("%s: phases %v", r.Relay.Name, r.Phases)
		}
		if pub.Counts["accepted"] != 300 {
			t.Errorf("%s: accepted %d of 300 (refused %v)", r.Relay.Name, pub.Counts["accepted"], pub.Refused)
		}
		v := q.Verification
		if !v.Passed || v.Missing != 0 || v.Extra != 0 || v.Invalid != 0 || v.Checked != 18 {
			t.Errorf("%s: verification %+v", r.Relay.Name, v)
		}
		if pub.Resources == nil || pub.Resources.RelayCPUSecs <= 0 || pub.Resources.RelayPeakRSS <= 0 || (pub.Resources.RelayDataBytes <= 0 && r.Relay.Name != "khatru-memory") {
			t.Errorf("%s: resources %+v", r.Relay.Name, pub.Resources)
		}
	}
	// The comparison tables, in the terminal and in Markdown.
	md, err := os.ReadFile(strings.TrimSuffix(jsons[0], ".json") + ".md")
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{res.stdout, string(md)} {
		for _, want := range append([]string{"Publishing", "Querying", "Verification", "Resources"}, relays...) {
			if !strings.Contains(text, want) {
				t.Errorf("comparison lacks %q", want)
			}
		}
	}
	if left := relaysUnder(out); len(left) > 0 {
		t.Fatalf("relays left running: %v", left)
	}
	if left := postgresLeft(out); len(left) > 0 {
		t.Fatalf("PostgreSQL left running: %v", left)
	}
}

func TestCompareSkipsAbsentBinary(t *testing.T) {
	out := t.TempDir()
	res := runCLI(t, "compare", "-relays", "khatru-memory,strfry", "-events", "50", "-queries", "6",
		"--out", out, "--cache-dir", t.TempDir(), "--no-progress", "--quiet")
	// A relay asked for but not run: relaybench could not do the requested
	// work (exit 1), and says why in one line; the other relay is measured.
	if res.code != 1 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "strfry will be skipped: it needs a binary you supply, and no package registry has it: build it from its source") {
		t.Fatalf("want one clear skip line, got:\n%s", res.stderr)
	}
}

func TestCompareUnknownRelay(t *testing.T) {
	res := runCLI(t, "compare", "-relays", "khatru-badger,nosuchrelay", "--out", t.TempDir(), "--no-progress")
	if res.code == 0 || !strings.Contains(res.stderr, "nosuchrelay") {
		t.Fatalf("exit %d stderr %s", res.code, res.stderr)
	}
}

// Ctrl-C in the middle of a compare stops the relay under test and any
// PostgreSQL it started; nothing survives.
func TestCompareCtrlCLeavesNothing(t *testing.T) {
	needCgoStores(t)
	out := t.TempDir()
	relays := "khatru-sqlite3,khatru-lmdb"
	if os.Getenv("RELAYBENCH_INTEGRATION") == "1" {
		relays = "relayer-postgres,khatru-lmdb"
	}
	p := startCLI(t, "compare", "-relays", relays, "-events", "4000", "-concurrency", "1",
		"--out", out, "--cache-dir", t.TempDir(), "--json", filepath.Join(out, "c.json"))
	p.until(t, func(l string) bool { return strings.HasPrefix(l, "Publishing") }, 3*time.Minute, "compare publishing")
	time.Sleep(500 * time.Millisecond)
	p.interrupt()
	if code := p.exit(t, 90*time.Second); code != 130 {
		t.Fatalf("exit %d, want 130", code)
	}
	f, err := results.Read(filepath.Join(out, "c.json"))
	if err != nil {
		t.Fatalf("results not saved: %v", err)
	}
	// The relay whose turn never came is named, cancelled, not dropped.
	if n := len(f.Runs); n != 2 || f.Runs[1].Relay.Name != "khatru-lmdb" || !strings.HasPrefix(f.Runs[1].Skipped, "cancelled") {
		t.Fatalf("want the second relay named as cancelled, got %d runs: %+v", n, f.Runs)
	}
	if left := relaysUnder(out); len(left) > 0 {
		t.Fatalf("relays left running: %v", left)
	}
	if left := postgresLeft(out); len(left) > 0 {
		t.Fatalf("PostgreSQL left running: %v", left)
	}
}
