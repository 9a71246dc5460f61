package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/coder/websocket"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/safe"
)

const reasonCacheMax = 64

// readLoop is the connection's single reader: it reads every message,
// parses it and dispatches it, until the connection stops.
func (c *Conn) readLoop() {
	reasons := make(map[string]string) // interned OK reasons, reader-only
	if c.fr != nil {
		c.readDirect(reasons) // plain ws:// (frames.go)
		return
	}
	buf := make([]byte, 0, 64<<10)
	var f frame
	for {
		typ, r, err := c.ws.Reader(context.Background())
		if err != nil {
			c.fail(readError(err))
			return
		}
		buf = buf[:0]
		for {
			if len(buf) == cap(buf) {
				buf = append(buf, 0)[:len(buf)]
			}
			n, err := r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if err == io.EOF {
				break
			}
			if err != nil {
				c.fail(readError(err))
				return
			}
		}
		recv := mono.Now()
		c.st.framesIn.Add(1)
		c.st.bytesIn.Add(int64(len(buf)))
		if typ != websocket.MessageText {
			c.malformed(buf, errBinary)
		} else if err := parseFrameKnown(buf, &f, c.known); err != nil {
			c.malformed(buf, err)
		} else {
			c.dispatch(&f, recv, reasons)
		}
		if cap(buf) > 1<<20 {
			buf = make([]byte, 0, 64<<10)
		}
	}
}

func readError(err error) error {
	var ce websocket.CloseError
	switch {
	case errors.As(err, &ce):
		if ce.Reason != "" {
			return fmt.Errorf("relay closed the connection (status %d: %s)", int(ce.Code), safe.Line(ce.Reason))
		}
		return fmt.Errorf("relay closed the connection (status %d)", int(ce.Code))
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("relay closed the connection without a close frame")
	case websocket.CloseStatus(err) == websocket.StatusMessageTooBig:
		return ErrMessageTooBig
	}
	return fmt.Errorf("read: %w", rootCause(err))
}

func (c *Conn) malformed(frame []byte, err error) {
	c.st.malformed.Add(1)
	if c.o.OnMalformed != nil {
		c.o.OnMalformed(frame, err)
	}
}

func (c *Conn) dispatch(f *frame, recv int64, reasons map[string]string) {
	switch f.kind {
	case kindOK:
		c.st.oks.Add(1)
		var reason string
		class := ClassNone
		if len(f.b.raw) > 0 {
			reason = internReason(reasons, f.b)
			class = Classify(reason)
		} else if !f.ok {
			class = ClassOther
		}
		c.mu.Lock()
		var p pending
		var found bool
		id := f.a.raw
		if f.a.esc {
			id = []byte(f.a.String())
		}
		p, found = c.pending[string(id)]
		hold, late := false, false
		if found {
			if !f.ok && class == ClassAuthRequired && p.raw != nil && !p.retried && !p.held {
				// Keep it pending (its timeout runs on) while an AUTH is tried.
				p.retried, p.held, hold = true, true, true
				c.pending[p.id] = p
			} else {
				delete(c.pending, p.id)
			}
		} else {
			late = c.expired.take(id)
		}
		c.mu.Unlock()
		if !found {
			c.st.unmatchedOK.Add(1)
			if late {
				c.st.lateOK.Add(1)
			} else {
				c.st.foreignOK.Add(1)
			}
			return
		}
		if hold {
			if c.holdForAuth(authWaiter{id: p.id, reason: reason, recv: recv}, eventAuthor(p.raw), p.sent) {
				return
			}
			c.giveUp(authWaiter{id: p.id, reason: reason, recv: recv})
			return
		}
		ok := OK{ID: p.id, Accepted: f.ok, Sent: p.sentAt(), Recv: recv, Reason: reason, Class: class}
		c.deliver(p, ok)
		if p.w != nil {
			// A Publish is waiting: let it write its next EVENT before this
			// reader's next read (which usually finds nothing yet and parks).
			runtime.Gosched()
		}
	case kindEvent:
		c.st.events.Add(1)
		s := c.sub(f.a)
		if s == nil {
			c.unknownSubEvent(f.a)
			return
		}
		switch {
		case f.known && s.h.Known != nil:
			s.h.Known.OnKnownEvent(f.obj, int(f.tag), recv)
		case s.h.OnEvent != nil:
			s.h.OnEvent(f.obj, recv)
		}
	case kindEOSE:
		c.st.eoses.Add(1)
		if s := c.sub(f.a); s != nil && s.h.OnEOSE != nil {
			s.h.OnEOSE(recv)
		}
	case kindClosed:
		c.st.closeds.Add(1)
		var reason string
		var class Class
		c.mu.Lock()
		s := c.subs[f.a.String()]
		hold := false
		if s != nil {
			if c.auth != nil && s.req != nil && !s.retried && !s.held {
				reason = safe.Line(f.b.String())
				class = Classify(reason)
			}
			if class == ClassAuthRequired {
				// Keep it open while an AUTH is tried; REQ again after.
				s.retried, s.held, hold = true, true, true
			} else {
				c.dropSub(s.id)
			}
		}
		c.mu.Unlock()
		if hold {
			w := authWaiter{sub: s, reason: reason, recv: recv}
			if !c.holdForAuth(w, "", 0) {
				c.giveUp(w)
			}
			return
		}
		if s != nil {
			s.closedByRelay.Store(true)
			if s.h.OnClosed != nil {
				reason := safe.Line(f.b.String())
				s.h.OnClosed(reason, Classify(reason), recv)
			}
		}
	case kindNotice:
		c.st.notices.Add(1)
		msg := safe.Line(f.a.String())
		c.mu.Lock()
		c.notices[c.nNotices%noticesKept] = msg
		c.nNotices++
		c.mu.Unlock()
		if c.o.OnNotice != nil {
			c.o.OnNotice(msg)
		}
	case kindAuth:
		c.st.authChallenges.Add(1)
		ch := f.a.String()
		c.mu.Lock()
		c.authChal = ch
		c.mu.Unlock()
		if c.auth != nil {
			c.onChallenge(ch)
		} else if c.o.AuthSigner != nil {
			// Sign and write off the reader goroutine: a write blocked on a
			// relay that waits for us to read would deadlock.
			go c.authenticate(ch)
		}
	case kindCount:
		c.st.counts.Add(1)
		c.countFrame(f, recv)
	case kindNegMsg, kindNegErr: // NIP-77, see neg.go
		c.dispatchNeg(f, recv)
	default:
		c.st.unknown.Add(1)
	}
}

func (c *Conn) sub(id jstr) *Sub {
	c.mu.Lock()
	var s *Sub
	switch {
	case id.esc:
		s = c.subs[id.String()]
	default:
		if s = c.lastSub.Load(); s != nil && s.id == string(id.raw) {
			break // most connections carry one subscription: no map lookup per event
		}
		s = c.subs[string(id.raw)]
		c.lastSub.Store(s)
	}
	c.mu.Unlock()
	return s
}

// unknownSubEvent counts an EVENT for a subscription not open here: after
// this connection closed it, or under an id it never opened.
func (c *Conn) unknownSubEvent(id jstr) {
	c.st.unknownSubEvents.Add(1)
	b := id.raw
	if id.esc {
		b = []byte(id.String())
	}
	c.mu.Lock()
	closed := c.closedSb.has(b)
	c.mu.Unlock()
	if closed {
		c.st.eventsAfterClose.Add(1)
	} else {
		c.st.unsolicitedEvents.Add(1)
	}
}

// dropSub forgets subscription id, remembering it was opened (c.mu held).
func (c *Conn) dropSub(id string) {
	delete(c.subs, id)
	c.closedSb.add(id)
	if s := c.lastSub.Load(); s != nil && s.id == id {
		c.lastSub.Store(nil)
	}
}

func internReason(cache map[string]string, s jstr) string {
	if !s.esc {
		if r, ok := cache[string(s.raw)]; ok {
			return r
		}
	}
	r := safe.Line(s.String()) // a relay's words are untrusted: printable before anyone shows them
	if !s.esc && len(cache) < reasonCacheMax && len(s.raw) <= 256 {
		cache[string(s.raw)] = r
	}
	return r
}

func (c *Conn) authenticate(challenge string) {
	raw, id, err := c.o.AuthSigner(challenge, c.url)
	if err != nil {
		c.st.authRejected.Add(1)
		return
	}
	err = c.send(`["AUTH",`, id, raw, func(ok OK) {
		if ok.Err == nil && ok.Accepted {
			c.st.authAccepted.Add(1)
			c.authOnce.Do(func() { close(c.authed) })
		} else {
			c.st.authRejected.Add(1)
		}
	}, nil)
	if err != nil {
		c.st.authRejected.Add(1)
	}
}
