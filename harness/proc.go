package harness

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// groupAttr puts a child in its own process group, so that it and everything
// it spawns can be signalled at once.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to process group pgid.
func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return syscall.EINVAL
	}
	return syscall.Kill(-pgid, sig)
}

// killGroup SIGKILLs process group pgid.
func killGroup(pgid int) { _ = signalGroup(pgid, syscall.SIGKILL) }

// procStat is what relaybench reads from /proc/PID/stat.
type procStat struct {
	pid, ppid, pgrp int
	state           byte
	cpuTicks        int64 // utime+stime+cutime+cstime
	rssPages        int64
	start           int64 // starttime, clock ticks after boot: with pid, names one process
}

// readStat parses /proc/PID/stat. The command name may contain spaces and
// parentheses: fields are counted from the last ')'.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	return parseStat(pid, b)
}

func parseStat(pid int, b []byte) (procStat, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procStat{}, false
	}
	f := strings.Fields(string(b[i+2:]))
	// f[0] is field 3 (state); field n is f[n-3].
	if len(f) < 22 {
		return procStat{}, false
	}
	n := func(field int) int64 {
		v, _ := strconv.ParseInt(f[field-3], 10, 64)
		return v
	}
	return procStat{
		pid:      pid,
		state:    f[0][0],
		ppid:     int(n(4)),
		pgrp:     int(n(5)),
		cpuTicks: n(14) + n(15) + n(16) + n(17),
		rssPages: n(24),
		start:    n(22),
	}, true
}

// allStats reads /proc/*/stat of every process.
func allStats() []procStat {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	out := make([]procStat, 0, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok {
			out = append(out, st)
		}
	}
	return out
}

// groupLive returns the pids of live (non-zombie) processes in group pgid.
func groupLive(pgid int) []int {
	var pids []int
	for _, st := range allStats() {
		if st.pgrp == pgid && st.state != 'Z' && st.state != 'X' {
			pids = append(pids, st.pid)
		}
	}
	return pids
}

// treeOf selects the processes that descend from roots (roots included) or
// belong to one of the process groups pgids (which catches orphans).
func treeOf(stats []procStat, roots []int, pgids []int) []procStat {
	children := map[int][]int{}
	byPid := make(map[int]procStat, len(stats))
	for _, st := range stats {
		children[st.ppid] = append(children[st.ppid], st.pid)
		byPid[st.pid] = st
	}
	in := map[int]bool{}
	var walk func(int)
	walk = func(pid int) {
		if in[pid] {
			return
		}
		if _, ok := byPid[pid]; !ok {
			return
		}
		in[pid] = true
		for _, c := range children[pid] {
			walk(c)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	for _, st := range stats {
		for _, g := range pgids {
			if g > 1 && st.pgrp == g {
				in[st.pid] = true
			}
		}
	}
	out := make([]procStat, 0, len(in))
	for pid := range in {
		out = append(out, byPid[pid])
	}
	return out
}

var (
	pageSize = int64(os.Getpagesize())
	clkTck   = clockTicks()
)

// clockTicks reads AT_CLKTCK from the auxiliary vector (USER_HZ, the unit
// of /proc/PID/stat times); 100 when it cannot be read.
func clockTicks() int64 {
	b, err := os.ReadFile("/proc/self/auxv")
	if err == nil {
		for i := 0; i+16 <= len(b); i += 16 {
			key := binary.NativeEndian.Uint64(b[i:])
			val := binary.NativeEndian.Uint64(b[i+8:])
			if key == 17 && val > 0 { // AT_CLKTCK
				return int64(val)
			}
			if key == 0 {
				break
			}
		}
	}
	return 100
}

// ownerStamp names this process in a run or build directory's owner file:
// "PID STARTTIME", so that a pid reused by another process after this one
// died does not keep the directory alive.
func ownerStamp() string {
	pid := os.Getpid()
	st, _ := readStat(pid)
	return strconv.Itoa(pid) + " " + strconv.FormatInt(st.start, 10)
}

// ownerGone reports whether the process an owner file names (ownerStamp;
// a bare PID from older builds) is gone. This process is never gone; a
// file it cannot read names no one it may remove.
func ownerGone(stamp string) bool {
	f := strings.Fields(stamp)
	if len(f) == 0 {
		return false
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 || pid == os.Getpid() {
		return false
	}
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	if len(f) < 2 {
		return false
	}
	start, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || start == 0 {
		return false
	}
	st, ok := readStat(pid)
	return ok && st.start != start // the pid now names another process
}
