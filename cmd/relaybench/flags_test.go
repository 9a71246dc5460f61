package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alecthomas/kong"

	"github.com/relaybench/relaybench/results"
)

// TestBadFlagValuesAreUsageErrors: every bad value of every numeric,
// duration or list flag is refused with one line naming the flag and the
// value, exit status 2, before anything is signed, started or written.
func TestBadFlagValuesAreUsageErrors(t *testing.T) {
	cases := []struct {
		cmd  string
		args []string
		want []string // the flag and the value
	}{
		{"run", []string{"--events", "0"}, []string{"--events", "0"}},
		{"run", []string{"-events", "-5"}, []string{"--events", "-5"}},
		{"run", []string{"--events=-5"}, []string{"--events -5", "at least 1"}},
		{"run", []string{"--events", "60000000"}, []string{"--events 60000000", "at most"}},
		{"run", []string{"--size", "0"}, []string{"--size", "0"}},
		{"run", []string{"--authors", "0"}, []string{"--authors", "0"}},
		{"run", []string{"--anchor", "yesterday"}, []string{"--anchor", "yesterday"}},
		{"run", []string{"--anchor", "2999-01-01T00:00:00Z"}, []string{"--anchor", "2999"}},
		{"run", []string{"--concurrency", "0"}, []string{"--concurrency 0"}},
		{"run", []string{"--window", "0", "--mode", "pipeline"}, []string{"--window 0"}},
		{"run", []string{"--timeout", "0s"}, []string{"--timeout 0s"}},
		{"run", []string{"--timeout=-1s"}, []string{"--timeout -1s"}},
		{"run", []string{"--queries", "0"}, []string{"--queries 0", "--skip-query"}},
		{"run", []string{"--queries=-3"}, []string{"--queries -3"}},
		{"run", []string{"--queries=-3", "--skip-query"}, []string{"--queries -3"}},
		{"run", []string{"--query-limit", "0"}, []string{"--query-limit 0"}},
		{"run", []string{"--query-limit=-1"}, []string{"--query-limit -1"}},
		{"run", []string{"--query-concurrency", "0"}, []string{"--query-concurrency 0"}},
		{"run", []string{"--workloads", "subscribe,nope"}, []string{"--workloads", "nope"}},
		{"run", []string{"--client-cpus", "zero"}, []string{"--client-cpus", "zero"}},
		{"run", []string{"--relay-cpus", "0-"}, []string{"--relay-cpus", "0-"}},
		{"compare", []string{"--repeat", "0"}, []string{"--repeat 0"}},
		{"compare", []string{"--concurrency", "0"}, []string{"--concurrency 0"}},
		{"subscribe", []string{"--sub-count", "0"}, []string{"--sub-count 0"}},
		{"subscribe", []string{"--publishers", "0"}, []string{"--publishers 0"}},
		{"subscribe", []string{"--channels", "0"}, []string{"--channels 0"}},
		{"subscribe", []string{"--overlap", "0"}, []string{"--overlap 0"}},
		{"subscribe", []string{"--overlap", "11", "--channels", "10"}, []string{"--overlap 11"}},
		{"subscribe", []string{"--events=-1"}, []string{"--events -1"}},
		{"subscribe", []string{"--size", "0"}, []string{"--size 0"}},
		{"subscribe", []string{"--rate=-1"}, []string{"--rate -1"}},
		{"subscribe", []string{"--rate", "NaN"}, []string{"--rate NaN"}},
		{"subscribe", []string{"--window=-1"}, []string{"--window -1"}},
		{"subscribe", []string{"--sub-duration=-1s"}, []string{"--sub-duration -1s"}},
		{"subscribe", []string{"--grace", "0s"}, []string{"--grace 0s"}},
		{"subscribe", []string{"--timeout", "0s"}, []string{"--timeout 0s"}},
		{"subscribe", []string{"--authors", "0"}, []string{"--authors 0"}},
		{"mixed", []string{"--duration", "0s"}, []string{"--duration 0s"}},
		{"mixed", []string{"--publish-rate", "0"}, []string{"--publish-rate 0"}},
		{"mixed", []string{"--query-rate", "0"}, []string{"--query-rate 0"}},
		{"mixed", []string{"--publishers", "0"}, []string{"--publishers 0"}},
		{"mixed", []string{"--queriers", "0"}, []string{"--queriers 0"}},
		{"mixed", []string{"--window", "0"}, []string{"--window 0"}},
		{"mixed", []string{"--query-limit", "0"}, []string{"--query-limit 0"}},
		{"mixed", []string{"--timeout", "0s"}, []string{"--timeout 0s"}},
		{"mixed", []string{"--events", "0"}, []string{"--events 0"}},
		{"burst", []string{"--bursts", "0"}, []string{"--bursts 0"}},
		{"burst", []string{"--burst-size", "0"}, []string{"--burst-size 0"}},
		{"burst", []string{"--every", "0s"}, []string{"--every 0s"}},
		{"burst", []string{"--connections", "0"}, []string{"--connections 0"}},
		{"burst", []string{"--window", "0"}, []string{"--window 0"}},
		{"burst", []string{"--between-rate", "-1"}, []string{"--between-rate -1", "negative"}},
		{"burst", []string{"--recovery-within", "0"}, []string{"--recovery-within 0"}},
		{"burst", []string{"--recovery-run", "0"}, []string{"--recovery-run 0"}},
		{"burst", []string{"--size", "0"}, []string{"--size 0"}},
		{"burst", []string{"--timeout", "0s"}, []string{"--timeout 0s"}},
		{"lifecycle", []string{"--timing-events", "0"}, []string{"--timing-events 0"}},
		{"lifecycle", []string{"--size", "0"}, []string{"--size 0"}},
		{"lifecycle", []string{"--timeout", "0s"}, []string{"--timeout 0s"}},
		{"lifecycle", []string{"--read-timeout", "0s"}, []string{"--read-timeout 0s"}},
		{"sweep", []string{"--sizes", "256,0"}, []string{"--sizes 0"}},
		{"sweep", []string{"--events", "0"}, []string{"--events 0"}},
		{"sweep", []string{"--publishers", "0"}, []string{"--publishers 0"}},
		{"sweep", []string{"--subscribers", "0"}, []string{"--subscribers 0"}},
		{"sweep", []string{"--window", "0"}, []string{"--window 0"}},
		{"sweep", []string{"--rate=-1"}, []string{"--rate -1"}},
		{"sweep", []string{"--duration=-1s"}, []string{"--duration -1s"}},
		{"sweep", []string{"--grace", "0s"}, []string{"--grace 0s"}},
		{"sweep", []string{"--timeout", "0s"}, []string{"--timeout 0s"}},
		{"load", []string{"--load-pool", "0"}, []string{"--load-pool 0"}},
		{"load", []string{"--load-connections=-1"}, []string{"--load-connections -1"}},
		{"load", []string{"--load-max-lateness", "0s"}, []string{"--load-max-lateness 0s"}},
		{"load", []string{"--load-warmup", "60s", "--load-duration", "60s"}, []string{"--load-warmup 1m0s"}},
		{"load", []string{"--load-max-events=-1"}, []string{"--load-max-events -1"}}, // 0: no cap
		{"load", []string{"--load-duration", "0s"}, []string{"--load-duration 0s"}},
		{"load", []string{"--load-period=-1s"}, []string{"--load-period -1s"}},
		{"load", []string{"--load-steps=-1"}, []string{"--load-steps -1"}},
		{"load", []string{"--load-base=-1"}, []string{"-load-base", "-1"}},
		{"load", []string{"--query-limit", "0"}, []string{"--query-limit 0"}},
		{"load", []string{"--load-mix", "0:0", "--load-kind", "mixed"}, []string{"--load-mix", "0:0"}},
		{"load", []string{"--timeout", "0s"}, []string{"--timeout 0s"}},
		{"load", []string{"--load-base", "100000", "--load-max-events", "1000"}, []string{"--load-max-events 1000"}},
		{"find-max", []string{"--size", "0"}, []string{"--size 0"}},
		{"find-max", []string{"--p99", "0s"}, []string{"--p99 0s"}},
		{"find-max", []string{"--max-drops=-1"}, []string{"--max-drops -1"}},
		{"find-max", []string{"--max-refusals=-1"}, []string{"--max-refusals -1"}},
		{"find-max", []string{"--start-rate", "0"}, []string{"--start-rate 0"}},
		{"find-max", []string{"--start-rate", "1000", "--max-rate", "10"}, []string{"--start-rate 1000", "--max-rate"}},
		{"find-max", []string{"--step-duration", "0s"}, []string{"--step-duration 0s"}},
		{"find-max", []string{"--precision", "0"}, []string{"--precision 0"}},
		{"find-max", []string{"--precision", "1"}, []string{"--precision 1"}},
		{"find-max", []string{"--max-steps", "0"}, []string{"--max-steps 0"}},
		{"find-max", []string{"--load-pool", "0"}, []string{"--load-pool 0"}},
		{"find-max", []string{"--load-connections=-1"}, []string{"--load-connections -1"}},
		{"find-max", []string{"--load-max-lateness", "0s"}, []string{"--load-max-lateness 0s"}},
		{"find-max", []string{"--load-warmup", "10s", "--step-duration", "10s"}, []string{"--load-warmup 10s"}},
		{"find-max", []string{"--load-max-events=-1"}, []string{"--load-max-events -1"}}, // 0: no cap
		{"find-max", []string{"--timeout", "0s"}, []string{"--timeout 0s"}},
		{"corpus", []string{"--events", "0"}, []string{"--events 0"}},
		{"corpus", []string{"--size", "0"}, []string{"--size 0"}},
		{"corpus", []string{"--authors", "0"}, []string{"--authors 0"}},
		{"relays start", []string{"--port", "70000"}, []string{"--port 70000"}},
		{"relays start", []string{"--port=-1"}, []string{"--port -1"}},
		{"relays start", []string{"--cpus", "x"}, []string{"--cpus x"}},
		{"report", []string{"--format", "pdf"}, []string{"--format pdf"}},
	}
	for _, tc := range cases {
		t.Run(tc.cmd+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			wantUsageError(t, tc.cmd, tc.args, tc.want)
		})
	}
}

// wantUsageError runs cmd with args (and flags that keep a missed check
// from doing anything) and wants exit status 2 with one line naming want,
// nothing on stdout, and nothing written.
func wantUsageError(t *testing.T, cmd string, extra, want []string) {
	t.Helper()
	const noRelay = "ws://127.0.0.1:1" // nothing listens: a missed check fails fast
	tc := struct {
		cmd  string
		args []string
		want []string
	}{cmd, extra, want}
	cache, out := t.TempDir(), t.TempDir()
	args := strings.Fields(tc.cmd)
	switch tc.cmd {
	case "corpus":
		args = append(args, "--cache-dir", cache, "--no-progress")
	case "report":
		args = append(args, filepath.Join(out, "none.json"))
	case "relays start":
		args = append(args, "nosuchrelay", "--out", out)
	case "relay serve":
	case "compare":
		args = append(args, "--relays", noRelay, "--events", "10", "--queries", "1",
			"--cache-dir", cache, "--out", out, "--no-progress", "--quiet")
	default:
		args = append(args, "--relay", noRelay, "--cache-dir", cache, "--out", out, "--no-progress", "--quiet")
	}
	args = append(args, tc.args...)
	code, stdout, stderr := runHere(t, args...)
	if code != 2 {
		t.Fatalf("exit %d, want 2 (usage); stderr: %s", code, stderr)
	}
	wantOneLine(t, stderr, tc.want...)
	if stdout != "" {
		t.Errorf("stdout: %q", stdout)
	}
	wantEmptyDir(t, cache)
	wantEmptyDir(t, out)
}

// TestAbsurdCountsAreUsageErrors: a count, rate or duration whose cost no
// machine can pay (memory per unit × count, connections) is refused before
// any work with one line naming the flag and the limit, exit status 2 —
// never an out-of-memory crash or a run that opens connections until the
// open-file limit. The values are beyond any machine's memory, so the
// cases hold wherever the test runs.
func TestAbsurdCountsAreUsageErrors(t *testing.T) {
	const huge, conns = "1000000000000", "100000000" // 1e12 units; 1e8 connections (6 TB at 64 KB)
	const long = "2000000h"                          // 228 years
	cases := []struct {
		cmd  string
		args []string
		want []string
	}{
		{"run", []string{"--queries", huge}, []string{"--queries " + huge, "memory"}},
		{"run", []string{"--concurrency", conns}, []string{"--concurrency " + conns}},
		{"run", []string{"--query-concurrency", conns}, []string{"--query-concurrency " + conns}},
		{"compare", []string{"--repeat", huge}, []string{"--repeat " + huge, "memory"}},
		{"compare", []string{"--concurrency", conns}, []string{"--concurrency " + conns}},
		{"clients", []string{"--queries", huge}, []string{"--queries " + huge, "memory"}},
		{"clients", []string{"--query-concurrency", conns}, []string{"--query-concurrency " + conns}},
		{"count", []string{"--queries", huge}, []string{"--queries " + huge, "memory"}},
		{"search", []string{"--queries", huge}, []string{"--queries " + huge, "memory"}},
		{"sync", []string{"--neg-rounds", huge}, []string{"--neg-rounds " + huge, "memory"}},
		{"sync", []string{"--neg-delta", huge}, []string{"--neg-delta " + huge, "memory"}},
		{"sync", []string{"--concurrency", conns}, []string{"--concurrency " + conns}},
		{"subscribe", []string{"--events", huge}, []string{"--events " + huge, "memory"}},
		{"subscribe", []string{"--rate", "1e12", "--sub-duration", "1000h"}, []string{"--rate 1e+12", "at most"}},
		{"subscribe", []string{"--rate", "1000", "--sub-duration", "1000000h"}, []string{"--rate 1000", "--sub-duration", "events"}},
		{"subscribe", []string{"--mode", "pipeline", "--window", huge}, []string{"--window " + huge, "at most"}},
		{"subscribe", []string{"--mode", "pipeline", "--window", "5000", "--events", "100"}, []string{"--window 5000", "100 events"}},
		{"subscribe", []string{"--sub-count", conns}, []string{"--sub-count " + conns}},
		{"subscribe", []string{"--publishers", conns}, []string{"--publishers " + conns}},
		{"subscribe", []string{"--channels", huge, "--overlap", "1"}, []string{"--channels " + huge, "memory"}},
		{"burst", []string{"--burst-size", huge}, []string{"--burst-size " + huge, "memory"}},
		{"burst", []string{"--bursts", huge}, []string{"--bursts " + huge, "--every", "292 years"}},
		{"burst", []string{"--every", long}, []string{"--every", "292 years"}},
		{"burst", []string{"--between-rate", "1e12"}, []string{"--between-rate 1e+12", "at most"}},
		{"burst", []string{"--between-rate", "-5"}, []string{"--between-rate -5", "negative"}},
		{"burst", []string{"--window", huge}, []string{"--window " + huge, "at most"}},
		{"burst", []string{"--recovery-run", huge}, []string{"--recovery-run " + huge, "at most"}},
		{"burst", []string{"--recovery-run", "100000", "--between-rate", "10"}, []string{"--recovery-run 100000", "background events"}},
		{"burst", []string{"--recovery-within", "1e12"}, []string{"--recovery-within 1e+12", "at most"}},
		{"burst", []string{"--connections", conns}, []string{"--connections " + conns}},
		{"burst", []string{"--between-rate", "NaN"}, []string{"--between-rate NaN"}},
		{"lifecycle", []string{"--timing-events", huge}, []string{"--timing-events " + huge, "memory"}},
		{"sweep", []string{"--events", huge}, []string{"--events " + huge, "memory"}},
		{"sweep", []string{"--subscribers", conns}, []string{"--subscribers " + conns}},
		{"sweep", []string{"--publishers", conns}, []string{"--publishers " + conns}},
		{"sweep", []string{"--rate", "Inf"}, []string{"--rate +Inf"}},
		{"sweep", []string{"--rate", "1e12"}, []string{"--rate 1e+12", "at most"}},
		{"sweep", []string{"--rate", "-1"}, []string{"--rate -1", "negative"}},
		{"sweep", []string{"--window", huge}, []string{"--window " + huge, "at most"}},
		{"run", []string{"--query-limit", "9223372036854775807"}, []string{"--query-limit 9223372036854775807", "at most"}},
		{"run", []string{"--mode", "pipeline", "--window", huge}, []string{"--window " + huge, "at most"}},
		{"run", []string{"--mode", "pipeline", "--window", "1000", "--events", "100"}, []string{"--window 1000", "100 events"}},
		{"compare", []string{"--query-limit", "2000000"}, []string{"--query-limit 2000000", "at most"}},
		{"clients", []string{"--query-limit", "9223372036854775807"}, []string{"--query-limit 9223372036854775807", "at most"}},
		{"count", []string{"--query-limit", huge}, []string{"--query-limit " + huge, "at most"}},
		{"count", []string{"--window", "9223372036854775807"}, []string{"--window 9223372036854775807", "at most"}},
		{"search", []string{"--query-limit", huge}, []string{"--query-limit " + huge, "at most"}},
		{"sync", []string{"--mode", "pipeline", "--window", huge}, []string{"--window " + huge, "at most"}},
		{"relay serve", []string{"--addr", "127.0.0.1:99999999"}, []string{"--addr", "99999999", "port"}},
		{"mixed", []string{"--publish-rate", "1e12"}, []string{"--publish-rate 1e+12", "at most"}},
		{"mixed", []string{"--publish-rate", "-1"}, []string{"--publish-rate -1", "above 0"}},
		{"mixed", []string{"--duration", long}, []string{"--publish-rate", "--duration", "events"}},
		{"mixed", []string{"--query-rate", "1e12"}, []string{"--query-rate 1e+12", "at most"}},
		{"mixed", []string{"--window", huge}, []string{"--window " + huge, "at most"}},
		{"mixed", []string{"--query-limit", "9223372036854775807"}, []string{"--query-limit 9223372036854775807", "at most"}},
		{"mixed", []string{"--query-rate", "NaN"}, []string{"--query-rate NaN"}},
		{"mixed", []string{"--publishers", conns}, []string{"--publishers " + conns}},
		{"mixed", []string{"--queriers", conns}, []string{"--queriers " + conns}},
		{"load", []string{"--load-pool", huge}, []string{"--load-pool " + huge, "memory"}},
		{"load", []string{"--load-steps", huge, "--load-pattern", "step"}, []string{"--load-steps " + huge, "memory"}},
		{"load", []string{"--load-base", "1e12"}, []string{"--load-base 1e+12", "at most"}},
		{"load", []string{"--load-base", "9223372036854775807"}, []string{"--load-base 9.223372036854776e+18", "at most"}},
		{"load", []string{"--load-base", "-1"}, []string{"--load-base -1", "negative"}},
		{"load", []string{"--load-base", "NaN"}, []string{"--load-base NaN", "finite"}},
		{"load", []string{"--load-pattern", "ramp", "--load-peak", "1e12"}, []string{"--load-peak 1e+12", "at most"}},
		{"load", []string{"--load-base", "100000", "--load-duration", "10000h"}, []string{"--load-base 100000", "--load-duration", "events"}},
		{"load", []string{"--load-connections", huge}, []string{"--load-connections " + huge, "open-file limit"}},
		{"load", []string{"--load-max-events", "9223372036854775807"}, []string{"--load-max-events 9223372036854775807", "at most"}},
		{"load", []string{"--query-limit", huge}, []string{"--query-limit " + huge, "at most"}},
		{"find-max", []string{"--load-pool", huge}, []string{"--load-pool " + huge, "memory"}},
		{"find-max", []string{"--precision", "NaN"}, []string{"--precision NaN"}},
		{"find-max", []string{"--max-rate", "1e12"}, []string{"--max-rate 1e+12", "at most"}},
		{"find-max", []string{"--load-max-events", "9223372036854775807"}, []string{"--load-max-events 9223372036854775807", "at most"}},
		{"corpus", []string{"--events", huge}, []string{"--events " + huge, "at most"}},
		{"corpus", []string{"--events", "50000000", "--size", "16000000"}, []string{"--events 50000000", "on disk"}},
		{"run", []string{"--events", "50000000", "--size", "16000000"}, []string{"--events 50000000", "on disk"}},
		{"load", []string{"--events", "50000000", "--size", "16000000"}, []string{"--events 50000000", "on disk"}},
	}
	for _, tc := range cases {
		t.Run(tc.cmd+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			wantUsageError(t, tc.cmd, tc.args, tc.want)
		})
	}
}

// TestEveryCommandChecksItsFlags: every command that runs has a
// checkFlags, and the defaults of every command pass it (the extra
// workloads of run --workloads use them as they are).
func TestEveryCommandChecksItsFlags(t *testing.T) {
	out := t.TempDir()
	var visit func(name string, cmd any)
	visit = func(name string, cmd any) {
		v := reflect.ValueOf(cmd).Elem()
		sub := false
		for i := 0; i < v.NumField(); i++ {
			if _, ok := v.Type().Field(i).Tag.Lookup("cmd"); ok {
				sub = true
				visit(name+" "+strings.ToLower(v.Type().Field(i).Name), v.Field(i).Addr().Interface())
			}
		}
		if sub {
			return
		}
		c, ok := cmd.(flagChecker)
		if !ok {
			t.Errorf("%s: no checkFlags method: its flags are not checked", name)
			return
		}
		if name == "relay serve" || name == "relays install" || name == "relays list" {
			return // arguments without defaults; nothing numeric
		}
		fresh := reflect.New(v.Type())
		if opts := fresh.Elem().FieldByName("Opts"); opts.IsValid() {
			// A declared workload's command: its options and their checks.
			opts.Set(reflect.ValueOf(mustDecl(name).New()))
		}
		parser, err := kong.New(fresh.Interface(), cliVars())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var required []string
		switch name {
		case "compare":
			required = []string{"--relays", "ws://127.0.0.1:1"}
		case "relays start":
			required = []string{"khatru-badger"}
		case "merge":
			required = []string{"seg0.json", "seg1.json"}
		}
		if _, err := parser.Parse(required); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if f := fresh.Elem().FieldByName("Out"); f.IsValid() && f.Kind() == reflect.String {
			f.SetString(out)
		}
		c = fresh.Interface().(flagChecker)
		if err := c.checkFlags(); err != nil {
			t.Errorf("%s: its defaults fail its own checks: %v", name, err)
		}
	}
	for _, c := range commands {
		visit(c.name, c.cmd)
	}
	wantEmptyDir(t, out)
}

// TestResultsNamesAreExclusive: two results files started in the same
// second get different names, each created exclusively, even at once.
func TestResultsNamesAreExclusive(t *testing.T) {
	dir := t.TempDir()
	of := outputFlags{Out: filepath.Join(dir, "out")}
	t0 := time.Date(2026, 11, 22, 23, 11, 0, 0, time.UTC)
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := of.resultsPath("run", t0)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if seen[p] {
				t.Errorf("%s given twice", p)
			}
			seen[p] = true
		}()
	}
	wg.Wait()
	for _, want := range []string{"run-20261122-231100.json", "run-20261122-231100-2.json", "run-20261122-231100-8.json"} {
		if !seen[filepath.Join(dir, "out", want)] {
			t.Errorf("no %s among %v", want, seen)
		}
	}
	// The reserved names hold the place until written; the ones never
	// written go when the command returns.
	p := filepath.Join(dir, "out", "run-20261122-231100-3.json")
	if err := results.Write(p, &results.File{Command: "run", Runs: []results.Run{{}}}); err != nil {
		t.Fatalf("writing a reserved name: %v", err)
	}
	releaseReserved()
	ents, _ := os.ReadDir(filepath.Join(dir, "out"))
	if len(ents) != 1 || ents[0].Name() != filepath.Base(p) {
		t.Fatalf("want only the written file left, got %v", ents)
	}
	// An explicit --json names one file, refused once taken.
	of.JSON = p
	if _, err := of.resultsPath("run", t0); err == nil || !strings.Contains(err.Error(), "--json") {
		t.Fatalf("taken --json name: %v", err)
	}
}

// TestOutputPathCheckedBeforeTheRun: an existing --json file, or a folder,
// is refused before anything is signed or started, and left as it was.
func TestOutputPathCheckedBeforeTheRun(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "r.json")
	if err := os.WriteFile(existing, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"existing file", []string{"--json", existing}, []string{"--json " + existing, "exists"}},
		{"folder", []string{"--json", sub}, []string{"--json " + sub, "folder"}},
		{"parent is a file", []string{"--json", filepath.Join(notDir, "r.json")}, []string{"--json", "not a folder"}},
		{"out is a file", []string{"--out", notDir}, []string{"--out " + notDir}},
		{"out under a file", []string{"--out", filepath.Join(notDir, "x")}, []string{"--out", "not a folder"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache, out := t.TempDir(), t.TempDir()
			args := append([]string{"run", "--relay", "ws://127.0.0.1:1", "--events", "10", "--queries", "1",
				"--cache-dir", cache, "--out", out, "--no-progress", "--quiet"}, tc.args...)
			code, _, stderr := runHere(t, args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr: %s", code, stderr)
			}
			wantOneLine(t, stderr, tc.want...)
			wantEmptyDir(t, cache)
			wantEmptyDir(t, out)
			wantEmptyDir(t, sub)
			if b, _ := os.ReadFile(existing); string(b) != "keep" {
				t.Fatalf("existing file changed: %q", b)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 3 {
				t.Fatalf("files appeared next to the results file: %v", ents)
			}
		})
	}
}

// TestUnwrittenReservationRemoved: a command that fails after reserving its
// results name but before writing it leaves no empty file behind.
func TestUnwrittenReservationRemoved(t *testing.T) {
	noStrfry(t)
	cache, out := t.TempDir(), t.TempDir()
	code, _, stderr := runHere(t, "run", "--relay", "strfry", "--events", "5", "--queries", "1",
		"--cache-dir", cache, "--out", out, "--no-progress", "--quiet")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr: %s", code, stderr)
	}
	wantOneLine(t, stderr, "relaybench: strfry needs a binary you supply, and no package registry has it: build it") // nothing else runs: not "skipped"
	wantEmptyDir(t, out)
}

// TestForeignRelayIsUsage: a relay URL outside this machine without
// --i-operate-this-relay, or no ws:// URL, is refused before any work by
// every command taking --relay or --relays: one line naming the flag (and
// --i-operate-this-relay), exit 2, nothing written.
func TestForeignRelayIsUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--relay", "ws://192.0.2.1:7777"}, "--relay: relay 192.0.2.1 is not on this machine"},
		{[]string{"compare", "--relays", "khatru-memory,ws://192.0.2.1:7777"}, "--relays: relay 192.0.2.1 is not on this machine"},
		{[]string{"load", "--relay", "ws://[2001:db8::1]:7777"}, "--relay: relay 2001:db8::1 is not on this machine"},
		{[]string{"conformance", "--relay", "ws://192.0.2.1:7777"}, "--relay: relay 192.0.2.1 is not on this machine"},
		{[]string{"sync", "--relay", "ws://192.0.2.1:7777"}, "--relay: relay 192.0.2.1 is not on this machine"},
		{[]string{"run", "--relay", "http://127.0.0.1:7777"}, "--relay: relay URL \"http://127.0.0.1:7777\": scheme must be ws:// or wss://"},
	} {
		out := t.TempDir()
		code, stdout, stderr := runHere(t, append(tc.args, "--out", out)...)
		if code != 2 || stdout != "" {
			t.Fatalf("%v: exit %d, want 2\n%s", tc.args, code, stderr)
		}
		wantOneLine(t, stderr, tc.want)
		if strings.Contains(tc.want, "not on this machine") && !strings.Contains(stderr, "--i-operate-this-relay") {
			t.Errorf("%v: --i-operate-this-relay not named: %s", tc.args, stderr)
		}
		wantEmptyDir(t, out)
	}
}

// TestReportRefusesEmptyAndForeignFiles: a results file without runs, or a
// file that is not a results file, is a one-line error with exit status 1
// (the input is bad, not the command line), never an empty report.
func TestReportRefusesEmptyAndForeignFiles(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.json")
	if err := results.Write(empty, &results.File{Command: "run"}); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.json")
	if err := results.Write(good, &results.File{Command: "run", Runs: []results.Run{{Relay: results.Relay{URL: "ws://127.0.0.1:1"}}}}); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	object, text, array, blank := write("object.json", "{}"), write("text.json", "hello\nworld\n"), write("array.json", "[1,2]"), write("blank.json", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{empty}, "no runs"},
		{[]string{empty, "--format", "md"}, "no runs"},
		{[]string{"--base", empty, "--cand", good}, "no runs"},
		{[]string{object}, object},
		{[]string{text}, text},
		{[]string{array}, array},
		{[]string{blank}, blank},
	} {
		code, stdout, stderr := runHere(t, append([]string{"report"}, tc.args...)...)
		if code != 1 {
			t.Errorf("%v: exit %d, want 1; stderr %q", tc.args, code, stderr)
			continue
		}
		if stdout != "" {
			t.Errorf("%v: report printed %q", tc.args, stdout)
		}
		wantOneLine(t, stderr, tc.want)
	}
	if code, stdout, stderr := runHere(t, "report", good, "--format", "json"); code != 0 || !json.Valid([]byte(stdout)) {
		t.Fatalf("a file with a run: exit %d, stderr %s", code, stderr)
	}
}

// TestReportMissingFileIsUsage: a results file that does not exist is a
// usage error (exit 2) naming it, as a missing --catalog FILE or --bin-dir
// DIR is, alone, among others, or on either side of --base/--cand.
func TestReportMissingFileIsUsage(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if err := results.Write(good, &results.File{Command: "run", Runs: []results.Run{{Relay: results.Relay{URL: "ws://127.0.0.1:1"}}}}); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.json")
	for _, args := range [][]string{
		{missing},
		{good, missing},
		{"--base", good, "--cand", missing},
		{"--base", missing, "--cand", good},
		{"--merge", good, missing},
	} {
		code, stdout, stderr := runHere(t, append([]string{"report"}, args...)...)
		if code != 2 || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q; want 2 and nothing printed", args, code, stdout)
			continue
		}
		wantOneLine(t, stderr, missing)
	}
}

// TestReportSkipsUnreadableFiles: `report DIR/*.json` over many files
// reports on those it can read, names each one it cannot on stderr, and
// exits 1 at the end; merge names every unreadable segment.
func TestReportSkipsUnreadableFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "a-good.json")
	if err := results.Write(good, &results.File{Command: "run", Runs: []results.Run{{Relay: results.Relay{URL: "ws://127.0.0.1:1"}}}}); err != nil {
		t.Fatal(err)
	}
	blank, text := filepath.Join(dir, "b-blank.json"), filepath.Join(dir, "c-text.json")
	os.WriteFile(blank, nil, 0o644) // as an older relaybench killed mid-run left it
	os.WriteFile(text, []byte("hello"), 0o644)
	code, stdout, stderr := runHere(t, "report", good, blank, text, "--format", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr %s", code, stderr)
	}
	if !json.Valid([]byte(stdout)) || !strings.Contains(stdout, "ws://127.0.0.1:1") {
		t.Fatalf("the readable file's report is missing: %q", stdout)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], blank) || !strings.Contains(lines[1], text) || !strings.Contains(lines[2], "2 of 3") {
		t.Fatalf("want each unreadable file named, then the count; got %q", stderr)
	}
	code, stdout, stderr = runHere(t, "merge", blank, text, "-o", filepath.Join(dir, "m.json"))
	if code != 2 || stdout != "" || !strings.Contains(stderr, blank) || !strings.Contains(stderr, text) {
		t.Fatalf("merge: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "m.json")); err == nil {
		t.Fatal("merge wrote a file")
	}
}

// TestJSONToStdoutIsPureJSON: with --json - standard output is the results
// file and nothing else (summary, progress and notes go to stderr).
func TestJSONToStdoutIsPureJSON(t *testing.T) {
	dir := t.TempDir()
	res := runCLI(t, "run", "--store", "sink", "--events", "50", "--skip-query", "--json", "-",
		"--cache-dir", filepath.Join(dir, "cache"), "--out", filepath.Join(dir, "out"))
	if res.code == 2 {
		t.Fatalf("exit 2: %s", res.stderr)
	}
	var f results.File
	if err := json.Unmarshal([]byte(res.stdout), &f); err != nil {
		t.Fatalf("stdout is not the results file: %v\n%s", err, res.stdout)
	}
	if f.Schema != results.SchemaVersion || len(f.Runs) != 1 {
		t.Fatalf("stdout holds %q with %d runs", f.Schema, len(f.Runs))
	}
	if !strings.Contains(res.stderr, "Publish Performance") {
		t.Errorf("summary not on stderr:\n%s", res.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "out", "*.json"))
	if len(files) > 0 {
		t.Errorf("a results file was written too: %v", files)
	}
}

// The header's parameters are those that shaped the run, each once.
func TestParamsOnlyWhatTookEffect(t *testing.T) {
	var f benchFlags
	f.Events, f.Mode, f.Queries, f.SkipQuery = 10, "wait", 100, true
	p := f.params()
	for _, k := range []string{"queries", "query_limit", "workloads", "window"} {
		if _, ok := p[k]; ok {
			t.Errorf("%s in %v", k, p)
		}
	}
	if p["skip_query"] != true || p["mode"] != "wait" {
		t.Errorf("%v", p)
	}
}

// TestDeclaredParamsKeepTheirKeys: a declared workload's command records
// the params its hand-written command did (a baseline comparison refuses
// files whose params differ), from its options' flags and param tags.
func TestDeclaredParamsKeepTheirKeys(t *testing.T) {
	for name, want := range map[string]string{
		"burst":     "between_rate burst_size bursts connections every size window",
		"lifecycle": "events read_timeout size timeout",
		"sweep":     "events mode publishers rate sizes subscribers window",
		"count":     "force no_req queries query_limit",
		"search":    "force queries query_limit terms",
	} {
		var got []string
		for k := range optionParams(mustDecl(name).New(), "") {
			got = append(got, k)
		}
		sort.Strings(got)
		if strings.Join(got, " ") != want {
			t.Errorf("%s params %v, want %s", name, got, want)
		}
	}
}

// TestReportMergeNeedsEverySegment: report --merge with an unreadable
// segment names it and merges nothing (exit 2), as merge does.
func TestReportMergeNeedsEverySegment(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "a.json")
	if err := results.Write(good, &results.File{Command: "run", Runs: []results.Run{{Relay: results.Relay{URL: "ws://127.0.0.1:1"}}}}); err != nil {
		t.Fatal(err)
	}
	blank := filepath.Join(dir, "b.json")
	os.WriteFile(blank, nil, 0o644)
	code, stdout, stderr := runHere(t, "report", "--merge", good, blank)
	if code != 2 || stdout != "" || !strings.Contains(stderr, blank) || !strings.Contains(stderr, "nothing merged") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
