package wire

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/relaybench/relaybench/internal/mono"
)

// Shared readers (Options.SharedReader): thousands of mostly idle
// subscriber connections read by a few readers, each with an epoll set of
// its own, instead of a goroutine each.
//
// A goroutine per connection costs, per delivered message, a netpoller
// wake-up, a goroutine switch and the read that finds the socket empty
// before the goroutine parks again. Measured with bench/fanfloor against
// strfry (2,000 subscriptions, every event to every one): 7.2 µs of client
// CPU per delivery for goroutines blocked in net.Conn.Read, 4.8–5.0 µs for
// sockets read from one epoll thread. So after the handshake a shared
// connection's socket leaves Go's netpoller altogether (a duplicate
// descriptor is kept and the original closed, which removes it from the
// runtime's epoll set) and joins the epoll set of one of the shared
// readers: edge-triggered, read until a read comes back short (the socket
// was then drained; anything arriving later raises a new edge; after a
// hang-up, read to the end), every
// complete message handled on that reader exactly as the goroutine reader
// handles it (handlers must not block: they run for many connections in
// turn). The reader is a goroutine; a few connections' epoll set waits in
// Go's netpoller (see loop). Writes (REQ, CLOSE, pongs, AUTH, EVENTs) go
// to the descriptor directly,
// waiting in poll(2) for room when the socket is full, within the write
// deadline. Closing shuts the socket down; the reader sees the
// hang-up, takes it out of its set and closes the descriptor, so a
// descriptor number is never reused while a reader could still touch it.

// readerThreads is how many readers serve shared connections:
// one per two cores (one was the fastest on 2 cores, where the relay
// needs the other).
// RELAYBENCH_READER_THREADS sets it (for measuring).
func readerThreads() int {
	if n, err := strconv.Atoi(os.Getenv("RELAYBENCH_READER_THREADS")); err == nil && n > 0 {
		return n
	}
	return max(1, runtime.GOMAXPROCS(0)/2)
}

type poller struct {
	id    int // its index among the readers
	ep    int
	mu    sync.Mutex
	conns []*Conn // by token (the epoll data); nil: free
	free  []int32
	ready []*Conn      // the reader's: the connections of one epoll_wait
	warm  int          // the reader's: the sum of what the warm passes read (kept, so that the reads stay)
	live  atomic.Int32 // connections in the set
	// blocking: the reader is out of the netpoller, in a blocking
	// epoll_wait on its own thread (set as it switches; for the tests)
	blocking atomic.Bool
}

// netpollMax: a reader whose set holds more connections than this waits
// in a blocking epoll_wait on a thread of its own instead of in Go's
// netpoller (see loop). With a few connections (publish: one per worker)
// each wake-up serves an OK or two and the reader is mostly idle; with
// thousands (fan-out) it is mostly busy, and a set in the netpoller woke
// the runtime's netpoll thread for every socket ready meanwhile: 2,000
// subscribers to strfry, 3,000,000 deliveries, 1.04 M epoll_pwait calls
// and 378,000 context switches against 434,000 and 242,000 blocked in
// epoll_wait (5.62 µs of client CPU per delivery against 4.59).
var netpollMax atomic.Int32 // 64; tests lower it

func init() { netpollMax.Store(64) }

func (p *poller) crowded() bool { return p.live.Load() > netpollMax.Load() }

var (
	pollersOnce sync.Once
	pollers     []*poller
	pollersErr  error
	pollNext    atomic.Uint32
)

// sharedPoller returns the reader a new shared connection joins (round
// robin), starting the readers on first use.
func sharedPoller() (*poller, error) {
	pollersOnce.Do(func() {
		for i := range readerThreads() {
			p, err := newPoller()
			if err != nil {
				pollersErr = err
				return
			}
			p.id = i
			pollers = append(pollers, p)
			go p.loop()
		}
	})
	if pollersErr != nil {
		return nil, pollersErr
	}
	return pollers[int(pollNext.Add(1))%len(pollers)], nil
}

// Reader is the index of the shared reader thread that reads c (from 0;
// see Options.SharedReader), or -1 when c has a reader of its own: the
// connections a caller's state is laid out by, so that what one reader
// writes is not in the cache lines another writes.
func (c *Conn) Reader() int {
	if rs, ok := c.nc.(*rawSock); ok && rs.p != nil {
		return rs.p.id
	}
	return -1
}

// add registers c (whose nc is a *rawSock) with the reader.
func (p *poller) add(c *Conn, rs *rawSock) error {
	p.mu.Lock()
	var tok int32
	if n := len(p.free); n > 0 {
		tok = p.free[n-1]
		p.free = p.free[:n-1]
	} else {
		tok = int32(len(p.conns))
		p.conns = append(p.conns, nil)
	}
	rs.tok, rs.p = tok, p // before the reader can see c
	p.conns[tok] = c
	p.mu.Unlock()
	p.live.Add(1)
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | unix.EPOLLET, Fd: tok}
	if err := syscall.EpollCtl(p.ep, syscall.EPOLL_CTL_ADD, rs.fd, &ev); err != nil {
		p.mu.Lock()
		p.conns[tok] = nil
		p.free = append(p.free, tok)
		p.mu.Unlock()
		p.live.Add(-1)
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// newPoller makes a reader's epoll set.
func newPoller() (*poller, error) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	return &poller{ep: ep}, nil
}

// loop is one reader. While its set holds at most netpollMax connections
// it is a goroutine that sleeps in Go's netpoller until the set has ready
// sockets (an epoll descriptor is readable while it holds ready ones),
// then takes every ready one with non-blocking epoll_waits and reads
// them. A reader blocked in epoll_wait as a system call kept Go's sysmon
// polling every 20 µs: in publish wait-for-OK runs (4 connections) 1.3
// context switches per OK against khatru and 2.3 against strfry, 0.86
// and 1.0 this way (bench/RESULTS.md, issue #26). With more connections
// (fan-out) the reader is busy most of the time, and the set in the
// netpoller would wake the runtime's netpoll thread for every socket
// that becomes ready meanwhile: then, and should the runtime refuse the
// descriptor, the reader blocks in epoll_wait on a thread of its own.
func (p *poller) loop() {
	evs := make([]syscall.EpollEvent, 256)
	var f frame
	netpoll := true
	for {
		if netpoll && !p.crowded() {
			netpoll = p.waitNetpoll(evs, &f)
			continue
		}
		runtime.LockOSThread()
		p.blocking.Store(true)
		for !netpoll || p.crowded() {
			p.wait(evs, &f, -1)
		}
		p.blocking.Store(false)
		runtime.UnlockOSThread()
	}
}

// waitNetpoll reads p's set, waiting in Go's netpoller, until the set
// holds more than netpollMax connections; false if the runtime cannot
// wait for it. The set is in the netpoller through a non-blocking
// duplicate of its descriptor, closed (which takes it out) on return.
func (p *poller) waitNetpoll(evs []syscall.EpollEvent, f *frame) bool {
	fd, err := unix.FcntlInt(uintptr(p.ep), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return false
	}
	if syscall.SetNonblock(fd, true) != nil { // epoll_wait(fd, …, -1) ignores it
		syscall.Close(fd)
		return false
	}
	file := os.NewFile(uintptr(fd), "epoll")
	defer file.Close()
	rc, err := file.SyscallConn()
	if err != nil {
		return false
	}
	return rc.Read(func(uintptr) bool {
		// a full batch may leave ready sockets behind, which raise no
		// new edge: take them before waiting
		for n := len(evs); n == len(evs) || n < 0; {
			n = p.wait(evs, f, 0)
		}
		return p.crowded() // false: wait in the netpoller
	}) == nil
}

// wait takes the ready sockets of p's set (waiting up to ms milliseconds;
// -1: until one is), reads each, and returns how many there were (-1:
// interrupted).
func (p *poller) wait(evs []syscall.EpollEvent, f *frame, ms int) int {
	var n int
	var err error
	if ms == 0 {
		n, err = rawEpollWait(p.ep, evs)
	} else {
		n, err = syscall.EpollWait(p.ep, evs, ms)
	}
	if err != nil {
		if err == syscall.EINTR {
			return -1
		}
		panic(os.NewSyscallError("epoll_wait", err)) // cannot happen with a valid epoll descriptor
	}
	ready := p.readyConns(evs[:n])
	for lo := 0; lo < n; lo += warmAhead {
		hi := min(n, lo+warmAhead)
		p.warmUp(ready[lo:hi])
		for i := lo; i < hi; i++ {
			if c := ready[i]; c != nil {
				c.pollRead(f, evs[i].Events&(syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0, ms == 0)
			}
		}
	}
	clear(ready)
	return n
}

// warmAhead is how many ready connections are warmed (warmUp) before
// they are read: enough for their cache misses to overlap, few enough
// that what was warmed is still in the cache when its turn comes
// (warming a whole batch of 256 lost: 2,000 subscribers to strfry, the
// reader's batches large, 1.08-1.10x the client CPU per delivery of no
// warming at all).
const warmAhead = 8

// warmUp reads what reading each of cs (nil: gone) will touch first,
// breadth first, so that each pass's loads are independent: the
// connections' first fields and frame readers (one allocation each),
// then their sockets and last subscriptions, then (KnownHandler.Warm) the
// handlers' state. With thousands of connections each is a cache miss;
// this way they overlap instead of stalling the reader one after another.
func (p *poller) warmUp(cs []*Conn) {
	for _, c := range cs {
		if c != nil {
			p.warm += c.warmSelf()
		}
	}
	for _, c := range cs {
		if c != nil {
			p.warm += c.warmNext()
		}
	}
	for _, c := range cs {
		if s := c.lastSubOf(); s != nil && s.h.Known != nil {
			p.warm += s.h.Known.Warm()
		}
	}
}

// readyConns returns the connections of evs (nil: gone), in order. Only
// the reader releases a connection (pollDone), and no token appears twice
// in one epoll_wait, so each stays valid until its turn.
func (p *poller) readyConns(evs []syscall.EpollEvent) []*Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ready = p.ready[:0]
	for _, ev := range evs {
		var c *Conn
		if int(ev.Fd) < len(p.conns) {
			c = p.conns[ev.Fd]
		}
		p.ready = append(p.ready, c)
	}
	return p.ready
}

// warmSelf and warmNext are warmUp's first two steps for c.
func (c *Conn) warmSelf() int {
	return c.fr.r + int(c.st.events.Load())
}

func (c *Conn) warmNext() int {
	v := 0
	if rs, ok := c.nc.(*rawSock); ok {
		v += rs.fd
	}
	if s := c.lastSub.Load(); s != nil && len(s.id) > 0 {
		v += int(s.id[0])
	}
	return v
}

// lastSubOf is c's last subscription (nil for none, or c nil).
func (c *Conn) lastSubOf() *Sub {
	if c == nil {
		return nil
	}
	return c.lastSub.Load()
}

// rawEpollWait, rawRead and rawWrite are epoll_wait with a zero timeout
// and read(2) and write(2) on a non-blocking socket: calls that never
// block, made without telling Go's scheduler. Told (syscall.Read and the
// like), the first system call after the process went idle wakes sysmon
// from its deep sleep (a futex wake-up), which then sleeps 20 µs at a
// time until the process idles again: 0.8 futex calls and 0.4
// nanosleeps per OK in a publish wait-for-OK run against khatru, with the
// reader already in the netpoller.
func rawEpollWait(ep int, evs []syscall.EpollEvent) (int, error) {
	n, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

func rawRead(fd int, b []byte) (int, error) { return rawIO(syscall.SYS_READ, fd, b) }

func rawWrite(fd int, b []byte) (int, error) { return rawIO(syscall.SYS_WRITE, fd, b) }

// rawIO is read(2) or write(2) (trap) of b on fd, made raw.
func rawIO(trap uintptr, fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, e := syscall.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

// pollRead reads and handles what has arrived on a shared connection, on
// its reader. hup: the relay closed its side or the socket failed,
// so reading goes on to the end (a short read is then no sign of more to
// come: the hang-up's edge was this one). Every message is timed at the
// return of the read that completed it: the reader's own work on the
// messages before it in the buffer is not the relay's latency. raw: read
// with rawRead (the reader waits in the netpoller; blocked in epoll_wait,
// sysmon is awake anyway).
func (c *Conn) pollRead(f *frame, hup, raw bool) {
	rs := c.nc.(*rawSock)
	fr := c.fr
	if c.reasons == nil {
		c.reasons = make(map[string]string)
	}
	recv := mono.Now()
	for {
		need := c.pollParse(rs, f, recv)
		if need < 0 {
			return
		}
		fr.room(need)
		if fr.unparsed.Load() != 0 { // a store is a fence: only when it changes
			fr.unparsed.Store(0)
		}
		space := len(fr.buf) - fr.w
		var m int
		var err error
		if raw {
			m, err = rawRead(rs.fd, fr.buf[fr.w:])
		} else {
			m, err = syscall.Read(rs.fd, fr.buf[fr.w:])
		}
		recv = mono.Now()
		fr.reads.Add(1)
		switch {
		case m > 0:
			fr.w += m
			if m < space && !hup {
				// drained: handle what came, then wait for the next edge
				c.pollParse(rs, f, recv)
				return
			}
		case err == syscall.EAGAIN:
			return
		case err == syscall.EINTR:
		case m == 0 && err == nil:
			c.pollDone(rs, readError(io.EOF))
			return
		default:
			c.pollDone(rs, readError(err))
			return
		}
	}
}

// pollParse handles every complete message buffered, received at recv, and
// returns the bytes the next one needs, or -1 when the connection failed.
func (c *Conn) pollParse(rs *rawSock, f *frame, recv int64) int {
	fr := c.fr
	for {
		typ, payload, need, err := fr.parse(c)
		if err != nil {
			c.pollDone(rs, readError(err))
			return -1
		}
		if need > 0 {
			return need
		}
		c.handle(typ, payload, recv, f, c.reasons)
	}
}

// pollDone ends a shared connection from its reader: the connection
// fails with why (nothing if it had already failed) and its descriptor
// leaves the epoll set and is closed.
func (c *Conn) pollDone(rs *rawSock, why error) {
	c.fail(why)
	rs.release()
}

// rawSock is a shared connection's socket once out of Go's netpoller: the
// writer writes to it directly; the reader owns reading and closing.
type rawSock struct {
	fd           int
	p            *poller
	tok          int32
	laddr, raddr net.Addr

	mu     sync.RWMutex // writers and Control hold it shared; release holds it to close
	closed bool         // the descriptor is closed
	shut   atomic.Bool  // Close was called
	wdl    atomic.Int64 // write deadline, Unix nanoseconds (0: none)
}

var errDetached = errors.New("read on a shared connection's socket")

// detach takes nc's socket out of Go's netpoller and returns it as a
// rawSock (nc is closed; the socket lives on in the duplicate).
func detach(nc net.Conn) (*rawSock, error) {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nil, errors.New("not a TCP connection")
	}
	sc, err := tc.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	var derr error
	if err := sc.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, os.NewSyscallError("dup", derr)
	}
	rs := &rawSock{fd: fd, laddr: nc.LocalAddr(), raddr: nc.RemoteAddr()}
	nc.Close()
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, os.NewSyscallError("setnonblock", err)
	}
	return rs, nil
}

// release takes the socket out of its reader's set and closes it (reader
// thread only, once the connection has failed).
func (rs *rawSock) release() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.closed {
		return
	}
	rs.closed = true
	_ = syscall.EpollCtl(rs.p.ep, syscall.EPOLL_CTL_DEL, rs.fd, nil)
	_ = syscall.Close(rs.fd)
	rs.p.mu.Lock()
	rs.p.conns[rs.tok] = nil
	rs.p.free = append(rs.p.free, rs.tok)
	rs.p.mu.Unlock()
	rs.p.live.Add(-1)
}

func (rs *rawSock) Read([]byte) (int, error) { return 0, errDetached }

// Write writes all of b, waiting for room within the write deadline.
func (rs *rawSock) Write(b []byte) (int, error) {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	if rs.closed || rs.shut.Load() {
		return 0, net.ErrClosed
	}
	n := 0
	for n < len(b) {
		m, err := rawWrite(rs.fd, b[n:])
		if m > 0 {
			n += m
			continue
		}
		switch err {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			wait := -1
			if dl := rs.wdl.Load(); dl != 0 {
				left := time.Until(time.Unix(0, dl))
				if left <= 0 {
					return n, os.ErrDeadlineExceeded
				}
				wait = int(left/time.Millisecond) + 1
			}
			pfd := []unix.PollFd{{Fd: int32(rs.fd), Events: unix.POLLOUT}}
			if _, err := unix.Poll(pfd, wait); err != nil && err != unix.EINTR {
				return n, os.NewSyscallError("poll", err)
			}
			continue
		case nil:
			return n, io.ErrShortWrite
		}
		return n, os.NewSyscallError("write", err)
	}
	return n, nil
}

// Close shuts the socket down: the reader sees the hang-up and
// releases the descriptor.
func (rs *rawSock) Close() error {
	if !rs.shut.CompareAndSwap(false, true) {
		return nil
	}
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	if !rs.closed {
		_ = syscall.Shutdown(rs.fd, syscall.SHUT_RDWR)
	}
	return nil
}

func (rs *rawSock) LocalAddr() net.Addr  { return rs.laddr }
func (rs *rawSock) RemoteAddr() net.Addr { return rs.raddr }

func (rs *rawSock) SetDeadline(t time.Time) error   { return rs.SetWriteDeadline(t) }
func (rs *rawSock) SetReadDeadline(time.Time) error { return nil }
func (rs *rawSock) SetWriteDeadline(t time.Time) error {
	if t.IsZero() {
		rs.wdl.Store(0)
	} else {
		rs.wdl.Store(t.UnixNano())
	}
	return nil
}

// SyscallConn gives Control access to the descriptor (kernelUnread).
func (rs *rawSock) SyscallConn() (syscall.RawConn, error) { return rawCtl{rs}, nil }

type rawCtl struct{ rs *rawSock }

func (r rawCtl) Control(f func(fd uintptr)) error {
	r.rs.mu.RLock()
	defer r.rs.mu.RUnlock()
	if r.rs.closed {
		return net.ErrClosed
	}
	f(uintptr(r.rs.fd))
	return nil
}

func (rawCtl) Read(func(fd uintptr) bool) error  { return errDetached }
func (rawCtl) Write(func(fd uintptr) bool) error { return errDetached }

// startShared moves a new plain ws:// connection to a shared reader;
// false (and the goroutine reader) when that is not possible.
func (c *Conn) startShared(under net.Conn) (bool, error) {
	p, err := sharedPoller()
	if err != nil {
		return false, err
	}
	rs, err := detach(under)
	if err != nil {
		return false, err
	}
	c.nc = rs
	if err := p.add(c, rs); err != nil {
		syscall.Close(rs.fd)
		return false, err
	}
	return true, nil
}

func (rs *rawSock) shutdown() { _ = rs.Close() }
