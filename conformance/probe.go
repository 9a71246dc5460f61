package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"

	"github.com/relaybench/relaybench/nostr"
)

// Bounds on what a relay can make a check hold.
const (
	readLimit     = 1 << 20  // the largest frame accepted
	framesQueued  = 4096     // frames read but not yet looked at
	bytesQueued   = 16 << 20 // bytes of those frames
	evidenceFrame = 400      // bytes of one frame kept as evidence
	evidenceBytes = 6 << 10  // bytes of evidence kept per check
)

// errSwamped: the relay sent more frames than a check looks at.
var errSwamped = errors.New("the relay sent more frames than the check reads")

// frame is one message from the relay.
type frame struct {
	label string
	parts []json.RawMessage // the array's elements after the label
	size  int64             // bytes of the frame
}

// str is element i of the frame decoded as a string ("" if not one).
func (f frame) str(i int) string {
	var s string
	if i < len(f.parts) {
		_ = json.Unmarshal(f.parts[i], &s)
	}
	return s
}

// probe is one WebSocket connection of a check. wire.Conn is not used
// here on purpose: it refuses a second REQ under an open subscription id,
// cannot send a malformed REQ, routes events by subscription id (so the
// events of a replaced subscription cannot be told from the new one's) and
// does not keep the frames a check needs as evidence. A probe reads every
// frame in order and keeps each one sent and received in the check's log.
type probe struct {
	ws     *websocket.Conn
	auth   *authState // NIP-42 (nil: challenges are not answered)
	back   []frame    // frames to give the check before the queue's
	log    *evidence
	frames chan frame
	queued atomic.Int64 // bytes in frames
	done   chan struct{}
	err    error // why reading stopped (set before done closes)
}

func dial(ctx context.Context, url string, log *evidence, o Options) (*probe, error) {
	dctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	ws, _, err := websocket.Dial(dctx, url, nil)
	if err != nil {
		return nil, &dialError{err}
	}
	ws.SetReadLimit(readLimit)
	p := &probe{ws: ws, log: log, frames: make(chan frame, framesQueued), done: make(chan struct{})}
	if o.Auth != nil {
		p.auth = &authState{sign: o.Auth, eager: o.AuthAlways, url: url, ops: map[string]*authOp{}}
	}
	go p.read()
	return p, nil
}

func (p *probe) read() {
	defer close(p.done)
	for {
		_, b, err := p.ws.Read(context.Background())
		if err != nil {
			p.err = err
			return
		}
		p.log.add("< ", b)
		var arr []json.RawMessage
		var label string
		if json.Unmarshal(b, &arr) != nil || len(arr) == 0 || json.Unmarshal(arr[0], &label) != nil {
			continue // not NIP-01: kept as evidence only
		}
		n := int64(len(b))
		if p.queued.Add(n) > bytesQueued {
			p.err = errSwamped
			p.ws.CloseNow()
			return
		}
		select {
		case p.frames <- frame{label: label, parts: arr[1:], size: n}:
		default:
			p.err = errSwamped
			p.ws.CloseNow()
			return
		}
	}
}

func (p *probe) close() { p.ws.CloseNow(); <-p.done }

// sendRaw writes msg as it is (kept for a second send after AUTH).
func (p *probe) sendRaw(ctx context.Context, msg []byte) error {
	if p.auth != nil {
		p.auth.sent(msg)
	}
	return p.write(ctx, msg)
}

// write writes msg and keeps it as evidence.
func (p *probe) write(ctx context.Context, msg []byte) error {
	p.log.add("> ", msg)
	return p.ws.Write(ctx, websocket.MessageText, msg)
}

// req sends ["REQ",id,filters...].
func (p *probe) req(ctx context.Context, id string, filters ...nostr.Filter) error {
	b := append([]byte(`["REQ",`), nostr.AppendJSONString(nil, id)...)
	for i := range filters {
		b = filters[i].AppendJSON(append(b, ','))
	}
	return p.sendRaw(ctx, append(b, ']'))
}

// closeSub sends ["CLOSE",id].
func (p *probe) closeSub(ctx context.Context, id string) error {
	return p.sendRaw(ctx, append(append([]byte(`["CLOSE",`), nostr.AppendJSONString(nil, id)...), ']'))
}

// event sends ["EVENT",ev].
func (p *probe) event(ctx context.Context, ev *nostr.Event) error {
	return p.sendRaw(ctx, append(ev.AppendJSON([]byte(`["EVENT",`)), ']'))
}

// next returns the next frame, or errWait when ctx ends first, or the
// reason the connection stopped. With Options.Auth the probe's own frames
// (NIP-42: a challenge, the AUTH's OK, a refusal it answers) are not
// returned (auth.go).
func (p *probe) next(ctx context.Context) (frame, error) {
	for {
		f, err := p.take(ctx)
		p.queued.Add(-f.size)
		if err != nil || p.auth == nil || !p.handleAuth(ctx, f) {
			return f, err
		}
	}
}

func (p *probe) take(ctx context.Context) (frame, error) {
	if len(p.back) > 0 {
		f := p.back[0]
		p.back = p.back[1:]
		return f, nil
	}
	select {
	case f := <-p.frames:
		return f, nil
	default:
	}
	select {
	case f := <-p.frames:
		return f, nil
	case <-p.done:
		select {
		case f := <-p.frames:
			return f, nil
		default:
		}
		return frame{}, fmt.Errorf("connection lost: %v", p.err)
	case <-ctx.Done():
		return frame{}, errWait
	}
}

// dialError: no connection to the relay could be made.
type dialError struct{ err error }

func (e *dialError) Error() string { return "cannot connect to the relay: " + e.err.Error() }

// errWait: a wait ran out (no decisive answer).
var errWait = errors.New("no answer before the deadline")

// evidence is a check's log of frames, bounded.
type evidence struct {
	mu    sync.Mutex
	lines []string
	size  int
	cut   bool
}

func (e *evidence) add(dir string, b []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.size >= evidenceBytes {
		e.cut = true
		return
	}
	s := string(b)
	if len(s) > evidenceFrame {
		s = strings.ToValidUTF8(s[:evidenceFrame], "") + "…"
	}
	e.lines = append(e.lines, dir+s)
	e.size += len(s)
}

func (e *evidence) note(s string) { e.add("# ", []byte(s)) }
