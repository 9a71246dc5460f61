package harness

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// TestKilledParentTakesShellGrandchildren: a relay started through a shell
// leaves a grandchild (a subshell running sleep, which ignores SIGTERM)
// that the parent-death signal never reaches. SIGKILL to relaybench (the
// helper) must still take the whole group: the reaper kills it. The run
// dir stays until the next start, which removes it since its owner is gone.
func TestKilledParentTakesShellGrandchildren(t *testing.T) {
	t.Setenv("RELAYBENCH_DATA", t.TempDir()) // no other start sweeps the run dir first
	g, pgid, runDir := helper(t, "group")
	if n := len(groupLive(pgid)); n < 2 {
		t.Fatalf("relay group %d has %d live processes, want the relay and its grandchild", pgid, n)
	}
	g.cmd.Process.Kill()
	waitExit(t, g, 30*time.Second)
	// The reaper acts as soon as the kernel closes its pipe.
	assertOrphanCleaned(t, pgid, runDir)
}

// TestReaperDisarmed: a relay relaybench stops itself leaves no reaper
// behind, and the reaper kills nothing then.
func TestReaperDisarmed(t *testing.T) {
	sleeper := startGroup(t, exec.Command("sleep", "1000")).cmd
	rp, err := startReaper(sleeper.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	rp.disarm()
	rp.disarm() // idempotent
	select {
	case <-rp.done:
	case <-time.After(30 * time.Second):
		t.Fatal("a disarmed reaper still runs after 30s")
	}
	if len(groupLive(sleeper.Process.Pid)) == 0 {
		t.Error("a disarmed reaper killed the group")
	}
}

// TestOwnerGone: an owner file names a live process by pid and start time;
// a dead pid, or a pid now used by another process, is gone.
func TestOwnerGone(t *testing.T) {
	if ownerGone(ownerStamp()) {
		t.Error("this process is gone")
	}
	pp := os.Getppid()
	st, ok := readStat(pp)
	if !ok {
		t.Skip("cannot read the parent's stat")
	}
	self := strconv.Itoa(pp) + " " + strconv.FormatInt(st.start, 10)
	reused := strconv.Itoa(pp) + " " + strconv.FormatInt(st.start+1, 10)
	if ownerGone(self) || ownerGone(strconv.Itoa(pp)) {
		t.Error("the live parent is gone")
	}
	if !ownerGone(reused) {
		t.Error("a reused pid keeps the owner alive")
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	if !ownerGone(strconv.Itoa(dead.Process.Pid)) {
		t.Error("a dead pid is alive")
	}
	if ownerGone("") || ownerGone("garbage") {
		t.Error("an unreadable owner file lets its dir be removed")
	}
}
