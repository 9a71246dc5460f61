package wire

import (
	"errors"
	"fmt"
	"sync"

	"github.com/relaybench/relaybench/internal/safe"
	"github.com/relaybench/relaybench/nostr"
)

// NIP-77 (negentropy) frames. The client opens a reconciliation with
// ["NEG-OPEN",<sub id>,<filter>,<hex message>], answers each of the relay's
// ["NEG-MSG",<sub id>,<hex message>] with its own NEG-MSG until it has
// nothing more to say, and ends with ["NEG-CLOSE",<sub id>]. The relay may
// end a session with ["NEG-ERR",<sub id>,<reason>]. The protocol messages
// themselves are opaque here (see package negentropy).

// Frame kinds of NIP-77, outside the NIP-01 range of parse.go.
const (
	kindNegMsg frameKind = 100 + iota
	kindNegErr
)

var (
	errNegMsgShape = errors.New(`NEG-MSG frame is not ["NEG-MSG",<sub id>,<hex message>]`)
	errNegErrShape = errors.New(`NEG-ERR frame is not ["NEG-ERR",<sub id>,<reason>]`)
)

// parseNeg parses the rest of a NEG-MSG or NEG-ERR frame (also accepted
// as NEG-ERROR, the label go-nostr and so khatru v0.19.1 send) (label already
// read, p[i:] is what follows it): a = sub id, b = message or reason, obj =
// the whole frame (its length is the frame's size).
func parseNeg(p []byte, i int, f *frame, label string) (int, error) {
	shape := errNegMsgShape
	f.kind = kindNegMsg
	if label != "NEG-MSG" { // NEG-ERR, or NEG-ERROR as go-nostr (khatru) spells it
		shape, f.kind = errNegErrShape, kindNegErr
	}
	i, err := needString(p, i, &f.a, shape)
	if err != nil {
		return i, err
	}
	if i, err = needString(p, i, &f.b, shape); err != nil {
		return i, err
	}
	f.obj = p
	return i, nil
}

// NegHandler receives a negentropy session's messages. Callbacks run on the
// connection's reader goroutine and must not block.
type NegHandler struct {
	// OnMsg gets the relay's NEG-MSG: the hex message and the size in bytes
	// of the whole frame.
	OnMsg func(msg string, frameBytes int, recv int64)
	// OnErr gets the relay's NEG-ERR reason (made printable); the session
	// is over.
	OnErr func(reason string, class Class, recv int64)
}

// NegSession is an open NIP-77 reconciliation on one connection.
type NegSession struct {
	c     *Conn
	id    string
	h     NegHandler
	mu    sync.Mutex
	ended bool // NEG-ERR received or Close called
}

// negTable holds a connection's open negentropy sessions. It lives beside
// the connection (negTables) so that NIP-77 needs nothing in Conn itself;
// the entry goes when the connection stops.
type negTable struct {
	mu sync.Mutex
	m  map[string]*NegSession
}

var negTables sync.Map // *Conn → *negTable

func (c *Conn) negTable(create bool) *negTable {
	if t, ok := negTables.Load(c); ok {
		return t.(*negTable)
	}
	if !create {
		return nil
	}
	t, loaded := negTables.LoadOrStore(c, &negTable{m: map[string]*NegSession{}})
	if !loaded {
		go func() {
			<-c.done
			negTables.Delete(c)
		}()
	}
	return t.(*negTable)
}

// ID returns the session's subscription id.
func (s *NegSession) ID() string { return s.id }

// NegOpen opens reconciliation subID for the events matching filter with
// the client's first message (hex): it registers h, then writes
// ["NEG-OPEN",subID,filter,msg]. It returns the session and the size of the
// frame written. Session ids must be unique among the connection's open
// negentropy sessions.
func (c *Conn) NegOpen(subID string, filter nostr.Filter, msg string, h NegHandler) (*NegSession, int, error) {
	if subID == "" {
		return nil, 0, errors.New("NEG-OPEN: empty subscription id")
	}
	buf := append(make([]byte, 0, 64+len(msg)), `["NEG-OPEN",`...)
	buf = nostr.AppendJSONString(buf, subID)
	buf = append(buf, ',')
	buf = filter.AppendJSON(buf)
	buf = append(buf, ',')
	buf = nostr.AppendJSONString(buf, msg)
	buf = append(buf, ']')
	s := &NegSession{c: c, id: subID, h: h}
	t := c.negTable(true)
	t.mu.Lock()
	if _, dup := t.m[subID]; dup {
		t.mu.Unlock()
		return nil, 0, fmt.Errorf("%w: %q", ErrSubExists, subID)
	}
	t.m[subID] = s
	t.mu.Unlock()
	if err := c.writeMessage(buf); err != nil {
		s.forget()
		return nil, 0, err
	}
	return s, len(buf), nil
}

// Msg writes the client's next message, ["NEG-MSG",id,msg], and returns the
// size of the frame written.
func (s *NegSession) Msg(msg string) (int, error) {
	buf := append(make([]byte, 0, 32+len(s.id)+len(msg)), `["NEG-MSG",`...)
	buf = nostr.AppendJSONString(buf, s.id)
	buf = append(buf, ',')
	buf = nostr.AppendJSONString(buf, msg)
	buf = append(buf, ']')
	if err := s.c.writeMessage(buf); err != nil {
		return 0, err
	}
	return len(buf), nil
}

// Close forgets the session and sends ["NEG-CLOSE",id] unless the relay
// ended it with NEG-ERR or the connection is gone. Messages for it that
// arrive later are counted in Stats().Unknown.
func (s *NegSession) Close() error {
	s.mu.Lock()
	ended := s.ended
	s.ended = true
	s.mu.Unlock()
	s.forget()
	if ended {
		return nil
	}
	select {
	case <-s.c.done:
		return ErrClosed
	default:
	}
	buf := append(make([]byte, 0, 32+len(s.id)), `["NEG-CLOSE",`...)
	buf = nostr.AppendJSONString(buf, s.id)
	buf = append(buf, ']')
	return s.c.writeMessage(buf)
}

func (s *NegSession) forget() {
	if t := s.c.negTable(false); t != nil {
		t.mu.Lock()
		if t.m[s.id] == s {
			delete(t.m, s.id)
		}
		t.mu.Unlock()
	}
}

// dispatchNeg delivers a NEG-MSG or NEG-ERR to its session (reader
// goroutine); one for no open session is counted as unknown.
func (c *Conn) dispatchNeg(f *frame, recv int64) {
	var s *NegSession
	if t := c.negTable(false); t != nil {
		id := f.a.String()
		t.mu.Lock()
		s = t.m[id]
		if s != nil && f.kind == kindNegErr {
			delete(t.m, id)
		}
		t.mu.Unlock()
	}
	if s == nil {
		c.st.unknown.Add(1)
		return
	}
	switch f.kind {
	case kindNegMsg:
		if s.h.OnMsg != nil {
			s.h.OnMsg(f.b.String(), len(f.obj), recv)
		}
	case kindNegErr:
		s.mu.Lock()
		s.ended = true
		s.mu.Unlock()
		if s.h.OnErr != nil {
			reason := safe.Line(f.b.String())
			if f.label.String() != "NEG-ERR" {
				reason += " (sent as " + safe.Line(f.label.String()) + ", not NIP-77's NEG-ERR)"
			}
			s.h.OnErr(reason, Classify(reason), recv)
		}
	}
}
