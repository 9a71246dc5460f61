package harness

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The port a relay is started on is picked free (freePort) and then bound by
// the relay itself, later: in between, another process can take it (another
// relay started at the same moment, given the same port by the kernel). A
// WebSocket upgrade on the port then proves nothing: it may be the other
// process that answers, and every figure and check after it would be that
// process's under this relay's name. So readiness also asks the kernel who
// holds the listening socket.

// listenerOwned reports whether the TCP socket listening on port (any
// address, IPv4 or IPv6) is held by a process of process group pgid. known
// is false when /proc cannot say (no such socket listed, /proc unreadable):
// then nothing is claimed either way.
func listenerOwned(port, pgid int) (owned, known bool) {
	inodes := listeningInodes(port)
	if len(inodes) == 0 {
		return false, false
	}
	for _, pid := range groupLive(pgid) {
		if holdsSocket(pid, inodes) {
			return true, true
		}
	}
	return false, true
}

// listeningInodes is the socket inodes of /proc/net/tcp and tcp6 in state
// LISTEN on port.
func listeningInodes(port int) map[string]bool {
	out := map[string]bool{}
	want := fmt.Sprintf(":%04X", port)
	for _, name := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fs := strings.Fields(sc.Text())
			if len(fs) < 10 || fs[3] != "0A" || !strings.HasSuffix(fs[1], want) {
				continue
			}
			out[fs[9]] = true
		}
		f.Close()
	}
	return out
}

// holdsSocket reports whether process pid has one of the socket inodes
// open.
func holdsSocket(pid int, inodes map[string]bool) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		l, err := os.Readlink(dir + "/" + e.Name())
		if err == nil && strings.HasPrefix(l, "socket:[") && inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] {
			return true
		}
	}
	return false
}
