package wire

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/nostr"
)

// SubHandler receives a subscription's messages. All callbacks run on the
// connection's reader goroutine, must not block, and may be nil.
type SubHandler struct {
	// OnEvent gets the event object's raw JSON; raw is only valid during the
	// call (copy it to keep it).
	OnEvent func(raw []byte, recv int64)
	// Known, when set, gets the event objects that Options.KnownEvent
	// recognised, instead of OnEvent, and is warmed on a shared reader (see
	// KnownHandler).
	Known KnownHandler
	// OnEOSE is called when the relay has sent all stored events.
	OnEOSE func(recv int64)
	// OnClosed is called when the relay ends the subscription with CLOSED.
	OnClosed func(reason string, class Class, recv int64)
	// OnConnError is called (from the goroutine stopping the connection)
	// when the connection stops while the subscription is open.
	OnConnError func(err error)
}

// KnownHandler is a subscription's handler of the events it knows. It is
// one value held in the subscription itself, not a closure of its own:
// with thousands of subscriptions a delivery then calls it without a
// cache miss on the closure's code pointer (what the shared reader's warm
// pass, poller.warmUp, cannot reach).
type KnownHandler interface {
	// OnKnownEvent is called instead of OnEvent for an event object that
	// Options.KnownEvent recognised as its event tag; raw is only valid
	// during the call.
	OnKnownEvent(raw []byte, tag int, recv int64)
	// Warm is called on a shared reader (Options.SharedReader) for each
	// connection with data before any of them is read, so that what the
	// handlers will touch comes from memory for all of them at once
	// instead of one cache miss after another (see poller.wait). It must
	// only read what the handlers' own goroutine writes or nobody does,
	// and returns any value computed from what it read (kept, so that the
	// reads stay).
	Warm() int
}

// Sub is an open subscription.
type Sub struct {
	c             *Conn
	id            string
	h             SubHandler
	sent          int64
	closedByRelay atomic.Bool
	closeOnce     sync.Once
	onCount       func(obj []byte, recv int64) // set by Count (count.go): the COUNT answer
	req           []byte                       // the REQ, kept with an Auth to send it again (auth.go)
	resent        atomic.Int64                 // when the REQ was sent again after an AUTH (0: not)
	held          bool                         // refused auth-required, waiting for an AUTH (guarded by c.mu)
	retried       bool                         // held once already (guarded by c.mu)
	replaces      bool                         // its REQ may replace an open subscription of its id (QueryOpen)
}

// ID returns the subscription id.
func (s *Sub) ID() string { return s.id }

// Sent returns mono.Now() taken immediately before the REQ was written
// (written again after a NIP-42 AUTH: the second time).
func (s *Sub) Sent() int64 {
	if t := s.resent.Load(); t != 0 {
		return t
	}
	return s.sent
}

func (s *Sub) connDied(err error, _ int64) {
	if s.h.OnConnError != nil {
		s.h.OnConnError(err)
	}
}

// Req opens subscription subID with filters: it registers h, then writes
// ["REQ",subID,filters...]. Sub ids must be unique among the connection's
// open subscriptions.
func (c *Conn) Req(subID string, filters []nostr.Filter, h SubHandler) (*Sub, error) {
	return c.req(subID, filters, h, false)
}

// req is Req; replace lets the REQ replace an open subscription of subID.
func (c *Conn) req(subID string, filters []nostr.Filter, h SubHandler, replace bool) (*Sub, error) {
	if subID == "" {
		return nil, errors.New("req: empty subscription id")
	}
	s := &Sub{c: c, id: subID, h: h, replaces: replace}
	buf := appendReq("REQ", subID, filters)
	if c.auth != nil {
		s.req = buf
	}
	if err := c.openSub(s, buf); err != nil {
		return nil, err
	}
	return s, nil
}

// appendReq builds [label,subID,filters...] (a REQ or a COUNT).
func appendReq(label, subID string, filters []nostr.Filter) []byte {
	buf := append(make([]byte, 0, 128), `["`...)
	buf = append(append(buf, label...), `",`...)
	buf = nostr.AppendJSONString(buf, subID)
	for i := range filters {
		buf = append(buf, ',')
		buf = filters[i].AppendJSON(buf)
	}
	return append(buf, ']')
}

// openSub registers s under its id and writes buf, its REQ or COUNT; s.sent
// is when the frame was queued.
func (c *Conn) openSub(s *Sub, buf []byte) error {
	if err := c.lockOpen(); err != nil {
		return err
	}
	if old, dup := c.subs[s.id]; dup && (!s.replaces || old.held) {
		c.mu.Unlock()
		c.wmu.Unlock()
		return fmt.Errorf("%w: %q", ErrSubExists, s.id)
	}
	if _, dup := c.subs[s.id]; dup {
		c.dropSub(s.id) // replaced: what comes under the id from now on is s's
	}
	c.subs[s.id] = s
	c.mu.Unlock()
	s.sent = mono.Now()
	c.queueLocked("", buf, "")
	if err := c.flushUnlock(false); err != nil {
		c.fail(err)
		return err
	}
	return nil
}

// Close forgets the subscription and sends ["CLOSE",subid] unless the relay
// already closed it. Events for it that arrive later are counted in
// Stats().EventsAfterClose. Calling Close from a SubHandler callback is safe;
// after that no callback for this subscription runs.
func (s *Sub) Close() error {
	var err error
	s.closeOnce.Do(func() {
		c := s.c
		c.mu.Lock()
		open := !c.closed && c.subs[s.id] == s
		if open {
			c.dropSub(s.id)
		}
		connClosed := c.closed
		c.mu.Unlock()
		if connClosed {
			err = ErrClosed
			return
		}
		if !open || s.closedByRelay.Load() {
			return
		}
		buf := append(make([]byte, 0, 32+len(s.id)), `["CLOSE",`...)
		buf = nostr.AppendJSONString(buf, s.id)
		buf = append(buf, ']')
		err = c.writeMessage(buf)
	})
	return err
}

// QueryEnd says how a Query ended.
type QueryEnd string

// How a query can end.
const (
	EndEOSE      QueryEnd = "eose"       // the relay sent EOSE
	EndClosed    QueryEnd = "closed"     // the relay sent CLOSED (see Reason, Class)
	EndTimeout   QueryEnd = "timeout"    // ctx ended first
	EndConnError QueryEnd = "conn-error" // the connection stopped (see Err)
	// EndOverCap: the answer grew past the client's cap (Options.MaxAnswerEvents,
	// MaxAnswerBytes) before EOSE; Err wraps ErrAnswerOverCap and Events is nil.
	EndOverCap QueryEnd = "over-cap"
)

// QueryResult is what Query collected. Times are mono.Now() values; zero
// FirstEvent means no event arrived.
type QueryResult struct {
	Events     [][]byte // raw event objects, copied, in arrival order
	Sent       int64    // just before the REQ was written
	FirstEvent int64    // first EVENT read
	End        int64    // EOSE/CLOSED read, or when the timeout/error was noticed
	Ended      QueryEnd
	Reason     string // CLOSED reason
	Class      Class  // CLOSED reason class
	Err        error  // for EndTimeout, EndConnError and EndOverCap
	// Received is how many EVENTs arrived for the query before it ended
	// (len(Events), except for EndOverCap, whose events are dropped).
	Received int
}

// AnswerCap is the most events and bytes of event JSON Query keeps of one
// answer to filters. The filters ask for their total limit (a filter
// without limit counts its ids, or UnlimitedFilterEvents without ids).
// Events: o.MaxAnswerEvents, else 2 × max(asked, MinAnswerEvents) + 100.
// Bytes: o.MaxAnswerBytes, else (2 × asked + 100) × DefaultAnswerEventBytes,
// at least MinAnswerBytes.
func (o Options) AnswerCap(filters []nostr.Filter) (events int, bytes int64) {
	const most = 1 << 30 // far beyond any memory: nothing below overflows
	asked := 0
	for i := range filters {
		n := UnlimitedFilterEvents
		switch f := &filters[i]; {
		case f.Limit > 0:
			n = f.Limit
		case len(f.IDs) > 0:
			n = len(f.IDs)
		}
		asked = min(asked+min(n, most), most)
	}
	events = o.MaxAnswerEvents
	if events <= 0 {
		events = 2*max(asked, MinAnswerEvents) + 100
	}
	bytes = o.MaxAnswerBytes
	if bytes <= 0 {
		bytes = max(int64(2*asked+100)*DefaultAnswerEventBytes, MinAnswerBytes)
	}
	return events, bytes
}

// AnswersHeldMax bounds the bytes of event JSON that all Query calls of the
// process hold at once: concurrent queries (query connections, mixed and
// load queriers) share it, so a relay that ignores limit cannot multiply
// the per-answer cap by the client's concurrency. An answer that would
// take the total past it is cut like one over its own cap.
var AnswersHeldMax int64 = 64 << 20

// answersHeld is the bytes of event JSON held by Query calls in progress.
var answersHeld atomic.Int64

// OverCapError is the error of a Query cut at the cap.
type OverCapError struct {
	Events   int   // the event cap
	Bytes    int64 // the byte cap
	Received int   // events received when it was cut
	Shared   int64 // when cut by AnswersHeldMax: that budget (else 0)
}

func (e *OverCapError) Error() string {
	if e.Shared > 0 {
		return fmt.Sprintf("%v: the answers of concurrent queries held more than %d bytes at once before EOSE", ErrAnswerOverCap, e.Shared)
	}
	return fmt.Sprintf("%v: more than %d events or %d bytes before EOSE", ErrAnswerOverCap, e.Events, e.Bytes)
}

func (e *OverCapError) Unwrap() error { return ErrAnswerOverCap }

// Query sends a REQ, collects events until EOSE, CLOSED, the connection
// stopping, ctx ending or the answer outgrowing its cap (Options.AnswerCap),
// then sends CLOSE (unless the relay closed it). The error is non-nil for a
// timeout, a connection error or an answer over the cap; the result holds
// what arrived until then (nothing when over the cap).
func (c *Conn) Query(ctx context.Context, subID string, filters []nostr.Filter) (QueryResult, error) {
	res, s, err := c.query(ctx, subID, filters, false)
	if s != nil {
		s.Close()
	}
	return res, err
}

// QueryOpen is Query as clients that keep subscriptions open send it. A
// REQ under the id of a subscription still open on c replaces it (NIP-01:
// "a new subscription is created, replacing the old one"): whatever comes
// under the id from then on is this answer's, including what the relay
// sent for the old filters before it read the REQ. keep leaves the
// subscription open once its answer ended with EOSE and returns it (the
// caller closes it, or replaces it with another QueryOpen; what comes
// under it after EOSE is dropped); else it is closed as Query closes it
// and the Sub is nil.
func (c *Conn) QueryOpen(ctx context.Context, subID string, filters []nostr.Filter, keep bool) (QueryResult, *Sub, error) {
	res, s, err := c.query(ctx, subID, filters, true)
	if keep && res.Ended == EndEOSE {
		return res, s, err
	}
	if s != nil {
		s.Close()
	}
	return res, nil, err
}

// query is Query and QueryOpen without the CLOSE: the Sub (nil if the REQ
// could not be sent) is still registered unless the relay closed it.
func (c *Conn) query(ctx context.Context, subID string, filters []nostr.Filter, replace bool) (QueryResult, *Sub, error) {
	var (
		mu    sync.Mutex
		res   QueryResult
		ended bool
		kept  int64 // bytes of res.Events
	)
	capEvents, capBytes := c.o.AnswerCap(filters)
	end := make(chan struct{})
	finish := func(how QueryEnd, t int64, fn func()) {
		mu.Lock()
		if !ended {
			ended = true
			res.Ended = how
			res.End = t
			if fn != nil {
				fn()
			}
			close(end)
		}
		mu.Unlock()
	}
	h := SubHandler{
		OnEvent: func(raw []byte, recv int64) {
			mu.Lock()
			defer mu.Unlock()
			if ended {
				return
			}
			if res.FirstEvent == 0 {
				res.FirstEvent = recv
			}
			res.Received++
			n := int64(len(raw))
			var shared int64
			if len(res.Events) < capEvents && kept+n <= capBytes {
				if answersHeld.Add(n) <= AnswersHeldMax {
					kept += n
					res.Events = append(res.Events, append([]byte(nil), raw...))
					return
				}
				answersHeld.Add(-n)
				shared = AnswersHeldMax
			}
			c.st.answersOverCap.Add(1)
			answersHeld.Add(-kept)
			kept = 0
			ended, res.Ended, res.End, res.Events = true, EndOverCap, recv, nil
			res.Err = &OverCapError{Events: capEvents, Bytes: capBytes, Received: res.Received, Shared: shared}
			close(end)
		},
		OnEOSE: func(recv int64) { finish(EndEOSE, recv, nil) },
		OnClosed: func(reason string, class Class, recv int64) {
			finish(EndClosed, recv, func() { res.Reason, res.Class = reason, class })
		},
		OnConnError: func(err error) {
			finish(EndConnError, mono.Now(), func() { res.Err = err })
		},
	}
	s, err := c.req(subID, filters, h, replace)
	if err != nil {
		return QueryResult{Ended: EndConnError, Err: err}, nil, err
	}
	select {
	case <-end:
	case <-ctx.Done():
		finish(EndTimeout, mono.Now(), func() { res.Err = fmt.Errorf("%w: %v", ErrTimeout, ctx.Err()) })
	}
	mu.Lock()
	defer mu.Unlock()
	ended = true // no event counts towards the held bytes after this
	answersHeld.Add(-kept)
	res.Sent = s.Sent()
	return res, s, res.Err
}
