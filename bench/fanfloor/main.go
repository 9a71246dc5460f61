// Command fanfloor is the cheapest live-delivery receiver this machine
// allows: N WebSocket subscriptions, each one REQ for every new event
// (limit 0), and after EOSE nothing but reading frames and counting the
// EVENT messages of each subscription (no parsing beyond the frame header
// and the message's first bytes, no verification, no timing). It gives the
// physical limit relaybench's fan-out receiver is compared with
// (bench/fanout.sh, bench/RESULTS.md).
//
//	go run ./bench/fanfloor -addr 127.0.0.1:PORT -subs 2000 -expect 6000000 -mode epoll
//
// Then publish (from another process) the events; it prints the client CPU
// per delivery over the window from the first delivery to the last.
//
// Modes: epoll (sockets taken out of Go's netpoller, one or more locked
// threads each with its own epoll set, edge-triggered, a short read taken to
// mean the socket is drained), uring and uringmulti (the sockets read
// through one io_uring on one locked thread: a receive per socket re-armed
// as it completes, or a multishot receive into provided buffers) and
// goroutines (a goroutine per connection blocked in net.Conn.Read, as a
// plain Go client does).
package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/relaybench/relaybench/internal/rawws"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7777", "relay host:port")
	subs := flag.Int("subs", 2000, "subscriptions (one connection each)")
	expect := flag.Int64("expect", 0, "deliveries to wait for (0: until -timeout)")
	mode := flag.String("mode", "epoll", "epoll, uring, uringmulti or goroutines")
	threads := flag.Int("threads", 1, "epoll threads (mode epoll)")
	idle := flag.Duration("idle", 3*time.Second, "stop once no delivery came for this long")
	timeout := flag.Duration("timeout", 120*time.Second, "give up after")
	flag.Parse()

	conns := make([]net.Conn, *subs)
	for i := range conns {
		c, rest, err := dial(*addr, fmt.Sprintf("s%d", i))
		if err != nil {
			fmt.Fprintln(os.Stderr, "fanfloor:", err)
			os.Exit(1)
		}
		if len(rest) > 0 {
			fmt.Fprintf(os.Stderr, "fanfloor: %d bytes after EOSE on subscription %d\n", len(rest), i)
			os.Exit(1)
		}
		conns[i] = c
	}
	fmt.Println("ready")
	var got atomic.Int64
	var first atomic.Int64
	var ru0 syscall.Rusage
	var once sync.Once
	mark := func() {
		once.Do(func() {
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			first.Store(time.Now().UnixNano())
		})
	}
	var reads atomic.Int64
	done := make(chan struct{})
	var closeOnce sync.Once
	count := func(n int64) {
		if got.Add(n) >= *expect && *expect > 0 {
			closeOnce.Do(func() { close(done) })
		}
	}
	switch *mode {
	case "epoll":
		fds := make([]int, len(conns))
		for i, c := range conns {
			fds[i] = detach(c)
		}
		per := (len(fds) + *threads - 1) / *threads
		for t := 0; t < *threads; t++ {
			lo, hi := t*per, min(len(fds), (t+1)*per)
			go epollLoop(fds[lo:hi], mark, count, &reads)
		}
	case "uring", "uringmulti":
		fds := make([]int, len(conns))
		for i, c := range conns {
			fds[i] = detach(c)
		}
		go uringLoop(fds, *mode == "uringmulti", mark, count, &reads)
	case "goroutines":
		for _, c := range conns {
			go func() {
				buf := make([]byte, 64<<10)
				var fr frames
				for {
					n, err := c.Read(buf[fr.have:])
					if err != nil {
						return
					}
					reads.Add(1)
					mark()
					count(fr.feed(buf, n))
				}
			}()
		}
	default:
		fmt.Fprintln(os.Stderr, "fanfloor: -mode epoll, uring, uringmulti or goroutines")
		os.Exit(2)
	}
	// stop at -expect deliveries, or once deliveries have stopped for -idle
	deadline := time.Now().Add(*timeout)
	last, lastAt := int64(0), time.Now()
wait:
	for time.Now().Before(deadline) {
		select {
		case <-done:
			break wait
		case <-time.After(100 * time.Millisecond):
		}
		if g := got.Load(); g != last {
			last, lastAt = g, time.Now()
		} else if g > 0 && time.Since(lastAt) > *idle {
			break
		}
	}
	var ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	el := time.Duration(lastAt.UnixNano() - first.Load())
	if *expect > 0 && got.Load() >= *expect {
		el = time.Duration(time.Now().UnixNano() - first.Load())
	}
	user := syscall.TimevalToNsec(ru1.Utime) - syscall.TimevalToNsec(ru0.Utime)
	sys := syscall.TimevalToNsec(ru1.Stime) - syscall.TimevalToNsec(ru0.Stime)
	d := got.Load()
	if d == 0 {
		fmt.Println("fanfloor: no deliveries")
		os.Exit(1)
	}
	fmt.Printf("fanfloor %s: %d subscriptions, %d deliveries in %.2fs (%.0f/s), client CPU %.2f µs/delivery (%.2f user, %.2f kernel), %.2f reads/delivery\n",
		*mode, *subs, d, el.Seconds(), float64(d)/el.Seconds(), float64(user+sys)/1e3/float64(d),
		float64(user)/1e3/float64(d), float64(sys)/1e3/float64(d), float64(reads.Load())/float64(d))
	if *expect > 0 && d < *expect {
		os.Exit(1)
	}
}

// frames counts the complete EVENT messages in a read buffer, keeping a
// partial frame for the next read.
type frames struct{ have int }

// feed takes n new bytes at buf[have:] and returns the EVENT messages
// completed; a partial frame is moved to the front.
func (f *frames) feed(buf []byte, n int) int64 {
	end := f.have + n
	p, events := 0, int64(0)
	for {
		if end-p < 2 {
			break
		}
		l, h := int(buf[p+1]&0x7f), 2
		switch l {
		case 126:
			if end-p < 4 {
				goto partial
			}
			l, h = int(binary.BigEndian.Uint16(buf[p+2:])), 4
		case 127:
			if end-p < 10 {
				goto partial
			}
			l, h = int(binary.BigEndian.Uint64(buf[p+2:])), 10
		}
		if end-p < h+l {
			break
		}
		if bytes.HasPrefix(buf[p+h:p+h+l], []byte(`["EVENT"`)) {
			events++
		}
		p += h + l
	}
partial:
	f.have = copy(buf, buf[p:end])
	if f.have == len(buf) {
		panic("frame larger than the read buffer")
	}
	return events
}

// epollLoop reads every socket of fds from one locked thread.
func epollLoop(fds []int, mark func(), count func(int64), reads *atomic.Int64) {
	runtime.LockOSThread()
	ep, err := syscall.EpollCreate1(0)
	if err != nil {
		panic(err)
	}
	fr := make([]frames, len(fds))
	bufs := make([][]byte, len(fds))
	for i, fd := range fds {
		bufs[i] = make([]byte, 64<<10)
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | (1 << 31), Fd: int32(i)} // EPOLLET
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			panic(err)
		}
	}
	evs := make([]syscall.EpollEvent, 256)
	var nreads int64
	for {
		n, err := syscall.EpollWait(ep, evs, -1)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			panic(err)
		}
		if n > 0 {
			mark()
		}
		var got int64
		for _, ev := range evs[:n] {
			i := int(ev.Fd)
			for {
				b := bufs[i]
				m, err := syscall.Read(fds[i], b[fr[i].have:])
				nreads++
				if err == syscall.EAGAIN || m <= 0 {
					break
				}
				got += fr[i].feed(b, m)
				if fr[i].have+m < len(b) { // a short read: drained (edge-triggered)
					break
				}
			}
		}
		reads.Store(nreads)
		if got > 0 {
			count(got)
		}
	}
}

// detach takes a connection's socket out of Go's netpoller: a duplicate
// descriptor (non-blocking, like the original) and the original closed.
func detach(c net.Conn) int {
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		panic(err)
	}
	fd := -1
	rc.Control(func(s uintptr) { fd, err = syscall.Dup(int(s)) })
	if err != nil {
		panic(err)
	}
	c.Close()
	return fd
}

// dial connects, upgrades to WebSocket, subscribes to every new event and
// waits for EOSE.
func dial(addr, sub string) (net.Conn, []byte, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	br, err := rawws.Upgrade(c, addr)
	if err != nil {
		return nil, nil, err
	}
	msg := `["REQ","` + sub + `",{"limit":0}]`
	frame := append(rawws.AppendTextHeader(nil, len(msg)), 0, 0, 0, 0) // zero mask key
	if _, err := c.Write(append(frame, msg...)); err != nil {
		return nil, nil, err
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	// read frames until EOSE
	for {
		var h [2]byte
		if _, err := io.ReadFull(br, h[:]); err != nil {
			return nil, nil, fmt.Errorf("waiting for EOSE: %w", err)
		}
		l := int(h[1] & 0x7f)
		if l == 126 {
			var x [2]byte
			io.ReadFull(br, x[:])
			l = int(binary.BigEndian.Uint16(x[:]))
		} else if l == 127 {
			var x [8]byte
			io.ReadFull(br, x[:])
			l = int(binary.BigEndian.Uint64(x[:]))
		}
		p := make([]byte, l)
		if _, err := io.ReadFull(br, p); err != nil {
			return nil, nil, err
		}
		if bytes.HasPrefix(p, []byte(`["EOSE"`)) {
			break
		}
	}
	c.SetReadDeadline(time.Time{})
	rest, _ := br.Peek(br.Buffered())
	return c, rest, nil
}
