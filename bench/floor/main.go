// Command floor is the fastest wait-for-OK publisher this machine allows:
// one OS thread per connection, a blocking socket, one write per EVENT and
// blocking reads until the OK frame is complete, nothing else (no scheduler,
// no netpoller, no timers, no bookkeeping beyond checking the OK's id). It
// is not a benchmark client: it gives the physical limit relaybench's
// wait-for-OK path is compared with (bench/RESULTS.md).
//
//	go run ./bench/floor -addr 127.0.0.1:PORT -conns 4 -events 200000
//
// The events are unsigned ~1 KB shells with unique ids: use them only
// against the sink relay, which does not check signatures. With -dump FILE
// (NDJSON, one signed event a line, e.g. relaybench corpus --export) it
// sends those events instead, so it can run against any relay; an OK that
// is not true for its event's id then counts as wrong too.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/relaybench/relaybench/internal/rawws"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7777", "sink relay host:port")
	conns := flag.Int("conns", 4, "connections (one OS thread each)")
	events := flag.Int("events", 200000, "events in all")
	size := flag.Int("size", 1024, "content bytes per event")
	useEpoll := flag.Bool("epoll", false, "one thread, non-blocking sockets and epoll instead of a blocked thread per connection")
	dumpFile := flag.String("dump", "", "send the signed events of this NDJSON dump (one a line) instead of unsigned shells")
	flag.Parse()
	if *dumpFile != "" {
		if err := loadDump(*dumpFile, *events); err != nil {
			fmt.Fprintln(os.Stderr, "floor:", err)
			os.Exit(1)
		}
		*events = len(dump)
	}

	fds := make([]int, *conns)
	for i := range fds {
		fd, err := dial(*addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "floor:", err)
			os.Exit(1)
		}
		fds[i] = fd
	}
	content := strings.Repeat("x", *size)
	var next, bad atomic.Int64
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	start := time.Now()
	var wg sync.WaitGroup
	if *useEpoll {
		bad.Add(epollLoop(fds, *events, content))
		fds = nil
	}
	for _, fd := range fds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			frame := make([]byte, 0, *size+512)
			in := make([]byte, 4096)
			for {
				k := next.Add(1) - 1
				if k >= int64(*events) {
					return
				}
				id, msg := msgAt(int(k), content)
				frame = appendFrame(frame[:0], msg)
				if _, err := syscall.Write(fd, frame); err != nil {
					panic(err)
				}
				n := 0
				for { // read until one whole (small, unfragmented) text frame is in
					m, err := syscall.Read(fd, in[n:])
					if err != nil || m == 0 {
						panic(fmt.Sprint("read: ", err))
					}
					n += m
					if n >= 2 && n >= 2+int(in[1]&0x7f) && in[1]&0x7f < 126 {
						break
					}
				}
				if !okFor(in[2:n], id) {
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(syscall.TimevalToNsec(ru1.Utime) - syscall.TimevalToNsec(ru0.Utime) +
		syscall.TimevalToNsec(ru1.Stime) - syscall.TimevalToNsec(ru0.Stime))
	sys := time.Duration(syscall.TimevalToNsec(ru1.Stime) - syscall.TimevalToNsec(ru0.Stime))
	fmt.Printf("floor: %d conns, %d events in %.2fs: %.0f events/s, client CPU %.2f µs/event (%.2f in the kernel), %d OKs wrong (another id, or not true for a dump's event)\n",
		*conns, *events, el.Seconds(), float64(*events)/el.Seconds(),
		float64(cpu.Microseconds())/float64(*events), float64(sys.Microseconds())/float64(*events), bad.Load())
}

var keep []*os.File

// dial connects, upgrades to WebSocket and returns a blocking socket.
func dial(addr string) (int, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	c.(*net.TCPConn).SetNoDelay(true)
	br, err := rawws.Upgrade(c, addr)
	if err != nil {
		return 0, err
	}
	if br.Buffered() != 0 {
		return 0, fmt.Errorf("upgrade: %d bytes buffered", br.Buffered())
	}
	f, err := c.(*net.TCPConn).File() // a dup, left in blocking mode
	if err != nil {
		return 0, err
	}
	c.Close()
	keep = append(keep, f) // its finalizer would close the descriptor
	fd := int(f.Fd())
	if err := syscall.SetNonblock(fd, false); err != nil {
		return 0, err
	}
	return fd, nil
}

func appendFrame(b []byte, msg string) []byte {
	b = rawws.AppendTextHeader(b, len(msg))
	b = append(b, 0, 0, 0, 0) // zero mask key: the payload goes as is
	return append(b, msg...)
}

func eventMsg(id, content string) string {
	return `["EVENT",{"id":"` + id + `","pubkey":"` + strings.Repeat("0", 64) +
		`","created_at":1700000000,"kind":1,"tags":[],"content":"` + content +
		`","sig":"` + strings.Repeat("0", 128) + `"}]`
}

// epollLoop drives every connection from one locked thread: non-blocking
// sockets, one epoll_wait for whatever OKs are in, one read per ready
// socket, one write of its next EVENT. It returns the OKs with a wrong id.
func epollLoop(fds []int, events int, content string) int64 {
	runtime.LockOSThread()
	ep, err := syscall.EpollCreate1(0)
	if err != nil {
		panic(err)
	}
	ids := make([]string, len(fds))
	byFd := map[int]int{}
	next := 0
	frame := make([]byte, 0, len(content)+512)
	send := func(i int) {
		var msg string
		ids[i], msg = msgAt(next, content)
		next++
		frame = appendFrame(frame[:0], msg)
		if _, err := syscall.Write(fds[i], frame); err != nil {
			panic(err)
		}
	}
	inflight := 0
	for i, fd := range fds {
		syscall.SetNonblock(fd, true)
		byFd[fd] = i
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			panic(err)
		}
		if next < events {
			send(i)
			inflight++
		}
	}
	var bad int64
	evs := make([]syscall.EpollEvent, len(fds))
	in := make([]byte, 4096)
	have := make([]int, len(fds))
	bufs := make([][]byte, len(fds))
	for i := range bufs {
		bufs[i] = make([]byte, 4096)
	}
	_ = in
	for inflight > 0 {
		n, err := syscall.EpollWait(ep, evs, -1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			panic(err)
		}
		for _, ev := range evs[:n] {
			i := byFd[int(ev.Fd)]
			b := bufs[i]
			m, err := syscall.Read(fds[i], b[have[i]:])
			if err == syscall.EAGAIN {
				continue
			}
			if err != nil || m == 0 {
				panic(fmt.Sprint("read: ", err))
			}
			have[i] += m
			h := have[i]
			if h < 2 || h < 2+int(b[1]&0x7f) {
				continue
			}
			if !okFor(b[2:h], ids[i]) {
				bad++
			}
			have[i] = 0
			inflight--
			if next < events {
				send(i)
				inflight++
			}
		}
	}
	return bad
}

// dump holds the -dump events: id and message.
var dump []struct{ id, msg string }

// loadDump reads up to max events of an NDJSON dump.
func loadDump(path string, max int) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || len(dump) == max {
			continue
		}
		_, rest, ok := strings.Cut(line, `"id":"`)
		if !ok || len(rest) < 64 {
			return fmt.Errorf("%s: line %d has no id", path, len(dump)+1)
		}
		dump = append(dump, struct{ id, msg string }{rest[:64], `["EVENT",` + line + `]`})
	}
	if len(dump) == 0 {
		return fmt.Errorf("%s: no events", path)
	}
	return nil
}

// msgAt is the k-th event's id and EVENT message.
func msgAt(k int, content string) (string, string) {
	if dump != nil {
		return dump[k].id, dump[k].msg
	}
	id := fmt.Sprintf("%064x", k)
	return id, eventMsg(id, content)
}

// okFor reports whether the OK frame payload answers id, and with true
// when the events are a dump's (shells are answered by the sink only).
func okFor(payload []byte, id string) bool {
	s := string(payload)
	if !strings.Contains(s, id) {
		return false
	}
	return dump == nil || strings.Contains(s, `",true,`) || strings.Contains(s, `", true,`)
}
