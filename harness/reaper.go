package harness

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// A relay runs in its own process group. The parent-death signal
// (Pdeathsig) reaches only the process relaybench started: a relay started
// through a shell (`sh -c "relay & …"`, a wrapper script) leaves
// grandchildren that would outlive a relaybench killed outright (SIGKILL,
// the OOM killer), holding the port and the data dir. So each relay gets a
// reaper: relaybench itself, re-executed (/proc/self/exe, so it works
// without root, without cgroups and even once the binary file is gone) as
// a tiny process in a process group of its own, which blocks reading a
// pipe from relaybench. When relaybench ends in any way, the kernel closes
// the pipe's write end and the reaper SIGKILLs the relay's whole process
// group. When relaybench stops the relay itself, it first writes one byte:
// the reaper then exits without killing anything (the group id may be
// reused once the group is gone).

const (
	reaperName = "relaybench-reaper"      // argv[0] of a reaper
	reaperEnv  = "RELAYBENCH_REAPER_PGID" // the process group it guards
)

func init() {
	// A reaper is relaybench (or a test binary of a package importing
	// harness) started as reaperName with reaperEnv set: it does its one
	// job and exits before anything else runs.
	if g := os.Getenv(reaperEnv); g != "" && filepath.Base(os.Args[0]) == reaperName {
		os.Exit(reap(g))
	}
}

// reap guards process group g until its stdin says disarmed (a byte) or
// ends (relaybench is gone): then it SIGKILLs the group.
func reap(g string) int {
	pgid, err := strconv.Atoi(g)
	if err != nil || pgid <= 1 {
		return 2
	}
	// Signals meant for relaybench (Ctrl-C to the terminal's group, a
	// hang-up) must not end the guard early: only the pipe decides.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
	var b [1]byte
	if n, _ := os.Stdin.Read(b[:]); n == 1 {
		return 0 // disarmed: relaybench stopped the relay itself
	}
	killGroup(pgid)
	return 0
}

// reaper is the handle of a started reaper.
type reaper struct {
	w    *os.File
	done chan struct{}
}

// startReaper starts the reaper of process group pgid.
func startReaper(pgid int) (*reaper, error) {
	r, w, err := os.Pipe() // close-on-exec: no other child inherits w
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{reaperName}
	cmd.Env = append(os.Environ(), reaperEnv+"="+strconv.Itoa(pgid))
	cmd.Stdin = r
	cmd.Dir = "/"
	// Its own group: a signal to relaybench's group (a shell's job
	// control, kill -9 -PGID) does not take the guard along.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("start the reaper of process group %d: %w", pgid, err)
	}
	rp := &reaper{w: w, done: make(chan struct{})}
	go func() { cmd.Wait(); close(rp.done) }()
	return rp, nil
}

// disarm tells the reaper the group is stopped and waits (bounded) until
// it has exited, so that a stopped relay leaves no process behind. It is
// safe on a nil reaper and idempotent.
func (rp *reaper) disarm() {
	if rp == nil || rp.w == nil {
		return
	}
	rp.w.Write([]byte{1})
	rp.w.Close()
	rp.w = nil
	select {
	case <-rp.done:
	case <-time.After(5 * time.Second):
	}
}
