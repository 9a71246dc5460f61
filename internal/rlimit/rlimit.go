// Package rlimit raises the process's open-file limit for runs that hold
// many connections, and says in one line when it is still too low.
package rlimit

import (
	"fmt"
	"syscall"

	"github.com/relaybench/relaybench/internal/numfmt"
)

// Slack is the descriptors kept free for everything that is not a
// connection: the results file, relay logs, the relay's pipes, NIP-11, DNS.
const Slack = 64

// Files returns the open-file limit (soft, hard), after raising the soft
// limit to the hard one. A limit that cannot be read is reported as 0, 0.
func Files() (soft, hard uint64) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, 0
	}
	if l.Cur < l.Max {
		raised := l
		raised.Cur = l.Max
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised) == nil {
			l = raised
		}
	}
	return l.Cur, l.Max
}

// Need raises the open-file limit (see Files) and returns a one-line error
// when it still leaves fewer than conns+Slack descriptors. An unknown limit
// is not an error.
// With the privilege to (root), a hard limit that is too low is raised too.
func Need(conns int) error {
	soft, hard := Files()
	if want := uint64(conns) + Slack; soft != 0 && soft < want {
		l := syscall.Rlimit{Cur: want, Max: max(hard, want)}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l) == nil {
			soft, hard = l.Cur, l.Max
		}
	}
	return check(conns, soft, hard)
}

func check(conns int, soft, hard uint64) error {
	if soft == 0 || uint64(conns)+Slack <= soft {
		return nil
	}
	g := func(n uint64) string { return numfmt.Group(int64(min(n, 1<<62))) } // counts grouped; the ulimit command's number as typed
	return fmt.Errorf("%s connections need about %s open files, but the open-file limit is %s (hard limit %s, already raised to it): raise it with `ulimit -n %d` (as root, or in /etc/security/limits.conf) or ask for fewer connections",
		g(uint64(conns)), g(uint64(conns)+Slack), g(soft), g(hard), conns+Slack)
}
