package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/sys/unix"
)

// Host is the address every relay listens on: load goes only to loopback.
const Host = "127.0.0.1"

// StartOptions configure one relay start.
type StartOptions struct {
	// BaseDir is the results folder: the relay's output goes to
	// BaseDir/<name>.log (PostgreSQL's to BaseDir/<name>-postgres.log).
	// Empty means $TMPDIR/relaybench-logs.
	BaseDir string
	// Port to listen on; 0 picks a free one.
	Port int
	// CPUs pins the relay (and its PostgreSQL) to these CPUs, e.g. "1" or
	// "0-1"; empty leaves it unpinned.
	CPUs string
	// Bins maps relay names to user-supplied binaries (--bin name=PATH).
	Bins map[string]string
	// BinDir is a folder of prebuilt binaries named after relays (see
	// Options.BinDir); empty means $RELAYBENCH_BIN_DIR.
	BinDir string
	// Verbose copies the relay's output to stderr as well.
	Verbose bool
	// SelfBin is the relaybench binary for "self" relays (tests); empty
	// means os.Executable().
	SelfBin string
	// CacheDir overrides CacheRoot() for installed relays.
	CacheDir string
	// DataRoot is where run directories (data dir, config, PostgreSQL
	// cluster) are created; empty means $RELAYBENCH_DATA or os.TempDir().
	// It should be on the disk you want to measure, not a tmpfs.
	DataRoot string
}

func (o StartOptions) options() Options {
	return Options{CacheDir: o.CacheDir, Bins: o.Bins, BinDir: o.BinDir, SelfBin: o.SelfBin}
}

// Instance is a running relay.
type Instance struct {
	Name    string
	URL     string // ws://127.0.0.1:PORT
	Port    int
	DataDir string // the relay's data; removed by Stop
	RunDir  string // holds DataDir, the config file and the PostgreSQL cluster
	LogFile string
	PID     int // process (group) id of the relay; changes on Reset
	Spec    Spec
	// Postgres is the relay's private cluster, for specs that need one.
	Postgres *Postgres

	opts     StartOptions
	bin      string
	rendered Rendered

	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{}
	exitErr  error         // set before exited is closed
	stopping bool          // the current process is being stopped on purpose
	stopped  bool          // Stop has run: the instance is gone
	stopDone chan struct{} // closed when the Stop that set stopped has finished
	logf     *os.File
	pgid     atomic.Int64 // the live process group, 0 when none (for KillAll)
	reaper   *reaper      // kills the group if relaybench dies (see reaper.go)
}

// Start installs nothing: it starts the catalog relay called name, waits
// until its port accepts a WebSocket upgrade and registers it for StopAll.
// A relay that cannot run here (no binary, not installed) gives a
// *SkipError.
func Start(ctx context.Context, name string, o StartOptions) (*Instance, error) {
	spec, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	return StartSpec(ctx, spec, o)
}

// StartSpec is Start for a spec that need not be in the catalog.
func StartSpec(ctx context.Context, spec Spec, o StartOptions) (*Instance, error) {
	if err := spec.compile(); err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Name, err)
	}
	bin, err := resolveBin(spec, o.options())
	if err != nil {
		return nil, err
	}
	if spec.Postgres {
		if err := PostgresUsable(); err != nil {
			return nil, &SkipError{spec.Name, err.Error()}
		}
	}
	if o.CPUs != "" {
		if _, err := ParseCPUs(o.CPUs); err != nil {
			return nil, err
		}
	}
	root := o.DataRoot
	if root == "" {
		root = os.Getenv("RELAYBENCH_DATA")
	}
	if root == "" {
		root = os.TempDir()
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("%s: data root: %w", spec.Name, err)
	}
	sweepStale(root, runPrefix)
	runDir, err := os.MkdirTemp(root, runPrefix+spec.Name+"-")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Name, err)
	}
	os.Chmod(runDir, 0o755)
	os.WriteFile(filepath.Join(runDir, ownerFile), []byte(ownerStamp()), 0o644)

	i := &Instance{Name: spec.Name, Spec: spec, RunDir: runDir, DataDir: filepath.Join(runDir, "data"), opts: o, bin: bin}
	// Registered from the moment its run directory exists, so that StopAll
	// (a forced exit while the relay is still starting) removes it too.
	register(i)
	ok := false
	defer func() {
		if !ok {
			i.Stop(context.Background())
		}
	}()
	logDir := o.BaseDir
	if logDir == "" {
		logDir = filepath.Join(os.TempDir(), "relaybench-logs")
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: log dir: %w", spec.Name, err)
	}
	i.LogFile = filepath.Join(logDir, spec.Name+".log")
	if i.logf, err = os.OpenFile(i.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Name, err)
	}
	if spec.Postgres {
		// Before the relay's port is chosen, so the two cannot collide.
		if i.Postgres, err = StartPostgres(ctx, runDir, filepath.Join(logDir, spec.Name+"-postgres.log"), o.CPUs); err != nil {
			return nil, fmt.Errorf("%s: %w", spec.Name, err)
		}
	}
	for attempt := 1; ; attempt++ {
		i.Port = o.Port
		if i.Port == 0 {
			if i.Port, err = freePort(); err != nil {
				return nil, fmt.Errorf("%s: %w", spec.Name, err)
			}
		}
		i.URL = "ws://" + net.JoinHostPort(Host, strconv.Itoa(i.Port))
		err = i.launch(ctx)
		if err == nil {
			break
		}
		// A free port can be taken by someone else before the relay binds
		// it: try another one.
		if o.Port != 0 || attempt == 3 || !strings.Contains(strings.ToLower(err.Error()), "address already in use") {
			return nil, err
		}
		i.mu.Lock()
		i.stopProcess(ctx) // what the failed attempt left in its group, and its reaper
		i.mu.Unlock()
		os.RemoveAll(i.DataDir)
	}
	ok = true
	return i, nil
}

// launch renders the spec, starts the process in a fresh data dir and waits
// for readiness. Called without i.mu held.
func (i *Instance) launch(ctx context.Context) error {
	if err := os.MkdirAll(i.DataDir, 0o755); err != nil {
		return fmt.Errorf("%s: %w", i.Name, err)
	}
	d := TemplateData{Bin: i.bin, Host: Host, Port: i.Port, Addr: net.JoinHostPort(Host, strconv.Itoa(i.Port)),
		DataDir: i.DataDir, RunDir: i.RunDir}
	if i.Spec.ConfigName != "" {
		d.ConfigFile = filepath.Join(i.RunDir, i.Spec.ConfigName)
	}
	if i.Postgres != nil {
		d.DatabaseURL = i.Postgres.URL
	}
	r, err := i.Spec.Render(d)
	if err != nil {
		return fmt.Errorf("%s: %w", i.Name, err)
	}
	i.rendered = r
	if d.ConfigFile != "" {
		if err := os.WriteFile(d.ConfigFile, []byte(r.Config), 0o644); err != nil {
			return fmt.Errorf("%s: %w", i.Name, err)
		}
	}
	fmt.Fprintf(i.logf, "=== relaybench %s: starting %s: %s\n", time.Now().UTC().Format(time.RFC3339), i.Name, strings.Join(r.Args, " "))
	cmd := exec.Command(r.Args[0], r.Args[1:]...)
	cmd.Dir = i.RunDir
	cmd.Env = append(os.Environ(), r.Env...)
	var out io.Writer = i.logf
	if i.opts.Verbose {
		out = io.MultiWriter(i.logf, prefixWriter{os.Stderr, i.Name + ": "})
	}
	cmd.Stdout, cmd.Stderr = out, out
	// Pdeathsig: if relaybench is killed outright, the relay goes too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := startPinned(cmd, i.opts.CPUs); err != nil {
		return fmt.Errorf("%s: start %s: %w", i.Name, r.Args[0], err)
	}
	// Pdeathsig reaches only this process: the reaper takes the rest of
	// its group along if relaybench is killed outright.
	rp, err := startReaper(cmd.Process.Pid)
	if err != nil {
		fmt.Fprintf(i.logf, "=== relaybench: %v: processes the relay started may outlive a killed relaybench\n", err)
	}
	exited := make(chan struct{})
	i.mu.Lock()
	if i.stopped { // Stop ran while this (re)start was under way
		i.mu.Unlock()
		killGroup(cmd.Process.Pid)
		cmd.Wait()
		rp.disarm()
		return fmt.Errorf("%s: stopped while starting", i.Name)
	}
	i.cmd, i.PID, i.exited, i.exitErr, i.stopping = cmd, cmd.Process.Pid, exited, nil, false
	i.reaper = rp
	i.pgid.Store(int64(cmd.Process.Pid))
	i.mu.Unlock()
	go func() {
		err := cmd.Wait()
		i.mu.Lock()
		if !i.stopping {
			if err == nil {
				err = errors.New("exited with status 0")
			}
			i.exitErr = fmt.Errorf("%s exited unexpectedly: %v%s", i.Name, err, logTail(i.LogFile, 5))
		}
		i.mu.Unlock()
		close(exited)
	}()
	return i.waitReady(ctx, exited)
}

// waitReady polls until the relay accepts a WebSocket upgrade.
func (i *Instance) waitReady(ctx context.Context, exited chan struct{}) error {
	limit := i.Spec.ReadyWithin()
	deadline := time.Now().Add(limit)
	var last error
	for {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		c, _, err := websocket.Dial(actx, i.URL, nil)
		cancel()
		if err == nil {
			c.Close(websocket.StatusNormalClosure, "")
			if owned, known := listenerOwned(i.Port, int(i.pgid.Load())); known && !owned {
				// Another process took the port between freePort and the
				// relay's bind (listener.go): Start tries another port.
				return fmt.Errorf("%s: port %d: address already in use: another process holds it and answered in the relay's place", i.Name, i.Port)
			}
			return nil
		}
		last = err
		select {
		case <-exited:
			i.mu.Lock()
			err := i.exitErr
			i.mu.Unlock()
			return fmt.Errorf("%s: exited before it was ready: %v", i.Name, err)
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", i.Name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not ready within %v (%v)%s", i.Name, limit, last, logTail(i.LogFile, 3))
		}
	}
}

// Exited is closed when the current relay process exits, for whatever
// reason. After Reset, call it again for the new process.
func (i *Instance) Exited() <-chan struct{} {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.exited == nil {
		c := make(chan struct{})
		close(c)
		return c
	}
	return i.exited
}

// ExitErr says why the relay died when it exited without being asked to;
// nil while it runs or after Stop.
func (i *Instance) ExitErr() error {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.exitErr
}

// Stop stops the relay: the stop signal to its process group, the grace
// period, then SIGKILL to the group; then it stops PostgreSQL and removes the
// run directory (data dir included). It is idempotent and safe to call from
// any goroutine; a cancelled ctx shortens the grace period.
func (i *Instance) Stop(ctx context.Context) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.stopped {
		// Another caller is stopping it (a second Ctrl-C while the first
		// stops the relay): wait until the run directory is gone, so that
		// an exit right after this leaves nothing behind.
		done := i.stopDone
		i.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
		}
		i.mu.Lock()
		return nil
	}
	i.stopped = true
	i.stopDone = make(chan struct{})
	defer close(i.stopDone)
	defer unregister(i)
	i.stopProcess(ctx)
	var errs []error
	if i.Postgres != nil {
		errs = append(errs, i.Postgres.Close(ctx))
	}
	if i.logf != nil {
		i.logf.Close()
	}
	if err := os.RemoveAll(i.RunDir); err != nil {
		errs = append(errs, fmt.Errorf("%s: remove %s: %w", i.Name, i.RunDir, err))
	}
	return errors.Join(errs...)
}

// stopProcess stops the current process group. Called with i.mu held.
func (i *Instance) stopProcess(ctx context.Context) {
	if i.cmd == nil {
		return
	}
	i.stopping = true
	exited, pgid := i.exited, i.PID
	i.mu.Unlock()
	stopGroup(ctx, pgid, i.Spec.StopSig(), i.Spec.GracePeriod(), exited)
	i.mu.Lock()
	i.reaper.disarm()
	i.cmd, i.reaper = nil, nil
	i.pgid.Store(0)
}

// Reset stops the relay, empties its data dir (and its database), and
// starts it again on the same port.
func (i *Instance) Reset(ctx context.Context) error {
	i.mu.Lock()
	if i.stopped {
		i.mu.Unlock()
		return fmt.Errorf("%s: reset after stop", i.Name)
	}
	i.stopProcess(ctx)
	i.mu.Unlock()
	if err := os.RemoveAll(i.DataDir); err != nil {
		return fmt.Errorf("%s: wipe %s: %w", i.Name, i.DataDir, err)
	}
	if i.Postgres != nil {
		if err := i.Postgres.ResetDatabase(ctx); err != nil {
			return fmt.Errorf("%s: %w", i.Name, err)
		}
	}
	return i.launch(ctx)
}

// stopGroup sends sig to process group pgid, waits for the leader to exit
// and the group to empty for up to grace (less if ctx ends), then SIGKILLs
// whatever is left and waits (bounded) until nothing of the group lives.
func stopGroup(ctx context.Context, pgid int, sig syscall.Signal, grace time.Duration, leaderExited <-chan struct{}) {
	deadline := time.Now().Add(grace)
	_ = signalGroup(pgid, sig)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-leaderExited:
	case <-timer.C:
	case <-ctx.Done():
	}
	for len(groupLive(pgid)) > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	if len(groupLive(pgid)) > 0 {
		killGroup(pgid)
	}
	select {
	case <-leaderExited:
	case <-time.After(5 * time.Second):
	}
	for end := time.Now().Add(5 * time.Second); len(groupLive(pgid)) > 0 && time.Now().Before(end); {
		killGroup(pgid)
		time.Sleep(20 * time.Millisecond)
	}
}

// startPinned starts cmd; with cpus set, the child is forked from a thread
// pinned to those CPUs, so it and every thread it creates inherit the mask
// from the first instruction.
func startPinned(cmd *exec.Cmd, cpus string) error {
	if cpus == "" {
		return cmd.Start()
	}
	set, err := ParseCPUs(cpus)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		var old unix.CPUSet
		if err := unix.SchedGetaffinity(0, &old); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("sched_getaffinity: %w", err)
			return
		}
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("pin to CPUs %s: %w", cpus, err)
			return
		}
		err := cmd.Start()
		unix.SchedSetaffinity(0, &old)
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(Host, "0"))
	if err != nil {
		return 0, fmt.Errorf("no free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// logTail returns "; last log lines: a | b | c" from the end of a log file.
func logTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, _ := f.Stat()
	off := st.Size() - 8192
	if off < 0 {
		off = 0
	}
	buf := make([]byte, st.Size()-off)
	f.ReadAt(buf, off)
	lines := strings.Split(strings.TrimRight(string(buf), "\n"), "\n")
	var keep []string
	for j := len(lines) - 1; j >= 0 && len(keep) < n; j-- {
		l := strings.TrimSpace(lines[j])
		if l == "" || strings.HasPrefix(l, "=== relaybench") {
			if strings.HasPrefix(l, "=== relaybench") {
				break // older runs are not this one's
			}
			continue
		}
		keep = append([]string{l}, keep...)
	}
	if len(keep) == 0 {
		return " (log: " + path + ")"
	}
	return "; last log lines: " + strings.Join(keep, " | ") + " (log: " + path + ")"
}

// prefixWriter writes each chunk with a prefix (for --verbose output).
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if len(line) > 0 {
			p.w.Write(append([]byte(p.prefix), line...))
		}
	}
	return len(b), nil
}

// The registry of live instances, for StopAll and KillAll.
var (
	liveMu sync.Mutex
	live   = map[*Instance]struct{}{}
)

func register(i *Instance)   { liveMu.Lock(); live[i] = struct{}{}; liveMu.Unlock() }
func unregister(i *Instance) { liveMu.Lock(); delete(live, i); liveMu.Unlock() }

// Live returns the instances started and not yet stopped.
func Live() []*Instance {
	liveMu.Lock()
	defer liveMu.Unlock()
	out := make([]*Instance, 0, len(live))
	for i := range live {
		out = append(out, i)
	}
	return out
}

// StopAll stops every live instance, concurrently, and waits for them.
func StopAll(ctx context.Context) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, i := range Live() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := i.Stop(ctx); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// KillAll SIGKILLs the process groups of every live instance (and their
// PostgreSQL) without waiting: for a forced exit, where StopAll would take
// too long. Run directories are left for the next start to sweep.
func KillAll() {
	for _, i := range Live() {
		if g := int(i.pgid.Load()); g > 0 {
			killGroup(g)
		}
		if pg := i.Postgres; pg != nil && pg.PID > 0 {
			killGroup(pg.PID)
		}
	}
}

const (
	runPrefix = "relaybench-run-"
	ownerFile = "owner.pid"
)

// sweepStale removes the directories root/prefix* whose owning relaybench
// process is gone (killed before it could clean up): run directories, so no
// run finds another's data, and half-finished builds.
func sweepStale(root, prefix string) {
	matches, _ := filepath.Glob(filepath.Join(root, prefix+"*"))
	for _, dir := range matches {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		if ownerGone(string(b)) {
			os.RemoveAll(dir)
		}
	}
}
