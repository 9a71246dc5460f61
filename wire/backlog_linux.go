package wire

import (
	"syscall"
	"unsafe"
)

// siocinq is SIOCINQ (= FIONREAD) on Linux: bytes in a socket's receive queue.
const siocinq = 0x541b

// Unread returns how many bytes the relay has sent that the client has not
// handled yet: waiting in the connection's kernel receive queue (SIOCINQ)
// plus read into the reader's buffer and not yet parsed; -1 when that
// cannot be known (closed, not TCP). A reader that keeps up has 0 most of
// the time.
func (c *Conn) Unread() int {
	n := c.kernelUnread()
	if n >= 0 && c.fr != nil {
		n += int(c.fr.unparsed.Load())
	}
	return n
}

func (c *Conn) kernelUnread() int {
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return -1
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	n := -1
	if err := rc.Control(func(fd uintptr) {
		var v int32
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, siocinq, uintptr(unsafe.Pointer(&v))); e == 0 {
			n = int(v)
		}
	}); err != nil {
		return -1
	}
	return n
}
