package main

// Helpers the command's tests share: running the CLI (built binary or in
// this process), reading what it wrote, and finding the processes it left.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/relaybench/relaybench/internal/testkit"
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

// relaybenchBin is the real binary, built once per test run
// (testkit.Relaybench): the harness starts relays as "relaybench relay
// serve" children, which the test binary is not.
func relaybenchBin(t *testing.T) string {
	t.Helper()
	bin, err := testkit.Relaybench()
	if err != nil {
		t.Fatalf("build relaybench: %v", err)
	}
	return bin
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
	return runBinEnv(t, bin, nil, limit, args...)
}

// runBinEnv is runBin with env (KEY=VALUE) added to the binary's
// environment: t.Setenv cannot be used in a parallel test.
func runBinEnv(t *testing.T, bin string, env []string, limit time.Duration, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
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

// cliProc is the built binary running as a child process, what it writes
// to stdout and stderr kept, its end reaped.
type cliProc struct {
	cmd     *exec.Cmd
	mu      sync.Mutex
	out     bytes.Buffer    // stdout, unless the test set cmd.Stdout
	errText strings.Builder // stderr
	more    chan struct{}   // closed (and replaced) at each write to stderr
	ended   chan struct{}   // closed once the process is reaped
}

// newCLI prepares the built binary with args, to be started with start
// (after the test sets cmd's environment or stdout, if it must).
func newCLI(t *testing.T, args ...string) *cliProc {
	t.Helper()
	return newProc(exec.Command(relaybenchBin(t), args...))
}

func newProc(cmd *exec.Cmd) *cliProc {
	return &cliProc{cmd: cmd, more: make(chan struct{}), ended: make(chan struct{})}
}

// startCLI starts the built binary with args.
func startCLI(t *testing.T, args ...string) *cliProc {
	t.Helper()
	return newCLI(t, args...).start(t)
}

// start starts p; it is killed if the test ends first. A child of p that
// holds p's output open past p's end does not hold up the reaping (10 s).
func (p *cliProc) start(t *testing.T) *cliProc {
	t.Helper()
	if p.cmd.Stdout == nil {
		p.cmd.Stdout = lockedWriter{p, &p.out}
	}
	p.cmd.Stderr = lockedWriter{p, &p.errText}
	p.cmd.WaitDelay = 10 * time.Second
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.ended) }()
	t.Cleanup(func() { p.kill(); <-p.ended })
	return p
}

// lockedWriter writes to w under p's lock and tells p's waiters.
type lockedWriter struct {
	p *cliProc
	w io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.p.mu.Lock()
	defer l.p.mu.Unlock()
	close(l.p.more)
	l.p.more = make(chan struct{})
	return l.w.Write(b)
}

// until returns once a whole line of p's stderr satisfies seen; what names
// that moment in the failure of a run that ends first or takes longer
// than guard.
func (p *cliProc) until(t *testing.T, seen func(line string) bool, guard time.Duration, what string) {
	t.Helper()
	checked := 0
	p.await(t, func(_, stderr string) bool {
		for nl := strings.IndexByte(stderr[checked:], '\n'); nl >= 0; nl = strings.IndexByte(stderr[checked:], '\n') {
			line := stderr[checked : checked+nl]
			checked += nl + 1
			if seen(line) {
				return true
			}
		}
		return false
	}, guard, what)
}

// await returns once cond holds of what p wrote to stdout and stderr so
// far, asked again at each write; what names that moment in the failure
// of a run that ends first or takes longer than guard.
func (p *cliProc) await(t *testing.T, cond func(stdout, stderr string) bool, guard time.Duration, what string) {
	t.Helper()
	timeout := time.After(guard) // hang guard
	for {
		p.mu.Lock()
		stdout, stderr, more := p.out.String(), p.errText.String(), p.more
		p.mu.Unlock()
		if cond(stdout, stderr) {
			return
		}
		select {
		case <-more:
		case <-p.ended:
			if p.stdout() != stdout || p.stderr() != stderr {
				continue // its last words came with its end
			}
			t.Fatalf("the run ended before %s:\n%s", what, stderr)
		case <-timeout:
			p.kill()
			t.Fatalf("%s never came; stderr: %s", what, stderr)
		}
	}
}

// poll returns once cond holds, asked every 20 ms; what names that moment
// in the failure of a run that ends first or takes longer than guard.
func (p *cliProc) poll(t *testing.T, cond func() bool, guard time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(guard) // hang guard
	for !cond() {
		select {
		case <-p.ended:
			t.Fatalf("the run ended before %s:\n%s", what, p.stderr())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.kill()
			t.Fatalf("%s never came: %s", what, p.stderr())
		}
	}
}

// interrupt sends p SIGINT (Ctrl-C), terminate SIGTERM, kill SIGKILL.
func (p *cliProc) interrupt() { p.cmd.Process.Signal(syscall.SIGINT) }
func (p *cliProc) terminate() { p.cmd.Process.Signal(syscall.SIGTERM) }
func (p *cliProc) kill()      { p.cmd.Process.Kill() }

// exit waits for p to end, with a hang guard, and returns its exit status
// (-1: killed by a signal); its output is then complete.
func (p *cliProc) exit(t *testing.T, guard time.Duration) int {
	t.Helper()
	select {
	case <-p.ended:
	case <-time.After(guard):
		p.kill()
		<-p.ended
		t.Fatalf("relaybench did not exit within %v", guard)
	}
	return p.cmd.ProcessState.ExitCode()
}

// stdout and stderr are what p wrote there so far.
func (p *cliProc) stdout() string { p.mu.Lock(); defer p.mu.Unlock(); return p.out.String() }
func (p *cliProc) stderr() string { p.mu.Lock(); defer p.mu.Unlock(); return p.errText.String() }

// peakRSS is the ended process's peak resident memory in bytes (false
// where the system does not say).
func (p *cliProc) peakRSS() (int64, bool) {
	ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, false
	}
	return ru.Maxrss << 10, true // KiB
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
var readResults = testkit.ReadResults

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
	return listeningURL(t, startChild(t, tmp, "relay", "serve", "--store", "native"))
}

// startChild starts the CLI with args as a child process: this test binary
// re-executed into TestRelayServeHelper (no build), TMPDIR set to tmp.
func startChild(t *testing.T, tmp string, args ...string) *cliProc {
	t.Helper()
	p := newProc(exec.Command(os.Args[0], "-test.run=^TestRelayServeHelper$"))
	argv, _ := json.Marshal(args)
	p.cmd.Env = append(os.Environ(), serveArgsEnv+"="+string(argv), "TMPDIR="+tmp)
	return p.start(t)
}

// listeningURL is the URL of the child's one "listening ws://…" line on
// stdout, which must come within 30 s.
func listeningURL(t *testing.T, p *cliProc) string {
	t.Helper()
	p.await(t, func(stdout, _ string) bool { return strings.Contains(stdout, "\n") }, 30*time.Second, "the listening line")
	s, _, _ := strings.Cut(p.stdout(), "\n")
	url, ok := strings.CutPrefix(strings.TrimSpace(s), "listening ")
	if !ok || !strings.HasPrefix(url, "ws://127.0.0.1:") {
		t.Fatalf("first stdout line %q, want 'listening ws://127.0.0.1:PORT'; stderr: %s", s, p.stderr())
	}
	return url
}

// runChild runs the CLI as a child process (startChild) and returns its
// exit status and stderr.
func runChild(t *testing.T, tmp string, args ...string) (int, string) {
	t.Helper()
	p := startChild(t, tmp, args...)
	return p.exit(t, 3*time.Minute), p.stderr()
}

// segmentSim is a test split into segments on one machine, as the
// Kubernetes Indexed Job of deploy/ runs it: a folder, the corpus cache its
// processes share, and two embedded relays, single for the test run alone
// and shared for its segments together.
type segmentSim struct {
	tmp, cache     string
	single, shared string
}

// newSegmentSim starts the two relays; in -short mode the test is skipped
// (it starts two relays and several relaybench processes).
func newSegmentSim(t *testing.T) segmentSim {
	t.Helper()
	if testing.Short() {
		t.Skip("starts two relays and several relaybench processes")
	}
	tmp := t.TempDir()
	return segmentSim{tmp: tmp, cache: filepath.Join(tmp, "cache"), single: embeddedRelay(t, tmp), shared: embeddedRelay(t, tmp)}
}

// runSingle runs args, then extra, alone against the single relay; it
// must exit 0, and its results file is returned.
func (s segmentSim) runSingle(t *testing.T, args []string, extra ...string) *results.File {
	t.Helper()
	path := filepath.Join(s.tmp, "single.json")
	args = append(append(append([]string{}, args...), "--relay", s.single, "--json", path), extra...)
	if code, stderr := runChild(t, s.tmp, args...); code != 0 {
		t.Fatalf("single run: exit %d: %s", code, stderr)
	}
	return readResults(t, path)
}

// runSegments runs n segments of args at once against the shared relay,
// segment i with --segment i/n, its results file NAMEi.json and extra; each
// must exit 0. It returns the results files' paths.
func (s segmentSim) runSegments(t *testing.T, name string, n int, args []string, extra ...string) []string {
	t.Helper()
	paths := make([]string, n)
	var kids []*cliProc
	for i := range paths {
		paths[i] = filepath.Join(s.tmp, fmt.Sprintf("%s%d.json", name, i))
		a := append(append([]string{}, args...), "--relay", s.shared, "--json", paths[i], "--segment", fmt.Sprintf("%d/%d", i, n))
		kids = append(kids, startChild(t, s.tmp, append(a, extra...)...))
	}
	for i, p := range kids {
		if code := p.exit(t, 3*time.Minute); code != 0 {
			t.Fatalf("segment %d: exit %d: %s", i, code, p.stderr())
		}
	}
	return paths
}

// merge runs relaybench merge of paths (then extra) into merged.json and
// returns that file's path, the exit status and stderr.
func (s segmentSim) merge(t *testing.T, paths []string, extra ...string) (merged string, code int, stderr string) {
	t.Helper()
	merged = filepath.Join(s.tmp, "merged.json")
	code, stderr = runChild(t, s.tmp, append(append([]string{"merge", "-o", merged}, extra...), paths...)...)
	return merged, code, stderr
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

// sharedBinDir is where relays built from source live: testkit.SharedBinDir
// ($RELAYBENCH_SHARED_BIN, else $RELAYBENCH_BIN_DIR, else shared/relays/bin
// beside the checkout), the one rule every package's tests follow.
func sharedBinDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(testkit.SharedBinDir())
	if err != nil {
		t.Fatal(err)
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

// runRecorded runs bin with args (a 5-minute hang guard), its results file
// in a fresh folder (--out, --json, and --no-progress added), and returns
// what it printed, the results file, which must exist, and the folder.
func runRecorded(t *testing.T, bin string, args ...string) (cliResult, *results.File, string) {
	t.Helper()
	out := t.TempDir()
	path := filepath.Join(out, "r.json")
	res := runBin(t, bin, 5*time.Minute, append(append([]string{}, args...), "--out", out, "--json", path, "--no-progress")...)
	f, err := results.Read(path)
	if err != nil {
		t.Fatalf("exit %d, no results file: %v\nstderr: %s", res.code, err, lastLines(res.stderr, 20))
	}
	return res, f, out
}

// runAgainst runs bin with args against the relay at url (runRecorded,
// the corpus cache given, then extra) and returns the run and its results
// file.
func runAgainst(t *testing.T, bin, url, cache string, args []string, extra ...string) (cliResult, *results.File) {
	t.Helper()
	args = append(append([]string{}, args...), "--relay", url, "--cache-dir", cache)
	res, f, _ := runRecorded(t, bin, append(args, extra...)...)
	return res, f
}

// runOnTestRelay is runAgainst a fresh test relay with cfg (closed when the
// test ends), which it returns too.
func runOnTestRelay(t *testing.T, bin, cache string, cfg testrelay.Config, args []string, extra ...string) (cliResult, *results.File, *testrelay.Relay) {
	t.Helper()
	r := testrelay.Start(t, cfg)
	res, f := runAgainst(t, bin, r.URL(), cache, args, extra...)
	return res, f, r
}

// countingListener listens on 127.0.0.1 and closes every connection it
// accepts; it returns a ws:// URL for it and a function that stops it and
// says how many connections it accepted.
func countingListener(t *testing.T) (string, func() int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var conns atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			c.Close()
		}
	}()
	return "ws://" + ln.Addr().String(), func() int32 {
		ln.Close()
		return conns.Load()
	}
}
