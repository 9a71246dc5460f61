package harness

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestUsageCountsTheChildren: a relay whose work runs in a child process
// (a shell's child that spends CPU, then waits unreaped) is read whole by
// Usage: the tree's CPU holds the child's, which the leader's own stat
// (its own and its reaped children's) does not.
func TestUsageCountsTheChildren(t *testing.T) {
	g := startGroup(t, exec.Command("sh", "-c", `sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; exec sleep 1000' & wait`))
	inst := &Instance{}
	inst.pgid.Store(int64(g.cmd.Process.Pid))
	u := inst.Usage()
	deadline := time.Now().Add(120 * time.Second) // a hang guard: the child's loop is a fixed amount of work
	for {
		if time.Now().After(deadline) {
			t.Fatal("the child did not finish its work within 120 s")
		}
		if sleeping(g.cmd.Process.Pid) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cpu, rss, ok := u.Read()
	leader, _ := readStat(g.cmd.Process.Pid)
	own := float64(leader.cpuTicks) / float64(clkTck)
	if !ok || rss <= 0 || cpu <= own || cpu < 0.02 {
		t.Fatalf("tree CPU %.2f s (rss %d, ok %v), the leader's own %.2f s: the child's work is not counted", cpu, rss, ok, own)
	}
	killGroup(g.cmd.Process.Pid)
	_ = g.wait(t, 30*time.Second, "relay group")
	for _, _, ok := u.Read(); ok; _, _, ok = u.Read() { // the reaping of the child may lag
		if time.Now().After(deadline) {
			t.Fatal("a relay with no process left still reads ok")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sleeping says whether the group led by pgid has its child exec'd into
// sleep (the work done).
func sleeping(pgid int) bool {
	for _, st := range allStats() {
		if st.pgrp == pgid && st.pid != pgid && commOf(st.pid) == "sleep" {
			return true
		}
	}
	return false
}

func commOf(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return strings.TrimSpace(string(b))
}

// BenchmarkUsageRead is what a live view's tick spends reading the
// relay's tree: a full /proc scan every fullScanEvery reads, the known
// processes' stat files in between.
func BenchmarkUsageRead(b *testing.B) {
	cmd := exec.Command("sh", "-c", "sleep 1000 & sleep 1000 & wait")
	cmd.SysProcAttr = groupAttr()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { killGroup(cmd.Process.Pid); _ = cmd.Wait() }()
	inst := &Instance{}
	inst.pgid.Store(int64(cmd.Process.Pid))
	u := inst.Usage()
	b.ResetTimer()
	for b.Loop() {
		u.Read()
	}
}
