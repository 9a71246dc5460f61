package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseLimits(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Limits
	}{
		{"cpu=0.5,mem=256M", Limits{CPU: 0.5, Memory: 256 << 20}},
		{"mem=1G", Limits{Memory: 1 << 30}},
		{"cpus=2", Limits{CPU: 2}},
		{"0.5,256M", Limits{CPU: 0.5, Memory: 256 << 20}},
		{"-,64MiB", Limits{Memory: 64 << 20}},
		{"1.5", Limits{CPU: 1.5}},
		{"memory=8388608", Limits{Memory: 8 << 20}},
	} {
		got, err := ParseLimits(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseLimits(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "cpu=0", "cpu=-1", "cpu=x", "mem=1K", "mem=lots", "disk=1G", "1,2M,3", "cpu=NaN", "-,-"} {
		_, err := ParseLimits(bad)
		if err == nil {
			t.Errorf("ParseLimits(%q): no error", bad)
		} else if !strings.HasPrefix(err.Error(), "--load-constraints") || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseLimits(%q): error %q should be one line naming the flag", bad, err)
		}
	}
	if s := (Limits{CPU: 0.5, Memory: 256 << 20}).String(); s != "cpu=0.5,mem=256M" {
		t.Errorf("String = %q", s)
	}
}

// newTestCgroup creates a cgroup or skips the test saying why.
func newTestCgroup(t *testing.T, l Limits) *Cgroup {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("cgroup limits need root")
	}
	cg, err := NewCgroup(fmt.Sprintf("relaybench-test-%d-%d", os.Getpid(), time.Now().UnixNano()), l)
	if err != nil {
		t.Skipf("cgroups not available here: %v", err)
	}
	return cg
}

// startTree starts sh, which forks a child sleep: a process tree of two. It
// is killed (process group) at the end of the test.
func startTree(t *testing.T, script string) (*exec.Cmd, func() error) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	startGroup(t, cmd)
	release := func() error { _, err := stdin.Write([]byte("go\n")); return err }
	return cmd, release
}

func TestCgroupLimitsProcessTree(t *testing.T) {
	cg := newTestCgroup(t, Limits{CPU: 0.25, Memory: 64 << 20})
	defer func() {
		if err := cg.Remove(0); err != nil {
			t.Error(err)
		}
	}()
	// sh forks "sleep" before the move; it must be moved too.
	cmd, _ := startTree(t, "sleep 60 & read x; wait")
	deadline := time.Now().Add(10 * time.Second)
	for len(treeOf(allStats(), []int{cmd.Process.Pid}, nil)) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("sh did not fork its child within 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cg.AddTree(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	procs := cg.Procs()
	if len(procs) != 2 {
		t.Fatalf("cgroup holds %v, want sh and its sleep", procs)
	}
	for _, d := range cg.Dirs {
		for _, pid := range procs {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), "/"+filepath.Base(d)+"\n") {
				t.Errorf("process %d not in %s:\n%s", pid, d, b)
			}
		}
	}
	if cg.Version == 1 {
		if q := cgReadInt(filepath.Join(cg.cpuDir, "cpu.cfs_quota_us")); q != 25000 {
			t.Errorf("cfs quota %d, want 25000 (0.25 × 100 ms)", q)
		}
		if m := cgReadInt(filepath.Join(cg.memDir, "memory.limit_in_bytes")); m != 64<<20 {
			t.Errorf("memory limit %d, want %d", m, 64<<20)
		}
	} else {
		b, _ := os.ReadFile(filepath.Join(cg.cpuDir, "cpu.max"))
		if strings.TrimSpace(string(b)) != "25000 100000" {
			t.Errorf("cpu.max %q", b)
		}
	}
	// Removing a cgroup that still holds processes fails (and says so).
	if err := cg.Remove(0); err == nil {
		t.Error("Remove succeeded with processes inside")
	}
	killGroup(cmd.Process.Pid)
	if err := cg.Remove(10 * time.Second); err != nil {
		t.Fatalf("after the tree died: %v", err)
	}
	for _, d := range cg.Dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s still exists", d)
		}
	}
}

func TestCgroupDetectsOOMKill(t *testing.T) {
	cg := newTestCgroup(t, Limits{Memory: 16 << 20})
	defer cg.Remove(10 * time.Second)
	// tail buffers /dev/zero forever looking for a newline: it grows until
	// the limit kills it. It starts only once moved (the read).
	cmd, release := startTree(t, "read x; exec tail /dev/zero")
	if err := cg.AddTree(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := cg.Report()
		if r.OOMKills > 0 || (cg.Version == 1 && r.MemLimitHits > 0 && len(cg.Procs()) == 0) {
			if !strings.Contains(r.Summary(), "memory") {
				t.Errorf("summary %q does not mention memory", r.Summary())
			}
			if r.MemPeak < 8<<20 {
				t.Errorf("memory peak %d, want near the 16 MiB limit", r.MemPeak)
			}
			t.Logf("%s", r.Summary())
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no OOM kill seen within 20 s: %+v", r)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The kernel kills tail: the tree exits by SIGKILL.
	done := make(chan struct{})
	go func() {
		for len(cg.Procs()) > 0 {
			time.Sleep(10 * time.Millisecond)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("OOM-killed process still in the cgroup after 10 s")
	}
}
