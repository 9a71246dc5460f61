//go:build linux

package schedule

import "syscall"

const prSetTimerslack = 29 // PR_SET_TIMERSLACK

// nanosleep blocks the calling thread for ns nanoseconds. It first sets the
// thread's timer slack to 1 ns (default 50 µs; a cheap raw system call, and
// the dispatcher may be on a different thread each time), so the sleep ends
// within ~20 µs of its deadline, where runtime timers end up to ~1 ms late.
func nanosleep(ns int64) {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerslack, 1, 0)
	ts := syscall.NsecToTimespec(ns)
	_ = syscall.Nanosleep(&ts, nil)
}
