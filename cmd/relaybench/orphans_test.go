package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

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
	cmd := exec.Command(bin, "load", "--events", "200", "--load-base", "20", "--load-duration", "120s", "--load-connections", "1",
		"--relay", tmpl, "--cache-dir", t.TempDir(), "--out", t.TempDir(), "--no-progress")
	cmd.Env = append(os.Environ(), "RELAYBENCH_DATA="+data)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		for _, p := range procsWith("sleep " + marker) {
			syscall.Kill(p, syscall.SIGKILL)
		}
	})
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Hang guards only: wait for the grandchild, kill relaybench, wait for
	// the grandchild to go.
	for deadline := time.Now().Add(2 * time.Minute); len(procsWith("sleep "+marker)) == 0; {
		select {
		case err := <-exited:
			t.Fatalf("relaybench ended before its relay's grandchild ran: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the relay's grandchild never ran")
		}
	}
	runDirs, _ := filepath.Glob(filepath.Join(data, "relaybench-run-shx-*"))
	if len(runDirs) != 1 {
		t.Fatalf("run dirs %v, want one", runDirs)
	}
	cmd.Process.Kill() // SIGKILL relaybench alone, not its process group
	<-exited
	for deadline := time.Now().Add(time.Minute); len(procsWith("sleep "+marker)) > 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if p := procsWith("sleep " + marker); len(p) > 0 {
		t.Fatalf("the relay's grandchild %v outlived relaybench's SIGKILL", p)
	}
	// The next start sweeps the run dir its killed owner left.
	next := exec.Command(bin, "run", "--events", "20", "--queries", "2", "--relay", "shx=sh -c 'exec "+bin+" relay serve --addr {addr} --data-dir {dir}'",
		"--cache-dir", t.TempDir(), "--out", t.TempDir(), "--no-progress")
	next.Env = cmd.Env
	out, err := next.CombinedOutput() // its status is not the point: the sweep at its relay's start is
	if _, serr := os.Stat(runDirs[0]); !os.IsNotExist(serr) {
		t.Errorf("the next start left %s: %v\nnext run: %v\n%s", runDirs[0], serr, err, lastLines(string(out), 5))
	}
}
