package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/judge"
	"github.com/relaybench/relaybench/results"
)

// startPublishing starts the built binary on a run against relay that is
// still publishing when startPublishing returns: its progress has printed
// the first tenth of the events published. With the relay's OKs 20 ms late
// on 2 connections in wait mode, the other nine tenths take at least 27 s:
// a signal sent now lands in the publish phase however loaded the machine.
func startPublishing(t *testing.T, url, out string, extra ...string) *cliProc {
	t.Helper()
	p := startCLI(t, append([]string{"run", "--relay", url, "--events", "3000", "--size", "200", "--concurrency", "2",
		"--queries", "20", "--out", out, "--cache-dir", t.TempDir()}, extra...)...)
	p.until(t, func(l string) bool { return strings.Contains(l, "Published ") }, 2*time.Minute, "publishing")
	return p
}

// hidden lists the hidden files in dir.
func hidden(dir string) []string {
	var out []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestSIGTERMDuringPublishStopsAtOnce: SIGTERM while publishing ends the
// process with status 130, the results file whole and valid, the events not
// sent and the queries booked as cancelled (never the relay's fault), and
// nothing after the publish phase started. That no work growing with the corpus follows the
// signal is counted in runner's TestCancelDuringPublishDoesNoCorpusWork;
// here the deadline is a hang guard only.
func TestSIGTERMDuringPublishStopsAtOnce(t *testing.T) {
	t.Parallel() // beside the package's other parallel tests: a 30 s publish is signalled after its first progress line: no race
	r := testrelay.Start(t, testrelay.Config{OKDelay: 20 * time.Millisecond})
	out := t.TempDir()
	path := filepath.Join(out, "r.json")
	p := startPublishing(t, r.URL(), out, "--json", path)
	signalled := time.Now()
	p.terminate()
	code := p.exit(t, time.Minute)
	t.Logf("signal → exit: %v", time.Since(signalled).Round(time.Millisecond))
	if code != judge.Interrupted {
		t.Fatalf("exit %d, want 130\n%s", code, p.stderr())
	}
	f, err := results.Read(path)
	if err != nil {
		t.Fatalf("results not saved whole: %v", err)
	}
	if !f.Interrupted || len(f.Runs) != 1 || f.Verdict == nil || f.Verdict.Status != judge.Interrupted {
		t.Fatalf("want an interrupted file with its verdict, got interrupted=%v verdict=%+v", f.Interrupted, f.Verdict)
	}
	phs := f.Runs[0].Phases
	if len(phs) != 2 || phs[0].Name != "publish" || phs[1].Name != "query" {
		t.Fatalf("want the publish phase and the queries booked cancelled, got %d phases", len(phs))
	}
	if q := phs[1].Account(results.OpQuery); q == nil || !q.Balanced() || q.Requested != 20 || q.Cancelled != 20 {
		t.Fatalf("query account: %+v", q)
	}
	a := phs[0].Account(results.OpEvent)
	if a == nil || !a.Balanced() || a.Requested != 3000 || a.Cancelled == 0 || a.Refused+a.TimedOut+a.ConnLost+a.NotRun != 0 {
		t.Fatalf("publish account: %+v", a)
	}
	if h := hidden(out); len(h) != 0 {
		t.Fatalf("hidden files left: %v", h)
	}
}

// TestSIGKILLLeavesNoResultsFile: a run killed outright (SIGKILL) leaves no
// visible results file — no empty one for `report DIR/*.json` to fail on —
// and its hidden reservation goes at the next run in that folder.
func TestSIGKILLLeavesNoResultsFile(t *testing.T) {
	t.Parallel() // beside the package's other parallel tests: a 30 s publish is killed after its first progress line: no race
	r := testrelay.Start(t, testrelay.Config{OKDelay: 20 * time.Millisecond})
	out := t.TempDir()
	p := startPublishing(t, r.URL(), out)
	p.kill()
	p.exit(t, time.Minute)
	if m, _ := filepath.Glob(filepath.Join(out, "*.json")); len(m) != 0 {
		t.Fatalf("a killed run left %v", m)
	}
	if h := hidden(out); len(h) != 1 || !strings.HasSuffix(h[0], ".json.tmp") {
		t.Fatalf("want the killed run's hidden reservation, got %v", h)
	}
	fast := testrelay.Start(t, testrelay.Config{})
	res := runBin(t, relaybenchBin(t), 2*time.Minute, "run", "--relay", fast.URL(), "--events", "20", "--queries", "2",
		"--out", out, "--cache-dir", t.TempDir(), "--no-progress", "--quiet")
	if res.code != 0 {
		t.Fatalf("next run: exit %d\n%s", res.code, res.stderr)
	}
	if h := hidden(out); len(h) != 0 {
		t.Fatalf("the killed run's hidden files were not cleaned: %v", h)
	}
	m, _ := filepath.Glob(filepath.Join(out, "*.json"))
	if len(m) != 1 {
		t.Fatalf("want the next run's file only, got %v", m)
	}
	if rep := runBin(t, relaybenchBin(t), time.Minute, append([]string{"report", "--format", "json"}, m...)...); rep.code != 0 {
		t.Fatalf("report DIR/*.json: exit %d: %s", rep.code, rep.stderr)
	}
}

// TestClosedStdoutSavesResultsAndStopsRelay: standard output closed by its
// reader before anything is written to it (`relaybench run | head` whose
// head went early) is not an interrupt, for every command: the run goes to
// its end, the results file is written, the relay relaybench started is
// stopped and its run dir removed, nothing is said of the lost output, and
// the exit status is the verdict's (0 here) — never 130 or 1 depending on
// when the reader went, never a death by SIGPIPE that leaves the relay's
// files behind. compare's summary is longer than one write: it lost the
// race with `| head -5` in 2 tries of 5, exit 130 after a PASSED run.
func TestClosedStdoutSavesResultsAndStopsRelay(t *testing.T) {
	out, tmp := t.TempDir(), t.TempDir()
	cache := t.TempDir()
	path := filepath.Join(out, "r.json")
	for _, args := range [][]string{
		{"run", "--events", "100", "--queries", "5", "--json", path},
		{"compare", "--relays", "khatru-native,khatru-memory", "--events", "100", "--queries", "5"},
		{"run", "--events", "100", "--queries", "5", "--json", "-"},
		{"report", "-v", path},
		{"relays", "list"}, // commands without a verdict: `relays list | head -1`
		{"run", "--help"},
	} {
		p := newCLI(t, append(args, "--out", out, "--cache-dir", cache, "--no-progress")...)
		if args[0] == "report" || args[0] == "relays" || args[1] == "--help" {
			p = newCLI(t, args...)
		}
		p.cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		p.cmd.Stdout = pw
		pr.Close() // the reader is gone before anything is written
		p.start(t)
		pw.Close()
		if code := p.exit(t, 3*time.Minute); code != judge.Passed {
			t.Fatalf("%s: exit %d, want the verdict's 0\n%s", args[0], code, p.stderr())
		}
		if e := p.stderr(); strings.Contains(e, "pipe") || strings.Contains(e, "interrupted") || strings.Contains(e, "not printed") {
			t.Errorf("%s: the reader's choice reported:\n%s", args[0], e)
		}
	}
	if _, err := results.Read(path); err != nil {
		t.Fatalf("results not saved: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(out, "compare-*.json")); len(m) != 1 {
		t.Fatalf("compare's results: %v", m)
	}
	if left := relaysUnder(out); len(left) > 0 {
		t.Fatalf("relay left running: %v", left)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("left in TMPDIR: %v", names)
	}
}

// TestResultsWriteFailureIsTheVerdict: when the results file cannot be
// written (a full disk), the verdict the summary prints is the real one —
// an error, exit 1 — never "PASSED (exit 0)" followed by exit 1.
func TestResultsWriteFailureIsTheVerdict(t *testing.T) {
	r := testrelay.Start(t, testrelay.Config{})
	defer func(w func(string, *results.File) error) { writeResults = w }(writeResults)
	writeResults = func(string, *results.File) error {
		return fmt.Errorf("write results: %w", syscall.ENOSPC)
	}
	out := t.TempDir()
	code, stdout, stderr := runHere(t, "run", "--relay", r.URL(), "--events", "20", "--queries", "2",
		"--out", out, "--cache-dir", t.TempDir(), "--no-progress")
	if code != judge.Error {
		t.Fatalf("exit %d, want 1\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "Verdict: ERROR (exit 1)") || strings.Contains(stdout, "Verdict: PASSED") {
		t.Fatalf("the summary's verdict does not say the exit status:\n%s", stdout)
	}
	if !strings.Contains(stdout, "results not saved") || !strings.Contains(stderr, "no space left on device") {
		t.Fatalf("the failure is not named:\nstdout %s\nstderr %s", stdout, stderr)
	}
	if strings.Contains(stderr, "\nresults: ") || strings.HasPrefix(stderr, "results: ") {
		t.Fatalf("an unwritten file announced: %s", stderr)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Fatalf("left in the results folder: %v", ents)
	}
}

// A run interrupted before its first phase (while signing its corpus) still
// saves a results file that says so, with the verdict interrupted: nothing
// measured, nothing blamed on the relay.
func TestInterruptWhileSigningSavesResults(t *testing.T) {
	t.Parallel() // beside the package's other parallel tests: it interrupts after a progress line: no race
	out := t.TempDir()
	path := filepath.Join(out, "r.json")
	// A reachable relay (the target is checked before signing); signing
	// 300,000 events lasts long enough to be interrupted.
	r := testrelay.Start(t, testrelay.Config{})
	p := startCLI(t, "run", "--relay", r.URL(), "--events", "300000", "--size", "100",
		"--out", out, "--cache-dir", t.TempDir(), "--json", path)
	p.until(t, func(l string) bool { return strings.Contains(l, "Signed ") }, 2*time.Minute, "signing")
	p.interrupt()
	code := p.exit(t, time.Minute)
	if code != judge.Interrupted {
		t.Fatalf("exit %d, want 130", code)
	}
	f, err := results.Read(path)
	if err != nil {
		t.Fatalf("results not saved: %v", err)
	}
	if !f.Interrupted || f.Verdict == nil || f.Verdict.Status != judge.Interrupted || len(f.Runs) != 1 || len(f.Runs[0].Phases) != 0 ||
		!strings.Contains(strings.Join(f.Runs[0].Notes, " "), "interrupted before the first phase (while signing the corpus)") {
		t.Fatalf("want an interrupted file without phases, got %+v", f)
	}
	wantSaidInWords(t, p, "while signing the corpus", r.URL()+": not measured")
}

// TestInterruptWhileStartingTheRelaySaysSo: SIGTERM while the relay is
// starting (it never listens) ends the run with status 130 and a results
// file that says what was being done, the relay stopped.
func TestInterruptWhileStartingTheRelaySaysSo(t *testing.T) {
	t.Parallel() // the signal follows the relay's first line, and the relay never listens: no race
	out := t.TempDir()
	path := filepath.Join(out, "r.json")
	marker := fmt.Sprint(800000 + os.Getpid()%90000) // the relay: sleep MARKER
	p := startCLI(t, "run", "-v", "--relay", "slow=sh -c 'echo starting-slowly; exec sleep "+marker+"'", "--events", "20",
		"--queries", "2", "--out", out, "--cache-dir", t.TempDir(), "--json", path)
	p.until(t, func(l string) bool { return strings.Contains(l, "starting-slowly") }, 2*time.Minute, "the relay starting")
	p.terminate()
	if code := p.exit(t, time.Minute); code != judge.Interrupted {
		t.Fatalf("exit %d, want 130\n%s", code, p.stderr())
	}
	f, err := results.Read(path)
	if err != nil {
		t.Fatalf("results not saved: %v", err)
	}
	if len(f.Runs) != 1 || f.Runs[0].Relay.Name != "slow" ||
		!strings.Contains(strings.Join(f.Runs[0].Notes, " "), "interrupted before the first phase (while starting slow)") {
		t.Fatalf("want the relay named and the stage said, got %+v", f.Runs)
	}
	wantSaidInWords(t, p, "while starting slow", "slow: not measured")
	if left := procsWith("sleep " + marker); len(left) > 0 {
		t.Fatalf("the relay being started outlived the run: %v", left)
	}
}

// wantSaidInWords checks the summary and standard error of a run
// interrupted before its first phase: the stage and the relay in words,
// no Go error, and no claim that figures were measured.
func wantSaidInWords(t *testing.T, p *cliProc, stage, relay string) {
	t.Helper()
	out, errs := p.stdout(), p.stderr()
	if strings.Contains(out+errs, "context canceled") {
		t.Errorf("a Go error shown:\n%s\n%s", out, errs)
	}
	for _, want := range []string{"(" + stage + "): nothing was measured", "INTERRUPTED before anything was measured", "Relay:    " + relay} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "figures cover the time until the stop") || strings.Contains(out, "software unknown") {
		t.Errorf("the summary describes a measurement that never was:\n%s", out)
	}
}

// procsWith returns the pids of live processes whose command line is
// exactly cmdline (arguments separated by spaces).
func procsWith(cmdline string) []int {
	var pids []int
	names, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil || strings.TrimSuffix(strings.ReplaceAll(string(b), "\x00", " "), " ") != cmdline {
			continue
		}
		var pid int
		fmt.Sscanf(filepath.Base(filepath.Dir(n)), "%d", &pid)
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !strings.Contains(string(st), ") Z ") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestSIGKILLLeavesNoShellGrandchild: a relay started through a shell
// template forks a grandchild the parent-death signal never reaches.
// relaybench killed outright (SIGKILL) must still take it along, and the
// next start removes the run dir the killed run left.
func TestSIGKILLLeavesNoShellGrandchild(t *testing.T) {
	bin := relaybenchBin(t)
	data := t.TempDir()
	marker := fmt.Sprint(900000 + os.Getpid()%90000) // the grandchild: sleep MARKER
	tmpl := fmt.Sprintf("shx=sh -c 'sleep %s & exec %s relay serve --addr {addr} --data-dir {dir}'", marker, bin)
	p := newCLI(t, "load", "--events", "200", "--load-base", "20", "--load-duration", "120s", "--load-connections", "1",
		"--relay", tmpl, "--cache-dir", t.TempDir(), "--out", t.TempDir(), "--no-progress")
	env := append(os.Environ(), "RELAYBENCH_DATA="+data)
	p.cmd.Env = env
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.start(t)
	t.Cleanup(func() {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		for _, pid := range procsWith("sleep " + marker) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	// Hang guards only: wait for the grandchild, kill relaybench, wait for
	// the grandchild to go.
	p.poll(t, func() bool { return len(procsWith("sleep "+marker)) > 0 }, 2*time.Minute, "the relay's grandchild running")
	runDirs, _ := filepath.Glob(filepath.Join(data, "relaybench-run-shx-*"))
	if len(runDirs) != 1 {
		t.Fatalf("run dirs %v, want one", runDirs)
	}
	p.kill() // SIGKILL relaybench alone, not its process group
	p.exit(t, time.Minute)
	for deadline := time.Now().Add(time.Minute); len(procsWith("sleep "+marker)) > 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if p := procsWith("sleep " + marker); len(p) > 0 {
		t.Fatalf("the relay's grandchild %v outlived relaybench's SIGKILL", p)
	}
	// The next start sweeps the run dir its killed owner left.
	next := newCLI(t, "run", "--events", "20", "--queries", "2", "--relay", "shx=sh -c 'exec "+bin+" relay serve --addr {addr} --data-dir {dir}'",
		"--cache-dir", t.TempDir(), "--out", t.TempDir(), "--no-progress")
	next.cmd.Env = env
	code := next.start(t).exit(t, 3*time.Minute) // its status is not the point: the sweep at its relay's start is
	if _, serr := os.Stat(runDirs[0]); !os.IsNotExist(serr) {
		t.Errorf("the next start left %s: %v\nnext run: exit %d\n%s", runDirs[0], serr, code, lastLines(next.stdout()+next.stderr(), 5))
	}
}
