package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/runner"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/workload"
)

// wantClientsPhase checks a passed client-mix phase: every query accounted
// for and answered, one group per shape, each with events.
func wantClientsPhase(t *testing.T, p *results.Phase, queries int, shapes []string) {
	t.Helper()
	if p == nil {
		t.Fatal("no clients phase")
	}
	a := p.Account(results.OpQuery)
	if a == nil || !a.Balanced() || a.Accepted != int64(queries) {
		t.Fatalf("account %+v", a)
	}
	if p.Verification == nil || !p.Verification.Verified || !p.Verification.Passed {
		t.Fatalf("verification %+v", p.Verification)
	}
	if len(p.Groups) != len(shapes) || p.Rates["events_returned_per_sec"] <= 0 {
		t.Fatalf("groups %d rates %v", len(p.Groups), p.Rates)
	}
	for i, g := range p.Groups {
		if g.Name != shapes[i] || g.Counts["events_returned"] == 0 || g.Latency["first_event"] == nil {
			t.Errorf("group %s: counts %v latency %v", g.Name, g.Counts, g.Latency)
		}
	}
}

// The clients subcommand against the embedded relay, on two connections,
// and its results in the HTML report.
func TestClientsCommandEndToEnd(t *testing.T) {
	res, f, out := runRecorded(t, relaybenchBin(t), "clients", "--events", "600", "--authors", "40", "--queries", "27", "--query-conns", "2",
		"--cache-dir", t.TempDir(), "--anchor", testAnchor)
	if res.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{"Clients (query) Performance:", "Event return rate", "First event p99", "notifications", "Verification: PASSED"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, res.stdout)
		}
	}
	r := f.Runs[0]
	if r.Phase("query") != nil || r.Phase("publish") == nil {
		t.Fatalf("phases %+v", r.Phases)
	}
	wantClientsPhase(t, r.Phase("clients"), 27, workload.ClientShapes)
	if r.Phase("clients").Params["connections"] != float64(2) || r.Params["query_mix"] != "clients" {
		t.Fatalf("params %v / %v", r.Phase("clients").Params, r.Params)
	}
	html := filepath.Join(out, "r.html")
	if res := runCLI(t, "report", filepath.Join(out, "r.json"), "-o", html); res.code != 0 {
		t.Fatalf("report: exit %d: %s", res.code, res.stderr)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Clients", "addressable", "<svg"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}
}

// run --query-mix all runs both mixes in the query phase; --workloads
// clients adds the client phase with its defaults.
func TestRunQueryMixAndClientsWorkload(t *testing.T) {
	res, f, _ := runRecorded(t, relaybenchBin(t), "run", "--events", "600", "--authors", "40", "--queries", "30", "--query-mix", "all", "--workloads", "clients",
		"--cache-dir", t.TempDir(), "--quiet", "--anchor", testAnchor)
	if res.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", res.code, res.stderr)
	}
	r := f.Runs[0]
	all, _ := workload.ParseMix("all")
	wantClientsPhase(t, r.Phase("query"), 30, all)
	wantClientsPhase(t, r.Phase("clients"), 180, workload.ClientShapes)
	if r.Params["query_mix"] != "all" {
		t.Fatalf("params %v", r.Params)
	}
}

func TestQueryMixBadValueIsUsageError(t *testing.T) {
	for _, cmd := range []string{"run", "clients"} {
		code, _, stderr := runHere(t, cmd, "--query-mix", "home,nosuch", "--cache-dir", "off", "--out", t.TempDir(), "--no-progress")
		if code != 2 {
			t.Fatalf("%s: exit %d, want 2: %s", cmd, code, stderr)
		}
		wantOneLine(t, stderr, "--query-mix", "nosuch")
	}
}

// The client mix against strfry from ../shared/relays/bin, started by the
// harness: every shape answered and verified.
func TestClientsStrfry(t *testing.T) {
	dir := sharedBinWith(t, "strfry")
	res, f, out := runRecorded(t, relaybenchBin(t), "clients", "--relay", "strfry", "--bin-dir", dir, "--events", "1000",
		"--queries", "45", "--query-conns", "2", "--cache-dir", t.TempDir(), "--quiet", "--anchor", testAnchor)
	if res.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", res.code, res.stderr)
	}
	wantClientsPhase(t, f.Runs[0].Phase("clients"), 45, workload.ClientShapes)
	if left := relaysUnder(out); len(left) > 0 {
		t.Fatalf("relay left running: %v", left)
	}
}

// --workloads clients after a publish phase the relay accepted nothing of:
// every query is not run, and the account says why (nothing is dialled).
func TestClientsWorkloadNothingAccepted(t *testing.T) {
	c := &clientsCmd{}
	if err := kong.ApplyDefaults(c); err != nil {
		t.Fatal(err)
	}
	env := runner.Env{URL: "ws://127.0.0.1:1", Corpus: &corpus.Corpus{}, Model: verify.NewModel(nil),
		Progress: func(string, int64) func(int64) { return func(int64) {} }}
	phases, err := c.workload().Run(context.Background(), env)
	if err != nil || len(phases) != 1 {
		t.Fatalf("phases %+v err %v", phases, err)
	}
	a := phases[0].Account(results.OpQuery)
	if phases[0].Name != "clients" || a == nil || !a.Balanced() || a.Requested != 180 || a.NotRun != 180 {
		t.Fatalf("phase %+v account %+v", phases[0], a)
	}
}
