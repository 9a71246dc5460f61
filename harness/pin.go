package harness

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ParseCPUs parses a CPU list like "1", "0-1" or "0,2-3" (the taskset -c
// syntax) into a set, checking that each CPU exists on this machine.
func ParseCPUs(list string) (unix.CPUSet, error) {
	var set unix.CPUSet
	n := runtime.NumCPU()
	for _, part := range strings.Split(list, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a {
			return set, fmt.Errorf("bad CPU list %q: want e.g. 1, 0-1 or 0,2-3", list)
		}
		for c := a; c <= b; c++ {
			if c >= 1024 {
				return set, fmt.Errorf("bad CPU list %q: CPU %d out of range", list, c)
			}
			set.Set(c)
		}
	}
	var avail unix.CPUSet
	if err := unix.SchedGetaffinity(0, &avail); err == nil {
		for c := 0; c < 1024; c++ {
			if set.IsSet(c) && !avail.IsSet(c) {
				return set, fmt.Errorf("bad CPU list %q: CPU %d is not available (this process may use %d CPUs)", list, c, n)
			}
		}
	}
	return set, nil
}

// PinSelf pins every thread of this process to cpus with sched_setaffinity.
// Threads created later inherit the mask of the thread that creates them, so
// the whole process stays pinned. Call it early, before load starts. Limits:
// runtime.GOMAXPROCS is not changed (set it to the number of CPUs given if
// you want the Go scheduler to match), and a thread created concurrently with
// the call could keep the old mask, which is why it should run before
// goroutine-heavy work.
func PinSelf(cpus string) error {
	set, err := ParseCPUs(cpus)
	if err != nil {
		return err
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("pin to CPUs %s: %w", cpus, err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
			return fmt.Errorf("pin to CPUs %s: thread %d: %w", cpus, tid, err)
		}
	}
	return nil
}
