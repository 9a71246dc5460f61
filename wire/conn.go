// Package wire is relaybench's NIP-01 client: one WebSocket connection to a
// relay, with publishing (EVENT→OK, waited for or pipelined), subscriptions
// (REQ→EVENT…EOSE) and NIP-42 AUTH.
//
// Every OK is read and matched to its event by id; OKs that match nothing
// are counted, never credited to another event. Frames are parsed by a small
// hand-written parser that follows the JSON structure and does not allocate
// for OK and EOSE. One reader goroutine per connection delivers results.
package wire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/relaybench/relaybench/internal/mono"
)

// Errors reported in OK.Err and by the send functions.
var (
	// ErrClosed: the connection died or was closed before the OK arrived.
	ErrClosed = errors.New("connection closed")
	// ErrTimeout: no OK before the deadline.
	ErrTimeout = errors.New("no OK before the deadline")
	// ErrDuplicate: an event with this id is already waiting for its OK on
	// this connection.
	ErrDuplicate = errors.New("event id already in flight on this connection")
	// ErrSubExists: a subscription with this id is open on this connection.
	ErrSubExists = errors.New("subscription id already open on this connection")
	// ErrMessageTooBig: the relay sent a message larger than Options.ReadLimit.
	ErrMessageTooBig = errors.New("relay sent a message larger than the read limit")
	// ErrAnswerOverCap: a Query's answer grew past the client's cap (see
	// Options.MaxAnswerEvents); the errors Query returns wrap it.
	ErrAnswerOverCap = errors.New("answer over the client's cap")
)

// Defaults for zero Options fields.
const (
	DefaultDialTimeout  = 10 * time.Second
	DefaultWriteTimeout = 10 * time.Second
	DefaultReadLimit    = 16 << 20
	noticesKept         = 64

	// MinAnswerEvents is the least a Query's derived cap takes the filters
	// to ask for: a relay that ignores limit and answers up to its own cap
	// (commonly 500 to 5,000) is verified and named (limit is a SHOULD),
	// not cut; only far larger answers are.
	MinAnswerEvents = 5000
	// DefaultAnswerEventBytes and MinAnswerBytes bound a Query's answer in
	// bytes when Options.MaxAnswerBytes is 0: (2 × asked + 100) ×
	// DefaultAnswerEventBytes, at least MinAnswerBytes.
	DefaultAnswerEventBytes = 64 << 10
	MinAnswerBytes          = 64 << 20
	// UnlimitedFilterEvents is how many events a filter with neither limit
	// nor ids is taken to ask for when a Query's cap is derived (relays cap
	// such answers at their max_limit, commonly 500 to 5,000).
	UnlimitedFilterEvents = 10000

	// What a connection remembers to tell late OKs from foreign ones and
	// events after a CLOSE from unsolicited ones (see recall).
	recallExact       = 1024
	expiredBloomBits  = 1 << 20 // 128 KiB, only on a connection with > 1,024 expired events
	closedSubBloomBit = 1 << 17 // 16 KiB, only on a connection with > 1,024 closed subscriptions
)

// Options configure a connection. The zero value is usable.
type Options struct {
	// DialTimeout bounds TCP connect plus the WebSocket upgrade (default 10 s).
	DialTimeout time.Duration
	// WriteTimeout fails the connection when a write is blocked this long
	// (at least 3/4 of it; the socket deadline is refreshed lazily). Default 10 s.
	WriteTimeout time.Duration
	// ReadLimit is the largest message accepted from the relay (default 16 MiB);
	// a larger one ends the connection with ErrMessageTooBig.
	ReadLimit int64
	// OKTimeout, when > 0, expires events waiting longer than this for their
	// OK with ErrTimeout (checked every OKTimeout/4, at least every 5 ms).
	OKTimeout time.Duration
	// OnNotice is called from the reader goroutine for each NOTICE.
	OnNotice func(msg string)
	// AuthSigner answers a NIP-42 challenge with a signed kind-22242 event.
	// When set, ["AUTH",event] is sent and its OK tracked (see Authenticated);
	// when nil, the challenge is only recorded. Auth, when set, wins.
	AuthSigner func(challenge, relayURL string) (rawEvent []byte, id string, err error)
	// Auth authenticates the connection with NIP-42 and retries what the
	// relay refused "auth-required:" (see auth.go). Nil: the process default
	// (SetDefaultAuth), unless AuthSigner is set. With an Auth, the raw
	// event given to SendEvent or Publish must stay unchanged until its
	// outcome is delivered (it may be sent again).
	Auth *Auth
	// TLSConfig is used for wss:// URLs (nil: system roots).
	TLSConfig *tls.Config
	// OnMalformed is called from the reader goroutine for each frame that is
	// not valid NIP-01; frame is only valid during the call.
	OnMalformed func(frame []byte, err error)
	// LocalAddr, when set, is the local IP address the TCP connection is
	// made from (e.g. 127.0.0.2 to spread many loopback connections over
	// several source addresses, each with its own ephemeral ports).
	LocalAddr net.IP
	// SharedReader reads a plain ws:// connection on one of a few shared
	// readers (epoll sets) instead of a goroutine of its own (Linux; see
	// poll_linux.go): far cheaper per message for thousands of
	// subscriptions. Handlers (SubHandler, OnNotice, OnMalformed, SendEvent's
	// done) then run on that thread for many connections in turn and must
	// not block. Ignored for wss:// and where not supported.
	SharedReader bool
	// MaxAnswerEvents caps the events Query keeps of one answer (0: derived
	// from the filters: 2 × max(their limits, 5,000) + 100, see AnswerCap). Past the
	// cap, Query stops collecting, closes the subscription and ends with
	// EndOverCap: a relay that ignores limit (a SHOULD in NIP-01) cannot
	// swamp the client's memory.
	MaxAnswerEvents int
	// MaxAnswerBytes caps the bytes of event JSON Query keeps of one answer
	// (0: derived from the filters, at least 64 MiB, see AnswerCap).
	MaxAnswerBytes int64
	// KnownEvent, when set, is asked about each EVENT message's event
	// object before it is scanned as JSON (see KnownEventFunc); a
	// subscription's KnownHandler then gets what it recognised. It runs on
	// the reader (with SharedReader, for many connections in turn).
	KnownEvent KnownEventFunc
}

// KnownEventFunc is given the bytes of a message from its event object's
// first byte to the message's end. It returns n > 0 when obj[:n] is byte
// for byte a complete JSON object that the caller holds and knows to be a
// valid event (one it signed and checked itself), and its number tag: the
// reader then skips scanning that object as JSON (it still checks what
// follows it). It must only read obj, and answer 0 when unsure.
type KnownEventFunc func(obj []byte) (n int, tag int32)

func (o Options) withDefaults() Options {
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.ReadLimit <= 0 {
		o.ReadLimit = DefaultReadLimit
	}
	if c := defaultAnswerCap.Load(); c != nil {
		if o.MaxAnswerEvents <= 0 {
			o.MaxAnswerEvents = c.events
		}
		if o.MaxAnswerBytes <= 0 {
			o.MaxAnswerBytes = c.bytes
		}
	}
	switch sharedReaders {
	case "all":
		o.SharedReader = true
	case "off":
		o.SharedReader = false
	}
	return o
}

type answerCap struct {
	events int
	bytes  int64
}

var defaultAnswerCap atomic.Pointer[answerCap]

// SetDefaultAnswerCap sets Options.MaxAnswerEvents and MaxAnswerBytes of
// connections dialled with them 0 (0: derived per query, see AnswerCap).
// The CLI sets it once from its --max-answer-events and --max-answer-bytes
// flags, so that every workload's queries get the same cap.
func SetDefaultAnswerCap(events int, bytes int64) {
	defaultAnswerCap.Store(&answerCap{events: max(events, 0), bytes: max(bytes, 0)})
}

// sharedReaders overrides Options.SharedReader for every connection:
// RELAYBENCH_SHARED_READERS=all reads every plain ws:// connection on the
// shared readers (to run every test through that path), =off none
// (to compare with a goroutine per connection).
var sharedReaders = os.Getenv("RELAYBENCH_SHARED_READERS")

// OK is the outcome of one published event.
type OK struct {
	ID       string // the event id
	Accepted bool   // the relay's verdict (false when Err is set)
	Reason   string // the relay's message, decoded
	Class    Class  // Classify(Reason); ClassOther for a rejection without reason
	// Sent is mono.Now() when the frame was queued for writing: immediately
	// before the write when nothing else was in flight on the connection; when
	// pipelining, the frame may wait behind a write already under way.
	Sent int64
	Recv int64 // mono.Now() when the OK was read (or the failure noticed)
	Err  error // nil, ErrClosed or ErrTimeout: no OK was received
}

// Stats counts what crossed one connection. All fields are totals since Dial
// except Pending.
type Stats struct {
	FramesIn, BytesIn   int64 // messages and payload bytes read
	FramesOut, BytesOut int64 // messages and payload bytes written
	Writes              int64 // socket writes (several frames share one when pipelining)
	OKs                 int64 // OK frames read (matched or not)
	UnmatchedOK         int64 // OKs whose id matched no pending event: LateOK + ForeignOK
	// LateOK: OKs for events sent on this connection whose wait had ended
	// (expired or cancelled) before the OK came: the relay was slow, not wrong.
	LateOK int64
	// ForeignOK: OKs for ids no EVENT sent on this connection was waiting
	// for: never sent here, or already answered (a second OK). NIP-01:
	// "OK messages MUST be sent in response to EVENT messages received from
	// clients". Past 1,024 expired events on a connection, an id is
	// remembered approximately, and a rare foreign OK may be counted late.
	ForeignOK int64
	Expired   int64 // pending events given ErrTimeout
	Events    int64 // EVENT frames read
	// UnknownSubEvents: EVENT frames for a subscription not open here
	// (UnsolicitedEvents + EventsAfterClose).
	UnknownSubEvents int64
	// UnsolicitedEvents: EVENTs under a subscription id never opened on this
	// connection (by REQ or COUNT). NIP-01: "EVENT messages MUST be sent only
	// with a subscription ID related to a subscription previously initiated
	// by the client".
	UnsolicitedEvents int64
	// EventsAfterClose: EVENTs under a subscription this connection had
	// closed (CLOSE sent, CLOSED received, COUNT answered): events in flight
	// when the relay got the CLOSE, or a relay that goes on sending. Past
	// 1,024 closed subscriptions on a connection, ids are remembered
	// approximately and a rare unsolicited EVENT may be counted here.
	EventsAfterClose int64
	// AnswersOverCap: Query answers cut at Options.MaxAnswerEvents/Bytes.
	AnswersOverCap int64
	EOSEs, Closeds int64 // EOSE and CLOSED frames
	Counts         int64 // COUNT frames (ignored)
	Notices        int64 // NOTICE frames
	AuthChallenges int64 // AUTH challenges received
	AuthSent       int64 // AUTH events sent (Options.Auth)
	AuthAccepted   int64 // our AUTH events the relay accepted
	AuthRejected   int64 // our AUTH events rejected or unsigned (Auth: not those left unanswered)
	AuthRetried    int64 // EVENTs and REQs sent again after an accepted AUTH
	Malformed      int64 // frames that are not valid NIP-01
	Unknown        int64 // well-formed frames with an unknown label
	Pending        int   // events currently waiting for their OK
}

type counters struct {
	framesIn, bytesIn, events                     atomic.Int64 // per message: first (see Conn)
	framesOut, bytesOut                           atomic.Int64
	oks, unmatchedOK, expired                     atomic.Int64
	lateOK, foreignOK                             atomic.Int64
	unknownSubEvents, eoses, closeds              atomic.Int64
	unsolicitedEvents, eventsAfterClose           atomic.Int64
	answersOverCap                                atomic.Int64
	counts, notices, authChallenges, authAccepted atomic.Int64
	authRejected, malformed, unknown, writes      atomic.Int64
	authSent, authRetried                         atomic.Int64
}

// pending is an event waiting for its OK: exactly one of done and w is set.
// raw is kept (not copied) only with an Auth, to send the event again.
type pending struct {
	id      string
	done    func(OK)
	w       *waiter
	sent    int64
	raw     []byte
	resent  int64 // when sent again after an AUTH (0: not)
	held    bool  // refused auth-required, waiting for an AUTH
	retried bool  // held once already: the next refusal is final
}

// sentAt is when the event was last sent.
func (p *pending) sentAt() int64 {
	if p.resent != 0 {
		return p.resent
	}
	return p.sent
}

type waiter struct{ ch chan OK }

var waiterPool = sync.Pool{New: func() any { return &waiter{ch: make(chan OK, 1)} }}

// Conn is one NIP-01 connection. All methods are safe for concurrent use.
type Conn struct {
	// What the reader touches for every message comes first, together (with
	// thousands of connections each message's first touch of its Conn is
	// a cache miss; see poller.wait): the socket, the frame reader, the
	// subscription lookup and the first counters (st).
	fr      *frameReader        // plain ws://: reads frames from nc itself (frames.go)
	nc      net.Conn            // the TCP (or TLS-carrying TCP) connection under ws
	reasons map[string]string   // interned OK reasons of a shared connection (its reader's)
	mu      sync.Mutex          // guards lastSub's writes and pending and the fields after it
	lastSub atomic.Pointer[Sub] // the subscription the last EVENT was for (read.go sub), nil when dropped; written under mu
	known   KnownEventFunc      // o.KnownEvent, here on the first line (o's fields are cold)
	frs     frameReader         // fr's storage: next to the fields above, not an allocation of its own
	st      counters

	url string
	o   Options
	ws  *websocket.Conn

	direct    bool       // frame and write ourselves (plain ws://), see write.go
	wmu       sync.Mutex // guards the fields below
	wcond     *sync.Cond // on wmu: a write finished (room in the queue)
	wkickCond *sync.Cond // on wmu: wakes the writer goroutine
	wkick     bool       // the writer goroutine has a queue to write
	wstarted  bool       // the writer goroutine was started (write.go, on first async flush)
	wstop     bool       // the connection failed: writer exits, senders give up
	wq        []byte     // queued frames (direct) or the message being written
	wspare    []byte
	flushing  bool  // a goroutine is writing (direct mode)
	werr      error // sticky write error
	rng       interface{ Uint64() uint64 }
	wdlSet    int64 // mono time the write deadline was last set; 0 = never

	pending  map[string]pending // guarded by mu, as are the fields below
	subs     map[string]*Sub
	expired  recall // ids of events whose wait ended without an OK: a later OK is late, not foreign
	closedSb recall // ids of subscriptions closed: a later EVENT is after CLOSE, not unsolicited
	closed   bool
	err      error
	notices  [noticesKept]string
	nNotices int
	authChal string
	auth     *Auth     // nil: AUTH only through Options.AuthSigner
	as       authState // guarded by mu

	done      chan struct{}
	authed    chan struct{}
	authOnce  sync.Once
	stopSweep chan struct{}
}

// DialErrorKind classifies why Dial failed.
type DialErrorKind string

// Dial failure kinds.
const (
	DialUnreachable    DialErrorKind = "unreachable"     // nothing listening, no route, DNS failure
	DialUpgradeRefused DialErrorKind = "upgrade refused" // HTTP answered without switching to WebSocket
	DialTimeout        DialErrorKind = "timeout"         // connect or handshake took longer than DialTimeout
	DialCanceled       DialErrorKind = "canceled"        // the caller's context ended
	DialFailed         DialErrorKind = "failed"          // anything else (bad URL, TLS, protocol)
)

// LostError is the error of the events in flight on a connection when it
// was lost: it is ErrClosed (errors.Is), and every event one loss ended
// shares the same value, so that a watchdog can count the loss once
// rather than once per event that was in flight.
type LostError struct{ Cause error }

func (e *LostError) Error() string { return ErrClosed.Error() }

// Unwrap makes a LostError ErrClosed.
func (e *LostError) Unwrap() error { return ErrClosed }

// DialError is the one-line error Dial returns.
type DialError struct {
	Kind   DialErrorKind
	URL    string
	Status int    // HTTP status for DialUpgradeRefused
	Body   string // first line of the refusal body, if any
	Err    error
}

func (e *DialError) Error() string {
	switch e.Kind {
	case DialUpgradeRefused:
		s := fmt.Sprintf("dial %s: upgrade refused: HTTP %d %s", e.URL, e.Status, http.StatusText(e.Status))
		if e.Body != "" {
			s += ": " + e.Body
		}
		return s
	case DialTimeout:
		return fmt.Sprintf("dial %s: timeout: %v", e.URL, e.Err)
	default:
		return fmt.Sprintf("dial %s: %s: %v", e.URL, e.Kind, rootCause(e.Err))
	}
}

func (e *DialError) Unwrap() error { return e.Err }

// rootCause strips coder/websocket's "failed to ..." wrapping down to the
// innermost net.OpError or syscall error, for a short message.
func rootCause(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		return op
	}
	return err
}

// Dial connects to a relay (ws:// or wss://) with TCP_NODELAY set and
// compression off, and starts the connection's goroutines (reader; writer
// for ws:// once pipelined writes need it; OK-timeout sweeper if set). ctx bounds only the dial; the
// connection lives until Close or a failure (see Done, Err).
func Dial(ctx context.Context, url string, o Options) (*Conn, error) {
	o = o.withDefaults()
	if !strings.HasPrefix(url, "ws://") && !strings.HasPrefix(url, "wss://") {
		return nil, &DialError{Kind: DialFailed, URL: url, Err: errors.New("URL scheme must be ws:// or wss://")}
	}
	dctx, cancel := context.WithTimeout(ctx, o.DialTimeout)
	defer cancel()

	var ncMu sync.Mutex
	var nc net.Conn
	var hs *hsConn // plain ws://: the handshake's view of nc (frames.go)
	direct := strings.HasPrefix(url, "ws://")
	d := &net.Dialer{}
	if o.LocalAddr != nil {
		d.LocalAddr = &net.TCPAddr{IP: o.LocalAddr}
	}
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			if tc, ok := c.(*net.TCPConn); ok {
				if err := tc.SetNoDelay(true); err != nil {
					c.Close()
					return nil, fmt.Errorf("set TCP_NODELAY: %w", err)
				}
			}
			ncMu.Lock()
			nc = c
			if direct {
				hs = &hsConn{Conn: c}
				ncMu.Unlock()
				return hs, nil
			}
			ncMu.Unlock()
			return c, nil
		},
		TLSClientConfig:    o.TLSConfig,
		DisableCompression: true,
		DisableKeepAlives:  true,
	}
	ws, resp, err := websocket.Dial(dctx, url, &websocket.DialOptions{
		HTTPClient:      &http.Client{Transport: tr},
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		return nil, classifyDialError(ctx, dctx, url, resp, err, o.DialTimeout)
	}
	ncMu.Lock()
	under, handshake := nc, hs
	ncMu.Unlock()
	if under == nil {
		ws.CloseNow()
		return nil, &DialError{Kind: DialFailed, URL: url, Err: errors.New("no TCP connection captured")}
	}
	ws.SetReadLimit(o.ReadLimit)
	c := &Conn{
		url:     url,
		o:       o,
		known:   o.KnownEvent,
		ws:      ws,
		nc:      under,
		pending: make(map[string]pending), // grows with the window; idle subscribers keep it tiny
		subs:    make(map[string]*Sub),
		done:    make(chan struct{}),
		authed:  make(chan struct{}),
		direct:  direct,
		wq:      make([]byte, 0, 512), // grows on demand: idle connections stay small
		rng:     newMaskRNG(),
		auth:    authFor(o),

		expired:  newRecall(recallExact, expiredBloomBits),
		closedSb: newRecall(recallExact, closedSubBloomBit),
	}
	c.wcond = sync.NewCond(&c.wmu)
	c.wkickCond = sync.NewCond(&c.wmu)
	if handshake != nil {
		rest := handshake.takeRest()
		c.fr = &c.frs
		c.fr.init(under, rest, o.ReadLimit)
		if o.SharedReader && len(rest) == 0 { // bytes already read would wait for the next edge
			shared, err := c.startShared(under)
			if err != nil {
				ws.CloseNow()
				return nil, &DialError{Kind: DialFailed, URL: url, Err: fmt.Errorf("shared reader: %w", err)}
			}
			if shared {
				if o.OKTimeout > 0 {
					go c.sweepLoop()
				}
				return c, nil
			}
		}
	}
	go c.readLoop()
	if o.OKTimeout > 0 {
		go c.sweepLoop()
	}
	return c, nil
}

func classifyDialError(ctx, dctx context.Context, url string, resp *http.Response, err error, timeout time.Duration) error {
	e := &DialError{Kind: DialFailed, URL: url, Err: err}
	var op *net.OpError
	switch {
	case resp != nil && resp.StatusCode != http.StatusSwitchingProtocols:
		e.Kind = DialUpgradeRefused
		e.Status = resp.StatusCode
		if resp.Body != nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
			e.Body = firstLine(string(b))
		}
	case ctx.Err() != nil:
		e.Kind = DialCanceled
		e.Err = ctx.Err()
	case dctx.Err() != nil || isTimeout(err):
		e.Kind = DialTimeout
		e.Err = fmt.Errorf("no connection after %v", timeout)
	case errors.As(err, &op) && op.Op == "dial":
		e.Kind = DialUnreachable
	}
	return e
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func firstLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' || s[i] == '\r' {
			s = s[:i]
			break
		}
	}
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

// URL returns the relay URL this connection was dialed with.
func (c *Conn) URL() string { return c.url }

// Done is closed when the connection has stopped (see Err).
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err reports why the connection stopped: nil while it is open, otherwise
// the relay's close, the read/write error, or ErrClosed after Close.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the connection at once (no close handshake). Events still
// waiting get OK{Err: ErrClosed}. It returns the error that had already
// stopped the connection, if any, else nil.
func (c *Conn) Close() error {
	c.mu.Lock()
	prev := c.err
	c.mu.Unlock()
	c.fail(ErrClosed)
	if prev != nil && !errors.Is(prev, ErrClosed) {
		return prev
	}
	return nil
}

// fail stops the connection once: it records why, closes Done and the
// socket, and fails every pending event and open subscription.
func (c *Conn) fail(why error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.err = why
	pend := c.pending
	c.pending = nil
	subs := c.subs
	c.subs = nil
	// Frames the reader has yet to handle may answer what this loss ends
	// (the writer can find the socket closed first): an OK for one of these
	// events is late, an EVENT for one of these subscriptions after its
	// end; neither is a frame for something never sent.
	for id := range pend {
		c.expired.add(id)
	}
	for id := range subs {
		c.closedSb.add(id)
	}
	c.lastSub.Store(nil)
	c.mu.Unlock()
	close(c.done)
	c.ws.CloseNow()
	if rs, ok := c.nc.(interface{ shutdown() }); ok {
		rs.shutdown() // a shared connection's socket: its reader releases it
	}
	c.stopWriter()
	now := mono.Now()
	lost := &LostError{Cause: why} // one value for every event this loss ended
	for _, p := range pend {
		c.deliver(p, OK{ID: p.id, Sent: p.sentAt(), Recv: now, Err: lost})
	}
	for _, s := range subs {
		s.connDied(why, now)
	}
}

func (c *Conn) deliver(p pending, ok OK) {
	if p.done != nil {
		p.done(ok)
	} else {
		p.w.ch <- ok
	}
}

// Stats returns a snapshot of the connection's counters.
func (c *Conn) Stats() Stats {
	c.mu.Lock()
	n := len(c.pending)
	c.mu.Unlock()
	s := &c.st
	return Stats{
		FramesIn: s.framesIn.Load(), BytesIn: s.bytesIn.Load(),
		FramesOut: s.framesOut.Load(), BytesOut: s.bytesOut.Load(), Writes: s.writes.Load(),
		OKs: s.oks.Load(), UnmatchedOK: s.unmatchedOK.Load(), Expired: s.expired.Load(),
		LateOK: s.lateOK.Load(), ForeignOK: s.foreignOK.Load(),
		Events: s.events.Load(), UnknownSubEvents: s.unknownSubEvents.Load(),
		UnsolicitedEvents: s.unsolicitedEvents.Load(), EventsAfterClose: s.eventsAfterClose.Load(),
		AnswersOverCap: s.answersOverCap.Load(),
		EOSEs:          s.eoses.Load(), Closeds: s.closeds.Load(), Counts: s.counts.Load(),
		Notices: s.notices.Load(), AuthChallenges: s.authChallenges.Load(),
		AuthSent: s.authSent.Load(), AuthAccepted: s.authAccepted.Load(),
		AuthRejected: s.authRejected.Load(), AuthRetried: s.authRetried.Load(),
		Malformed: s.malformed.Load(), Unknown: s.unknown.Load(),
		Pending: n,
	}
}

// Notices returns the last NOTICE messages received (at most 64), oldest first.
func (c *Conn) Notices() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := min(c.nNotices, noticesKept)
	out := make([]string, 0, n)
	for i := c.nNotices - n; i < c.nNotices; i++ {
		out = append(out, c.notices[i%noticesKept])
	}
	return out
}

// AuthChallenge returns the last NIP-42 challenge received, or "".
func (c *Conn) AuthChallenge() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.authChal
}

// Authenticated is closed once the relay accepts an AUTH event sent by
// AuthSigner.
func (c *Conn) Authenticated() <-chan struct{} { return c.authed }

// SendEvent writes ["EVENT",raw] without waiting. done is called exactly
// once unless SendEvent returns an error: from the reader goroutine with the
// OK whose id matches, or with Err ErrClosed/ErrTimeout when the connection
// stops or ExpireBefore / Options.OKTimeout sweeps the event (then from the
// goroutine doing that). done must not block. raw must be the event's JSON
// object and id its id; raw is not retained after SendEvent returns.
func (c *Conn) SendEvent(id string, raw []byte, done func(OK)) error {
	if done == nil {
		return errors.New("SendEvent: done callback is nil")
	}
	return c.send(`["EVENT",`, id, raw, done, nil)
}

// Publish writes ["EVENT",raw] and waits for the OK with that id. The error
// is non-nil only when no OK arrived (connection stopped, ctx ended, or the
// event could not be sent); a rejection is an OK with Accepted false. Give
// ctx a deadline (or set Options.OKTimeout): a relay that stays connected but
// never answers is otherwise waited for as long as the connection lives.
func (c *Conn) Publish(ctx context.Context, id string, raw []byte) (OK, error) {
	w := waiterPool.Get().(*waiter)
	if err := c.send(`["EVENT",`, id, raw, nil, w); err != nil {
		waiterPool.Put(w)
		return OK{ID: id, Recv: mono.Now(), Err: err}, err
	}
	select {
	case ok := <-w.ch:
		waiterPool.Put(w)
		return ok, ok.Err
	case <-ctx.Done():
	}
	if p, ok := c.takePendingIf(id, w); ok {
		waiterPool.Put(w)
		c.st.expired.Add(1)
		r := OK{ID: id, Sent: p.sentAt(), Recv: mono.Now(), Err: ErrTimeout}
		return r, fmt.Errorf("%w: %v", ErrTimeout, ctx.Err())
	}
	// The reader (or a sweep) took the entry and is delivering it now.
	ok := <-w.ch
	waiterPool.Put(w)
	return ok, ok.Err
}

// takePendingIf removes id's entry if it still belongs to waiter w (and
// remembers it: an OK for it is late from now on).
func (c *Conn) takePendingIf(id string, w *waiter) (pending, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.pending[id]
	if !ok || p.w != w {
		return pending{}, false
	}
	delete(c.pending, id)
	c.expired.add(p.id)
	return p, true
}

// lockOpen takes the write lock and then c.mu; it fails, holding
// neither, once a write has failed or the connection is closed.
func (c *Conn) lockOpen() error {
	if err := c.lockWriter(); err != nil {
		return err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		c.wmu.Unlock()
		return ErrClosed
	}
	return nil
}

// send registers id as pending and queues prefix+raw+"]". Once queued, the
// outcome (OK, or ErrClosed if the connection breaks) goes to done or w.
func (c *Conn) send(prefix, id string, raw []byte, done func(OK), w *waiter) error {
	if id == "" {
		return errors.New("send: empty event id")
	}
	if err := c.lockOpen(); err != nil {
		return err
	}
	if _, dup := c.pending[id]; dup {
		c.mu.Unlock()
		c.wmu.Unlock()
		return fmt.Errorf("%w: %s", ErrDuplicate, id)
	}
	p := pending{id: id, done: done, w: w, sent: mono.Now()}
	if c.auth != nil && prefix == `["EVENT",` {
		p.raw = raw
	}
	c.pending[id] = p
	async := len(c.pending) > 1 // others in flight: let the writer batch
	c.mu.Unlock()
	c.queueLocked(prefix, raw, "]")
	if err := c.flushUnlock(async); err != nil {
		c.fail(err) // delivers ErrClosed to this event too
	}
	return nil
}

// writeMessage queues and writes one prebuilt message (CLOSE).
func (c *Conn) writeMessage(msg []byte) error {
	if err := c.lockWriter(); err != nil {
		return err
	}
	c.queueLocked("", msg, "")
	if err := c.flushUnlock(false); err != nil {
		c.fail(err)
		return err
	}
	return nil
}

// ExpireBefore gives OK{Err: ErrTimeout} to every event on this connection
// sent before monoDeadline (a mono.Now() value) and still waiting, and
// returns how many. A late OK for them is counted in Stats().LateOK.
func (c *Conn) ExpireBefore(monoDeadline int64) int {
	var exp []pending
	c.mu.Lock()
	for id, p := range c.pending {
		if p.sent < monoDeadline {
			exp = append(exp, p)
			delete(c.pending, id)
			c.expired.add(p.id)
		}
	}
	c.mu.Unlock()
	now := mono.Now()
	for _, p := range exp {
		c.st.expired.Add(1)
		c.deliver(p, OK{ID: p.id, Sent: p.sentAt(), Recv: now, Err: ErrTimeout})
	}
	return len(exp)
}

func (c *Conn) sweepLoop() {
	every := max(c.o.OKTimeout/4, 5*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			c.ExpireBefore(mono.Now() - int64(c.o.OKTimeout))
		}
	}
}
