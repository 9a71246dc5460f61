package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadCommandSendsThePattern(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "load.json")
	r := runCLI(t, "load", "--store", "sink", "-load-base", "500", "-load-duration", "2s", "-load-pool", "32",
		"--size", "200", "--cache-dir", filepath.Join(dir, "cache"), "--out", dir, "--json", out)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// The per-second lines are progress: --no-progress leaves them out.
	if q := runCLI(t, "load", "--store", "sink", "-load-base", "100", "-load-duration", "1s", "--size", "200",
		"--cache-dir", filepath.Join(dir, "cache"), "--out", dir, "--no-progress"); q.code != 0 || strings.Contains(q.stderr, "load t=") {
		t.Errorf("--no-progress: exit %d, per-second lines on stderr:\n%s", q.code, q.stderr)
	}
	// The brief summary lists intended and sent only where they differ
	// from accepted (the counts themselves are checked below).
	if !strings.Contains(r.stdout, "Accepted: 1,000") || strings.Contains(r.stdout, "Intended:") {
		t.Errorf("summary:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "load t=  1s intended     500/s") {
		t.Errorf("no live per-second lines on stderr:\n%s", r.stderr)
	}
	// The header names the keys that signed (50 of the key corpus's 200),
	// as conformance --under-load's does.
	if !strings.Contains(r.stdout, "keys of seed 1 (50 authors)") {
		t.Errorf("header does not say the 50 signing keys:\n%s", r.stdout)
	}
	f := readResults(t, out)
	if f.Runs[0].Corpus.Authors != 50 {
		t.Errorf("corpus authors %d, want the 50 that signed", f.Runs[0].Corpus.Authors)
	}
	ph := f.Runs[0].Phases[0]
	for _, k := range []string{"intended", "sent", "accepted"} {
		if ph.Counts[k] != 1000 {
			t.Errorf("%s = %d, want 1000 (%v)", k, ph.Counts[k], ph.Counts)
		}
	}
	// The relay's resources are sampled (RSS; its CPU may be under one
	// clock tick at this rate), the client's CPU measured.
	if ph.Resources == nil || ph.Resources.RelayPeakRSS <= 0 || ph.Resources.ClientCPUSecs <= 0 {
		t.Errorf("resources %+v: want relay RSS and client CPU", ph.Resources)
	}
	if left := relaysUnder(dir); len(left) > 0 {
		t.Errorf("relays still running: %v", left)
	}
}

func TestLoadSuiteAndConstraints(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("--load-constraints needs root for cgroups")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "suite.json")
	r := runCLI(t, "load", "--store", "sink", "-load-suite", "standard", "-load-base", "100", "-load-peak", "300",
		"-load-duration", "5s", "-load-constraints", "cpu=0.5,mem=256M", "--size", "100",
		"--cache-dir", filepath.Join(dir, "cache"), "--out", dir, "--json", out, "--quiet")
	if r.code != 0 {
		if strings.Contains(r.stderr, "neither is available") {
			t.Skipf("no cgroups here: %s", r.stderr)
		}
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	f := readResults(t, out)
	var names []string
	for _, ph := range f.Runs[0].Phases {
		names = append(names, ph.Name)
		if ph.Counts["accepted"] != ph.Counts["intended"] || ph.Counts["intended"] == 0 {
			t.Errorf("%s: %v", ph.Name, ph.Counts)
		}
		if !strings.Contains(strings.Join(ph.Notes, "\n"), "relay under cpu=0.5,mem=256M (cgroup v") {
			t.Errorf("%s: no resource-limit report in %v", ph.Name, ph.Notes)
		}
	}
	if got := strings.Join(names, " "); got != "load/constant load/ramp load/spike load/sine load/burst" {
		t.Errorf("phases %q", got)
	}
	if left := relaysUnder(dir); len(left) > 0 {
		t.Errorf("relays still running: %v", left)
	}
	if m, _ := filepath.Glob("/sys/fs/cgroup/*/relaybench-sink-*"); len(m) > 0 {
		t.Errorf("cgroups left behind: %v", m)
	}
}

func TestLoadBadFlagsOneLineErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"load", "-load-pattern", "zigzag"}, "--load-pattern: "},
		{[]string{"load", "-load-constraints", "cpu=lots"}, "--load-constraints: "},
		{[]string{"load", "-load-base", "100000", "-load-duration", "60s", "-load-max-events", "1000"}, "--load-max-events "},
		{[]string{"load", "-load-suite", "nope"}, "--load-suite: "},
		{[]string{"load", "--load-mix", "1-1", "--load-kind", "mixed"}, "--load-mix"},
		{[]string{"find-max", "--p99", "0s"}, "--p99"},
		{[]string{"find-max", "--start-rate", "10", "--max-rate", "5"}, "--start-rate"},
	} {
		r := runCLI(t, append(c.args, "--out", t.TempDir())...)
		msg := strings.TrimSpace(r.stderr)
		if r.code == 0 || !strings.Contains(msg, c.want) || strings.Count(msg, "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q: want one line naming %s", c.args, r.code, msg, c.want)
		}
	}
}

func TestFindMaxCommandReportsTheCurve(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "fm.json")
	// A sink answers at once: every step passes a 1 s target, so the search
	// doubles 100 → 200 → 400 and stops at the cap.
	r := runCLI(t, "find-max", "--store", "sink", "--start-rate", "100", "--max-rate", "400", "--step-duration", "1s",
		"--p99", "1s", "--size", "100", "--cache-dir", filepath.Join(dir, "cache"), "--out", dir, "--json", out, "--no-progress")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "find-max: ≥ 400 events/s (the --max-rate cap)") || strings.Contains(r.stderr, " t=  0s ") {
		t.Errorf("stderr (with --no-progress, no per-second lines):\n%s", r.stderr)
	}
	ph := readResults(t, out).Runs[0].Phases[0]
	if ph.Name != "find-max" || len(ph.Groups) != 3 || ph.Rates["max_rate"] != 400 {
		t.Fatalf("phase %q, %d groups, rates %v", ph.Name, len(ph.Groups), ph.Rates)
	}
	for i, want := range []int64{100, 200, 400} {
		g := ph.Groups[i]
		if g.Counts["accepted"] != want || g.Counts["pass"] != 1 || g.Rates["client_cpu_cores"] <= 0 {
			t.Errorf("step %d: %s %v %v", i, g.Name, g.Counts, g.Rates)
		}
	}
	if !strings.Contains(strings.Join(ph.Notes, "\n"), "| 400 | ") {
		t.Errorf("no curve table row for 400/s in %q", ph.Notes)
	}
	if left := relaysUnder(dir); len(left) > 0 {
		t.Errorf("relays still running: %v", left)
	}
}
