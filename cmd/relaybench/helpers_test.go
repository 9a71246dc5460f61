package main

// Helpers the command's tests share: running the CLI (built binary or in
// this process), reading what it wrote, and finding the processes it left.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testrelay"
	"github.com/relaybench/relaybench/results"
)

// integration skips tests that build relays from registries or need
// PostgreSQL unless RELAYBENCH_INTEGRATION=1 (scripts/test and CI set it).
func integration(t *testing.T) {
	t.Helper()
	if os.Getenv("RELAYBENCH_INTEGRATION") != "1" {
		t.Skip("set RELAYBENCH_INTEGRATION=1 (scripts/test does) to build relayer and run it on PostgreSQL")
	}
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// relaybenchBin builds the real binary once per test run: the harness starts
// relays as "relaybench relay serve" children, which the test binary is not.
func relaybenchBin(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "relaybench-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "relaybench")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = err
			t.Logf("%s", out)
		}
	})
	if binErr != nil {
		t.Fatalf("build relaybench: %v", binErr)
	}
	return binPath
}

type cliResult struct {
	code           int
	stdout, stderr string
}

// runCLI runs the built binary with args (a 3-minute hang guard).
func runCLI(t *testing.T, args ...string) cliResult {
	t.Helper()
	return runBin(t, relaybenchBin(t), 3*time.Minute, args...)
}

// runBin runs bin with args and returns its exit status and output; a run
// past limit fails the test.
func runBin(t *testing.T, bin string, limit time.Duration, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("relaybench %s did not end within %v", strings.Join(args, " "), limit)
	}
	return cliResult{code, so.String(), se.String()}
}

// runHere runs the CLI in this process (no binary, no relay) and returns
// its exit status and what it printed.
func runHere(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	so, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	se, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = so, se
	func() {
		defer func() { os.Stdout, os.Stderr = oldOut, oldErr }()
		code = run(args)
	}()
	so.Close()
	se.Close()
	o, _ := os.ReadFile(so.Name())
	e, _ := os.ReadFile(se.Name())
	return code, string(o), string(e)
}

// startUntil starts cmd (its stderr read line by line, its stdout
// discarded unless set) and returns once a line of stderr satisfies seen;
// what names that moment in the failure of a run that ends first or takes
// longer than guard. The whole stderr is in errText once done is closed.
func startUntil(t *testing.T, cmd *exec.Cmd, seen func(line string) bool, guard time.Duration, what string) (done <-chan struct{}, errText *strings.Builder) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if cmd.Stdout == nil {
		cmd.Stdout = io.Discard
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reached := make(chan struct{})
	finished := make(chan struct{})
	errText = &strings.Builder{}
	go func() {
		defer close(finished)
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			errText.WriteString(sc.Text() + "\n")
			if !once && seen(sc.Text()) {
				once = true
				close(reached)
			}
		}
	}()
	select {
	case <-reached:
	case <-finished:
		cmd.Wait()
		t.Fatalf("the run ended before %s:\n%s", what, errText.String())
	case <-time.After(guard): // hang guard
		cmd.Process.Kill()
		t.Fatalf("%s never came", what)
	}
	return finished, errText
}

// waitExit waits for cmd to end, with a hang guard, and returns its status.
func waitExit(t *testing.T, cmd *exec.Cmd, guard time.Duration) int {
	t.Helper()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(guard):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("relaybench did not exit within %v of the signal", guard)
	}
	return cmd.ProcessState.ExitCode()
}

// wantOneLine fails unless stderr is exactly one "relaybench: …" line
// holding every string of want.
func wantOneLine(t *testing.T, stderr string, want ...string) {
	t.Helper()
	msg := strings.TrimSuffix(stderr, "\n")
	if msg == "" || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "relaybench: ") {
		t.Fatalf("want one line on stderr, got %q", stderr)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Fatalf("error %q does not name %q", msg, w)
		}
	}
}

// wantEmptyDir fails unless dir holds nothing.
func wantEmptyDir(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) > 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("%s is not empty: %v", dir, names)
	}
}

// readResults reads the results file at path.
func readResults(t *testing.T, path string) *results.File {
	t.Helper()
	f, err := results.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

// processes lists the live processes for which match holds, given the
// process's /proc directory and its command line (arguments separated by
// spaces), each as "PID: COMMAND LINE".
func processes(match func(dir, cmdline string) bool) []string {
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		dir := filepath.Join("/proc", e.Name())
		b, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil {
			continue
		}
		if cl := strings.ReplaceAll(string(b), "\x00", " "); match(dir, cl) {
			found = append(found, e.Name()+": "+cl)
		}
	}
	return found
}

// relaysUnder lists live processes whose command line mentions dir: relays
// started by a run keep their data dir under its results folder.
func relaysUnder(dir string) []string {
	return processes(func(_, cl string) bool { return strings.Contains(cl, dir) && strings.Contains(cl, "relay serve") })
}

// postgresLeft lists postgres processes whose data directory is one of
// relaybench's (other PostgreSQL servers on the machine are not ours).
func postgresLeft(dir string) []string {
	return processes(func(_, cl string) bool {
		return strings.Contains(cl, "postgres") && strings.Contains(cl, "relaybench") && strings.Contains(cl, dir)
	})
}

// processesRunning lists live processes whose command line or environment
// mentions dir: every relay relaybench starts gets its run dir (under
// TMPDIR) in one or the other (ORLY takes its data dir from ORLY_DATA_DIR).
func processesRunning(dir string) []string {
	return processes(func(proc, cl string) bool {
		env, _ := os.ReadFile(filepath.Join(proc, "environ"))
		return strings.Contains(cl, dir) || strings.Contains(string(env), "_DIR="+dir)
	})
}

// embeddedRelay starts the embedded relay (relay serve, native store) as a
// child process and returns its URL.
func embeddedRelay(t *testing.T, tmp string) string {
	t.Helper()
	p, out := startServe(t, tmp, "relay", "serve", "--store", "native")
	return listeningURL(t, p, out)
}

// runChild runs the CLI as a child process (this test binary re-executed,
// see TestRelayServeHelper) and returns its exit status and stderr.
func runChild(t *testing.T, tmp string, args ...string) (int, string) {
	t.Helper()
	p, _ := startServe(t, tmp, args...)
	return waitChild(t, p, args[0]), p.stderr.String()
}

// runSegments runs n children at once, child i with args(i), and fails
// unless every one exits 0.
func runSegments(t *testing.T, tmp string, n int, args func(i int) []string) {
	t.Helper()
	var kids []*serveProc
	for i := range n {
		p, _ := startServe(t, tmp, args(i)...)
		kids = append(kids, p)
	}
	for i, p := range kids {
		if code := waitChild(t, p, fmt.Sprintf("segment %d", i)); code != 0 {
			t.Fatalf("segment %d: exit %d: %s", i, code, p.stderr)
		}
	}
}

// waitChild waits for the child p to end (a 3-minute hang guard; what
// names it) and returns its exit status.
func waitChild(t *testing.T, p *serveProc, what string) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(3 * time.Minute):
		t.Fatalf("%s still running after 3 minutes; stderr: %s", what, p.stderr)
	}
	return exitCode(p.err)
}

func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	default:
		return -1
	}
}

// usageCase is a command line refused as a usage error naming want.
type usageCase struct{ args, want []string }

// wantUsage runs each case in this process and wants exit status 2 and
// one line on stderr naming every string of its want.
func wantUsage(t *testing.T, cases []usageCase) {
	t.Helper()
	for _, c := range cases {
		code, _, stderr := runHere(t, c.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage); stderr %q", c.args, code, stderr)
			continue
		}
		wantOneLine(t, stderr, c.want...)
	}
}

// sharedBinDir is where relays built from source live next to the
// repository (../shared/relays/bin from its root); RELAYBENCH_SHARED_BIN
// overrides it.
func sharedBinDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("RELAYBENCH_SHARED_BIN")
	if dir == "" {
		abs, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "relays", "bin"))
		if err != nil {
			t.Fatal(err)
		}
		dir = abs
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Skipf("no %s: relays built from source are not on this machine (a user's clone)", dir)
	}
	return dir
}

// sharedBinWith is sharedBinDir, the test skipped unless it holds a binary
// called name.
func sharedBinWith(t *testing.T, name string) string {
	t.Helper()
	dir := sharedBinDir(t)
	if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		t.Skipf("no %s in %s", name, dir)
	}
	return dir
}

// runAgainst runs bin with args against the relay at url, its results file
// in a fresh folder (the corpus cache given, --no-progress, then extra),
// and returns the run and its results file, which must exist.
func runAgainst(t *testing.T, bin, url, cache string, args []string, extra ...string) (cliResult, *results.File) {
	t.Helper()
	out := t.TempDir()
	path := filepath.Join(out, "r.json")
	args = append(append([]string{}, args...), "--relay", url, "--cache-dir", cache, "--out", out, "--json", path, "--no-progress")
	res := runBin(t, bin, 2*time.Minute, append(args, extra...)...)
	f, err := results.Read(path)
	if err != nil {
		t.Fatalf("exit %d, no results file: %v\nstderr: %s", res.code, err, res.stderr)
	}
	return res, f
}

// runOnTestRelay is runAgainst a fresh test relay with cfg (closed when the
// test ends), which it returns too.
func runOnTestRelay(t *testing.T, bin, cache string, cfg testrelay.Config, args []string, extra ...string) (cliResult, *results.File, *testrelay.Relay) {
	t.Helper()
	r := testrelay.New(cfg)
	t.Cleanup(r.Close)
	res, f := runAgainst(t, bin, r.URL(), cache, args, extra...)
	return res, f, r
}
