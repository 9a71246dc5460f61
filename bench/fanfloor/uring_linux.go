//go:build linux

package main

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// The io_uring mode: every socket has one IORING_OP_RECV in flight into
// its own buffer, re-armed when it completes; one locked thread submits
// the re-arms and waits for completions with one io_uring_enter per batch
// (no read(2) or epoll_wait per socket). The ring is single-issuer with
// deferred task work, so the kernel's receive work runs in this thread's
// io_uring_enter, batched.

const (
	sysIOUringSetup    = 425
	sysIOUringEnter    = 426
	sysIOUringRegister = 427
	registerPbufRing   = 22
	sqeBufferSelect    = 1 << 5
	recvMultishot      = 1 << 1
	cqeFBuffer         = 1
	cqeFMore           = 2

	setupCQSize       = 1 << 3
	setupSingleIssuer = 1 << 12
	setupDeferTaskrun = 1 << 13
	enterGetEvents    = 1
	opRecv            = 27
	offSQRing         = 0
	offCQRing         = 0x8000000
	offSQEs           = 0x10000000
	featSingleMmap    = 1
)

type sqringOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqringOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqringOffsets
	cqOff                                                                  cqringOffsets
}

type sqe struct {
	opcode   uint8
	flags    uint8
	ioprio   uint16
	fd       int32
	off      uint64
	addr     uint64
	len      uint32
	opFlags  uint32
	userData uint64
	bufIndex uint16
	pers     uint16
	spliceFd int32
	addr3    uint64
	pad2     uint64
}

type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

type ring struct {
	fd                     int
	sqHead, sqTail, sqMask *uint32
	sqArray                []uint32
	sqes                   []sqe
	cqHead, cqTail, cqMask *uint32
	cqes                   []cqe
	pending                uint32 // SQEs written, not yet submitted
}

func newRing(entries, cqEntries uint32) (*ring, error) {
	var p uringParams
	p.flags = setupCQSize | setupSingleIssuer | setupDeferTaskrun
	p.cqEntries = cqEntries
	fd, _, e := syscall.Syscall(sysIOUringSetup, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if e != 0 {
		return nil, e
	}
	r := &ring{fd: int(fd)}
	sqSize := int(p.sqOff.array + p.sqEntries*4)
	cqSize := int(p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(cqe{})))
	if p.features&featSingleMmap != 0 {
		sqSize = max(sqSize, cqSize)
		cqSize = sqSize
	}
	sq, err := syscall.Mmap(r.fd, offSQRing, sqSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		return nil, err
	}
	cq := sq
	if p.features&featSingleMmap == 0 {
		if cq, err = syscall.Mmap(r.fd, offCQRing, cqSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_POPULATE); err != nil {
			return nil, err
		}
	}
	se, err := syscall.Mmap(r.fd, offSQEs, int(p.sqEntries)*int(unsafe.Sizeof(sqe{})), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		return nil, err
	}
	u32 := func(b []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&b[off])) }
	r.sqHead, r.sqTail, r.sqMask = u32(sq, p.sqOff.head), u32(sq, p.sqOff.tail), u32(sq, p.sqOff.ringMask)
	r.sqArray = unsafe.Slice(u32(sq, p.sqOff.array), p.sqEntries)
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&se[0])), p.sqEntries)
	r.cqHead, r.cqTail, r.cqMask = u32(cq, p.cqOff.head), u32(cq, p.cqOff.tail), u32(cq, p.cqOff.ringMask)
	r.cqes = unsafe.Slice((*cqe)(unsafe.Pointer(&cq[p.cqOff.cqes])), p.cqEntries)
	return r, nil
}

// get returns the next free SQE, submitting what is queued when the
// submission ring is full.
func (r *ring) get() *sqe {
	for {
		tail := *r.sqTail
		if tail-atomic.LoadUint32(r.sqHead) < uint32(len(r.sqes)) {
			i := tail & *r.sqMask
			r.sqArray[i] = i
			s := &r.sqes[i]
			*s = sqe{}
			atomic.StoreUint32(r.sqTail, tail+1)
			r.pending++
			return s
		}
		r.enter(0)
	}
}

// enter submits the queued SQEs and waits for at least wait completions.
func (r *ring) enter(wait uint32) {
	flags := uintptr(0)
	if wait > 0 {
		flags = enterGetEvents
	}
	for {
		n, _, e := syscall.Syscall6(sysIOUringEnter, uintptr(r.fd), uintptr(r.pending), uintptr(wait), flags, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			panic(e)
		}
		r.pending -= uint32(n)
		return
	}
}

func (r *ring) recv(fd int, b []byte, tag uint64) {
	s := r.get()
	s.opcode = opRecv
	s.fd = int32(fd)
	s.addr = uint64(uintptr(unsafe.Pointer(&b[0])))
	s.len = uint32(len(b))
	s.userData = tag
}

// uringLoop reads every socket of fds from one locked thread through one
// ring: multi false, a receive per socket into its own buffer, re-armed as
// it completes; true, a multishot receive per socket, armed once, into
// buffers the kernel picks from a provided-buffer ring (each completion's
// bytes are copied to the socket's own buffer and the kernel's buffer given
// back).
func uringLoop(fds []int, multi bool, mark func(), count func(int64), reads *atomic.Int64) {
	runtime.LockOSThread()
	n := uint32(1)
	for n < uint32(len(fds)) {
		n <<= 1
	}
	r, err := newRing(min(n, 4096), 4*n)
	if err != nil {
		panic(err)
	}
	var br *bufRing
	if multi {
		if br, err = r.newBufRing(8192, 4096); err != nil {
			panic(err)
		}
	}
	fr := make([]frames, len(fds))
	bufs := make([][]byte, len(fds))
	arm := func(i int) {
		if multi {
			r.recvMulti(fds[i], uint64(i))
		} else {
			r.recv(fds[i], bufs[i][fr[i].have:], uint64(i))
		}
	}
	// took handles one completion of socket i: the EVENT messages it
	// completed
	took := func(i int, c cqe) int64 {
		var got int64
		switch {
		case c.res > 0 && multi && c.flags&cqeFBuffer != 0:
			bid := uint16(c.flags >> 16)
			m := copy(bufs[i][fr[i].have:], br.buf(bid, int(c.res)))
			br.put(bid)
			got = fr[i].feed(bufs[i], m)
		case c.res > 0 && !multi:
			got = fr[i].feed(bufs[i], int(c.res))
		}
		again := c.res > 0 || c.res == -int32(syscall.EAGAIN) || c.res == -int32(syscall.ENOBUFS) || c.res == -int32(syscall.EINTR)
		if again && (!multi || c.flags&cqeFMore == 0) {
			arm(i)
		}
		return got
	}
	for i := range fds {
		bufs[i] = make([]byte, 64<<10)
		arm(i)
	}
	var nreads int64
	for {
		r.enter(1)
		head, tail := *r.cqHead, atomic.LoadUint32(r.cqTail)
		if head != tail {
			mark()
		}
		var got int64
		for ; head != tail; head++ {
			c := r.cqes[head&*r.cqMask]
			nreads++
			got += took(int(c.userData), c)
		}
		atomic.StoreUint32(r.cqHead, head)
		if br != nil {
			br.publish()
		}
		reads.Store(nreads)
		if got > 0 {
			count(got)
		}
	}
}

type bufReg struct {
	ringAddr    uint64
	ringEntries uint32
	bgid        uint16
	flags       uint16
	resv        [3]uint64
}

type ringBuf struct {
	addr uint64
	len  uint32
	bid  uint16
	resv uint16
}

// bufRing is a ring of provided buffers (group 0): the kernel picks one
// for each receive of a multishot recv.
type bufRing struct {
	bufs  []ringBuf
	tail  *uint16
	mask  uint16
	mem   []byte
	size  int
	local uint16
}

func (r *ring) newBufRing(entries, size int) (*bufRing, error) {
	m, err := syscall.Mmap(-1, 0, entries*16, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE|syscall.MAP_POPULATE)
	if err != nil {
		return nil, err
	}
	mem, err := syscall.Mmap(-1, 0, entries*size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE|syscall.MAP_POPULATE)
	if err != nil {
		return nil, err
	}
	reg := bufReg{ringAddr: uint64(uintptr(unsafe.Pointer(&m[0]))), ringEntries: uint32(entries)}
	if _, _, e := syscall.Syscall6(sysIOUringRegister, uintptr(r.fd), registerPbufRing, uintptr(unsafe.Pointer(&reg)), 1, 0, 0); e != 0 {
		return nil, e
	}
	b := &bufRing{bufs: unsafe.Slice((*ringBuf)(unsafe.Pointer(&m[0])), entries), tail: (*uint16)(unsafe.Pointer(&m[14])),
		mask: uint16(entries - 1), mem: mem, size: size}
	for i := range entries {
		b.put(uint16(i))
	}
	b.publish()
	return b, nil
}

// put queues buffer bid for the kernel again; publish makes the queued
// ones visible.
func (b *bufRing) put(bid uint16) {
	e := &b.bufs[b.local&b.mask]
	e.addr = uint64(uintptr(unsafe.Pointer(&b.mem[int(bid)*b.size])))
	e.len = uint32(b.size)
	e.bid = bid
	b.local++
}

func (b *bufRing) publish() {
	// a release store of the 16-bit tail: the ring's first entry's resv
	// field; atomic on the aligned 32-bit word holding it
	w := (*uint32)(unsafe.Pointer(uintptr(unsafe.Pointer(b.tail)) - 2))
	for {
		old := atomic.LoadUint32(w)
		nw := old&0xffff | uint32(b.local)<<16
		if atomic.CompareAndSwapUint32(w, old, nw) {
			return
		}
	}
}

func (b *bufRing) buf(bid uint16, n int) []byte {
	return b.mem[int(bid)*b.size : int(bid)*b.size+n]
}

func (r *ring) recvMulti(fd int, tag uint64) {
	s := r.get()
	s.opcode = opRecv
	s.fd = int32(fd)
	s.flags = sqeBufferSelect
	s.ioprio = recvMultishot
	s.bufIndex = 0 // buffer group 0
	s.userData = tag
}
