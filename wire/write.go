package wire

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	mrand "math/rand/v2"
	"time"

	"github.com/coder/websocket"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/rawws"
)

// Writing.
//
// On a plain ws:// connection the client frames its messages itself and
// writes them straight to the TCP socket (coder/websocket still does the
// handshake, all reading and control frames; each of its writes and each of
// ours is one whole-buffer write, which the socket never interleaves).
//
// Frames are appended to a queue. When nothing else is in flight on the
// connection (an event waited for, a REQ), the sender writes the queue itself
// at once: one write syscall, no hand-off, Sent taken just before it. When
// other events are already waiting for their OKs (pipelining), the sender
// only queues and the connection's writer goroutine writes everything queued
// in one syscall, so many events share a write. A queue being written is
// never written by anyone else. On wss:// every message goes through
// coder/websocket's Write.

// maxQueued bounds the bytes waiting behind an in-progress write; senders
// block beyond it (back-pressure from a relay that reads slowly).
const maxQueued = 256 << 10

func newMaskRNG() *mrand.ChaCha8 {
	var seed [32]byte
	if _, err := rand.Read(seed[:]); err != nil {
		binary.LittleEndian.PutUint64(seed[:], uint64(time.Now().UnixNano()))
	}
	return mrand.NewChaCha8(seed)
}

// lockWriter takes the write lock, waiting while the queue is full. It
// fails once a write has failed.
func (c *Conn) lockWriter() error {
	c.wmu.Lock()
	for c.direct && c.flushing && len(c.wq) >= maxQueued && c.werr == nil && !c.wstop {
		c.wcond.Wait()
	}
	if c.werr != nil || c.wstop {
		c.wmu.Unlock()
		return ErrClosed
	}
	return nil
}

// queueLocked adds one text message prefix+body+suffix; c.wmu must be held.
func (c *Conn) queueLocked(prefix string, body []byte, suffix string) {
	n := len(prefix) + len(body) + len(suffix)
	if c.direct {
		c.wq = appendMaskedFrame(c.wq, uint32(c.rng.Uint64()), prefix, body, suffix)
	} else {
		c.wq = append(append(append(c.wq[:0], prefix...), body...), suffix...)
	}
	c.st.framesOut.Add(1)
	c.st.bytesOut.Add(int64(n))
}

// flushUnlock gets what is queued written and releases c.wmu: by nobody
// new if a write is already under way (it takes the queue next), by the
// writer goroutine if async, else by the caller now. A non-nil error means
// the connection is broken; the caller must fail it.
func (c *Conn) flushUnlock(async bool) error {
	if !c.direct {
		err := c.wsWrite(c.wq)
		c.wq = shrink(c.wq)
		c.wmu.Unlock()
		return err
	}
	if c.flushing {
		c.wmu.Unlock()
		return nil
	}
	c.flushing = true
	if async {
		c.wkick = true
		if !c.wstarted { // the writer goroutine starts on first use: idle subscribers never need one
			c.wstarted = true
			go c.writeLoop()
		}
		c.wkickCond.Signal()
		c.wmu.Unlock()
		return nil
	}
	err := c.drainLocked()
	c.wmu.Unlock()
	return err
}

// writeLoop is the writer goroutine of a direct connection.
func (c *Conn) writeLoop() {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for {
		for !c.wkick && !c.wstop {
			c.wkickCond.Wait()
		}
		if c.wstop {
			return
		}
		c.wkick = false
		if err := c.drainLocked(); err != nil {
			c.wmu.Unlock()
			c.fail(err)
			c.wmu.Lock()
			return
		}
	}
}

// drainLocked writes the queue until it is empty, releasing c.wmu during
// each write, then clears c.flushing. c.wmu is held on entry and return.
func (c *Conn) drainLocked() error {
	for len(c.wq) > 0 && c.werr == nil {
		buf := c.wq
		c.wq = c.wspare[:0]
		c.wmu.Unlock()
		err := c.netWrite(buf)
		c.wmu.Lock()
		c.wspare = shrink(buf)
		if err != nil {
			c.werr = err
		}
		c.wcond.Broadcast()
	}
	c.flushing = false
	return c.werr
}

// stopWriter wakes everything waiting on the writer once the conn failed.
func (c *Conn) stopWriter() {
	c.wmu.Lock()
	c.wstop = true
	c.wkickCond.Signal()
	c.wcond.Broadcast()
	c.wmu.Unlock()
}

func shrink(b []byte) []byte {
	if cap(b) > 1<<20 {
		return make([]byte, 0, 16<<10)
	}
	return b[:0]
}

// refreshDeadline sets the socket write deadline when a quarter of
// WriteTimeout has passed since it was last set. Only the single active
// writer calls it.
func (c *Conn) refreshDeadline() error {
	now := mono.Now()
	if t := int64(c.o.WriteTimeout); c.wdlSet == 0 || now-c.wdlSet > t/4 {
		if err := c.nc.SetWriteDeadline(time.Now().Add(c.o.WriteTimeout)); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		c.wdlSet = now
	}
	return nil
}

func (c *Conn) netWrite(buf []byte) error {
	if err := c.refreshDeadline(); err != nil {
		return err
	}
	c.st.writes.Add(1)
	if _, err := c.nc.Write(buf); err != nil {
		return c.writeError(err)
	}
	return nil
}

func (c *Conn) wsWrite(buf []byte) error {
	if err := c.refreshDeadline(); err != nil {
		return err
	}
	c.st.writes.Add(1)
	if err := c.ws.Write(context.Background(), websocket.MessageText, buf); err != nil {
		return c.writeError(err)
	}
	return nil
}

func (c *Conn) writeError(err error) error {
	if isTimeout(err) {
		return fmt.Errorf("write blocked longer than %v", c.o.WriteTimeout)
	}
	return fmt.Errorf("write: %w", rootCause(err))
}

// appendMaskedFrame appends one final, masked client text frame.
func appendMaskedFrame(b []byte, key uint32, prefix string, body []byte, suffix string) []byte {
	b = rawws.AppendTextHeader(b, len(prefix)+len(body)+len(suffix))
	b = binary.LittleEndian.AppendUint32(b, key)
	start := len(b)
	b = append(b, prefix...)
	b = append(b, body...)
	b = append(b, suffix...)
	maskBytes(b[start:], key)
	return b
}

// maskBytes XORs p with the little-endian 4-byte key, 8 bytes at a time.
func maskBytes(p []byte, key uint32) {
	k64 := uint64(key) | uint64(key)<<32
	i := 0
	for ; i+8 <= len(p); i += 8 {
		binary.LittleEndian.PutUint64(p[i:], binary.LittleEndian.Uint64(p[i:])^k64)
	}
	for ; i < len(p); i++ {
		p[i] ^= byte(key >> (8 * (i & 3)))
	}
}
