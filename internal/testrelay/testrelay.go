// Package testrelay is a small but real in-memory NIP-01 relay for tests,
// with knobs that make it misbehave in the ways real relays do: silent
// drops, refusals, rate limits, slow or missing OKs, wrong or invalid query
// results, missing EOSE, malformed frames, OKs for ids never sent, events
// under subscription ids never opened, endless answers, abrupt disconnects,
// faulty live delivery, bounded processing capacity, hangs and sudden death.
//
// It listens on 127.0.0.1 (httptest) and speaks WebSocket with
// github.com/coder/websocket. Stored events are answered to REQs by filter
// (nostr.Filter.Matches), newest first, honoring each filter's limit and the
// announced cap (Config.MaxLimit, NIP-11 limitation.max_limit); after EOSE a
// subscription receives new matching events until CLOSE.
//
// Counting: every knob named "…Every N" acts on the Nth, 2Nth, … occurrence,
// counted relay-wide from 1 (events received, live deliveries) or per
// connection (frames sent, messages received), as documented on each field.
// Every knob named "…After N" lets the first N occurrences through and acts
// on every later one (the (N+1)th, (N+2)th, …), except KillAfterEvents,
// which acts once, on the Nth.
package testrelay

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	gonostr "github.com/nbd-wtf/go-nostr"

	"github.com/relaybench/relaybench/nostr"
	rbverify "github.com/relaybench/relaybench/verify"
)

// DefaultMaxLimit is the per-filter cap used when Config.MaxLimit is 0.
const DefaultMaxLimit = 500

// Config sets the relay's behaviour. The zero value is a well-behaved relay
// that accepts every well-formed event without checking ids or signatures.
type Config struct {
	// Verify checks each EVENT's id and signature (go-nostr) and refuses a
	// bad one with "invalid:".
	Verify bool

	// DropEvery N: every Nth EVENT received (relay-wide) is answered
	// OK true but not stored nor delivered: a silent drop.
	DropEvery int
	// RefuseEvery N: every Nth EVENT received (relay-wide) is answered
	// OK false with RefuseReason. Checked before DropEvery.
	RefuseEvery int
	// RefuseReason is the OK reason for refused events; default
	// "blocked: refused by test relay".
	RefuseReason string

	// ConnectDelay holds each WebSocket upgrade back this long before
	// answering it (as ORLY does, 200 ms per connection already open from
	// the same IP, up to 2 s): a client's dial takes at least this long,
	// and nothing is answered on the connection before.
	ConnectDelay time.Duration

	// OKDelay delays each OK by this much, measured from receipt of the
	// EVENT. OKs are sent in order per connection, and reading goes on
	// meanwhile, so many events can be awaiting their OK at once.
	OKDelay time.Duration
	// NeverOK stores events (subject to the other knobs) but never sends OK.
	NeverOK bool
	// NeverOKAfter N: the first N EVENT messages received (relay-wide,
	// malformed ones included) are answered as usual; every later one is
	// handled (stored, subject to the other knobs) but never answered.
	NeverOKAfter int
	// LoseUnanswered: the events NeverOK or NeverOKAfter leaves unanswered
	// are not stored nor delivered either (counted as Dropped): lost.
	LoseUnanswered bool

	// RateLimitAfter N: on each connection, the first N EVENT messages
	// (malformed ones included) are handled as usual; every later
	// well-formed one is answered OK false with RateLimitReason and is not
	// stored nor delivered. It is checked on receipt, before Verify and the
	// worker queue, and such events do not count toward RefuseEvery or
	// DropEvery.
	RateLimitAfter int
	// RateLimitREQAfter N: on each connection, the first N REQ messages are
	// handled as usual; every later one (with a subscription id) is
	// answered ["CLOSED", subid, RateLimitReason] and nothing else: no
	// events, no EOSE, no live deliveries. A subscription already open
	// under that id is closed.
	RateLimitREQAfter int
	// RefuseAllREQs: every REQ is answered as RateLimitREQAfter answers
	// those past its N (CLOSED, nothing else), from the first one.
	RefuseAllREQs bool
	// RateLimitReason is the OK and CLOSED reason of RateLimitAfter and
	// RateLimitREQAfter; default "rate-limited: slow down".
	RateLimitReason string

	// ProcessingTime with Workers > 0 models bounded capacity: each EVENT
	// waits in a relay-wide queue for one of Workers workers, which spends
	// ProcessingTime on it before storing it and answering. Offered load
	// above Workers/ProcessingTime events per second queues up.
	ProcessingTime time.Duration
	Workers        int

	// MaxLimit caps the events returned per filter and is announced as
	// NIP-11 limitation.max_limit; 0 means DefaultMaxLimit.
	MaxLimit int
	// ExtraEvents N: each REQ's stored results are followed by N valid
	// events that match none of its filters (stored ones if there are, else
	// freshly signed ones), before EOSE.
	ExtraEvents int
	// InvalidEvery N: every Nth event the relay sends (query results and
	// live deliveries, relay-wide) is corrupted, alternately with a wrong id
	// (content changed after signing) and a wrong signature.
	InvalidEvery int
	// NoEOSE: never send EOSE.
	NoEOSE bool
	// NoEOSEAfter N: on each connection, the first N REQ messages get their
	// EOSE; every later one gets its stored results (and then live
	// deliveries) but never EOSE.
	NoEOSEAfter int

	// GarbageEvery N: after every Nth frame sent on a connection, send a
	// malformed frame (cycling through a truncated OK, non-JSON text and
	// a JSON array of the wrong shape).
	GarbageEvery int
	// CloseAfter N: on each connection, the Nth message received is not
	// answered; the TCP connection is closed at once, without a close frame.
	CloseAfter int
	// StallAfter N: the relay hangs after N messages received (relay-wide,
	// all kinds). The first N are handled as usual (what they set going,
	// such as delayed OKs, runs its course); every later message is read
	// but never handled, and the connection it came on is read no more, yet
	// held open, until Close. New connections are still accepted, and
	// stall on their first message. Checked before CloseAfter.
	StallAfter int
	// KillAfterEvents N: when the Nth EVENT message (relay-wide, malformed
	// ones included) is received, the relay calls Kill before handling it;
	// neither it nor any later EVENT is answered or stored.
	KillAfterEvents int

	// DelayDeliveries delays each live delivery (events arriving after EOSE).
	DelayDeliveries time.Duration
	// DropDeliveriesEvery N: every Nth live delivery (relay-wide, counted
	// per subscription that matches) is not sent.
	DropDeliveriesEvery int
	// DuplicateDeliveriesEvery N: every Nth live delivery is sent twice.
	DuplicateDeliveriesEvery int
	// InvalidDeliveriesEvery N: every Nth live delivery (counted as for
	// DropDeliveriesEvery) is corrupted, alternately with a wrong signature
	// and a wrong id (content changed after signing), starting with the
	// signature; both copies of a duplicated delivery are corrupted, a
	// dropped one is not sent. Query results are left intact.
	InvalidDeliveriesEvery int
	// SortKeys sends every event (live and stored) with its keys in
	// alphabetical order, as strfry does (content, created_at, id, kind,
	// pubkey, sig, tags): the same event in other bytes than the client
	// published.
	SortKeys bool
	// WrongFilterDeliveriesEvery N: every Nth event broadcast (relay-wide:
	// each newly stored event, whether received or Added, is broadcast
	// once) is also delivered to every live subscription, on any
	// connection, that it does not match. These extra deliveries are valid
	// events outside the subscription's filters; they count as live
	// deliveries for the other delivery knobs.
	WrongFilterDeliveriesEvery int

	// NoNIP11 answers NIP-11 requests with 404.
	NoNIP11 bool
	// NIP11 sets fields of the NIP-11 document (name, software, version, …)
	// over the defaults: a relay's hostile strings.
	NIP11 map[string]any

	// KeepSuperseded turns NIP-01 replacement off: every version of a
	// replaceable or addressable event stays stored and queryable, as
	// relays that keep superseded versions do (NIP-01: older versions MAY
	// be discarded).
	KeepSuperseded bool

	// ForeignOKEvery N: after every Nth OK sent (relay-wide), also send an
	// OK true for a random id no client sent (NIP-01: "OK messages MUST be
	// sent in response to EVENT messages received from clients").
	ForeignOKEvery int
	// UnsolicitedEvents: after handling the first message of each
	// connection, send one stored (or freshly signed) valid event under a
	// subscription id the client never opened, "unsolicited-<n>" (NIP-01:
	// "EVENT messages MUST be sent only with a subscription ID related to a
	// subscription previously initiated by the client"); and after each
	// CLOSE, one under the id just closed (an event after CLOSE, which
	// NIP-01 forbids with no MUST).
	UnsolicitedEvents bool
	// EndlessAnswers: each REQ is answered with its stored results, sent
	// again and again without limit and without EOSE until a CLOSE for it
	// or the end of the connection (NIP-01: limit is a SHOULD; "returning
	// (much) more should be avoided to prevent overwhelming clients"). New
	// matching events are delivered meanwhile, as live deliveries. A REQ
	// nothing stored matches gets only those, and no EOSE.
	EndlessAnswers bool
	// IgnoreLimit answers each REQ with every stored match, newest first,
	// ignoring its filters' limit and MaxLimit (NIP-01: limit is a SHOULD;
	// "returning (much) more should be avoided"), then EOSE as usual.
	IgnoreLimit bool

	// Misbehaviours with the REQs and EVENTs real clients send (see package
	// conformance). The zero value answers them as NIP-01 says: a REQ
	// under an open subscription id replaces it; an event matching several
	// filters of one REQ is sent once; a filter with "limit":0 returns no
	// stored event (live ones only); ephemeral events (kinds 20000–29999)
	// are answered OK and delivered live, never stored; a duplicate EVENT
	// is answered OK true "duplicate: …"; a REQ whose filter does not
	// parse is answered CLOSED "error: …".

	// SameIDNoReplace: a REQ under an open subscription id opens a second
	// subscription beside the first; both deliver under that id.
	SameIDNoReplace bool
	// ReplacedLiveEvent: a REQ under an open subscription id first gets,
	// under that id, the newest stored event matching the open
	// subscription's filters and none of the REQ's, as a live delivery of
	// the old subscription sent before the relay read the REQ would come;
	// then its own answer.
	ReplacedLiveEvent bool
	// FirstFilterLimit: a REQ of several filters whose first has a limit
	// gets at most that many events in all (Wisp v0.6.1).
	FirstFilterLimit bool
	// UnionDuplicates: an event matching several filters of one REQ is
	// sent once per filter it matches.
	UnionDuplicates bool
	// IgnoreIDsConditions: a filter with ids matches by ids alone (the
	// other conditions are ignored) in answers to REQs.
	IgnoreIDsConditions bool
	// TagPrefixMatch: in answers to REQs, a tag condition matches an event
	// with a tag of any letter whose value begins with one of its values.
	TagPrefixMatch bool
	// StoreEphemeral: ephemeral events are stored and returned like
	// regular ones.
	StoreEphemeral bool
	// NoOKForEphemeral: ephemeral events are delivered (and stored with
	// StoreEphemeral) but never answered OK.
	NoOKForEphemeral bool
	// DuplicateOKFalse: a duplicate EVENT is answered OK false
	// "duplicate: already have this event".
	DuplicateOKFalse bool
	// NoClosedForMalformed: a REQ whose filter does not parse gets no
	// answer at all.
	NoClosedForMalformed bool
	// LimitEndsSubscription: a filter whose initial answer filled its limit
	// ("limit":0 included) gets no live events (NIP-01: limit "MUST be
	// ignored afterwards").
	LimitEndsSubscription bool
	// BoundsExclusive: in answers to REQs, since and until exclude events
	// whose created_at equals them.
	BoundsExclusive bool
	// TiesByArrival: on equal created_at, the event that came first wins:
	// it is returned first, and of two versions of a replaceable or
	// addressable event it is kept (NIP-01: the lowest id "should be first",
	// "should be retained").
	TiesByArrival bool
}

// Stats counts what the relay saw and did.
type Stats struct {
	Connections           int // WebSocket connections accepted
	Messages              int // client messages received, all kinds
	Events                int // EVENT messages received
	Stored                int // events stored (not counting duplicates)
	Duplicates            int // EVENTs of an already stored event
	Dropped               int // OKed but not stored (DropEvery), or lost unanswered (LoseUnanswered)
	Refused               int // answered OK false (RefuseEvery, Verify, malformed, RateLimitAfter)
	RateLimited           int // EVENTs refused by RateLimitAfter (also counted in Refused)
	RateLimitedREQs       int // REQs answered CLOSED by RateLimitREQAfter
	OKs                   int // OK messages sent
	Unanswered            int // EVENTs never answered (NeverOK, NeverOKAfter)
	REQs                  int // REQ messages received
	Closes                int // CLOSE messages received
	QueryResults          int // events sent in answer to REQs (extras included)
	EOSEsWithheld         int // REQs answered without EOSE (NoEOSE, NoEOSEAfter)
	Deliveries            int // live deliveries sent (duplicates included)
	DeliveriesDropped     int
	DeliveriesDuplicated  int
	InvalidDeliveries     int  // live deliveries sent corrupted (InvalidDeliveriesEvery; duplicates included)
	WrongFilterDeliveries int  // deliveries to subscriptions not matched (WrongFilterDeliveriesEvery), before the other delivery knobs
	Garbage               int  // malformed frames sent
	AbruptCloses          int  // connections closed by CloseAfter
	Stalled               int  // messages read but never handled (StallAfter)
	Killed                bool // Kill was called (directly or by KillAfterEvents)
	ForeignOKs            int  // OKs sent for ids never received (ForeignOKEvery)
	UnsolicitedEvents     int  // EVENTs sent under subscription ids never opened (UnsolicitedEvents)
	EventsAfterClose      int  // EVENTs sent under a subscription id just closed (UnsolicitedEvents)
	EndlessEvents         int  // events sent into REQs by EndlessAnswers (not in QueryResults)
	ReplacedLiveEvents    int  // events sent for a replaced subscription (ReplacedLiveEvent)
}

// Relay is a running test relay. Its methods are safe for concurrent use.
type Relay struct {
	cfg      Config
	maxLimit int
	srv      *httptest.Server
	ctx      context.Context
	cancel   context.CancelFunc
	extraSK  string
	jobs     chan job
	workers  sync.WaitGroup

	mu       sync.RWMutex
	events   []*nostr.Event // newest first once sorted is true
	sorted   bool
	byID     map[string]struct{}
	received []string // ids of EVENTs received, in order
	conns    map[*conn]struct{}

	statsMu sync.Mutex
	stats   Stats

	eventSeq     atomic.Int64 // EVENTs that reached the knobs (RefuseEvery, DropEvery)
	eventMsgSeq  atomic.Int64 // EVENT messages received (NeverOKAfter, KillAfterEvents)
	msgSeq       atomic.Int64 // messages received, all kinds (StallAfter)
	sentSeq      atomic.Int64 // events sent (for InvalidEvery)
	deliverySeq  atomic.Int64
	broadcastSeq atomic.Int64 // events broadcast (WrongFilterDeliveriesEvery)
	okSeq        atomic.Int64 // OKs sent (ForeignOKEvery)
	connSeq      atomic.Int64 // connections, numbering UnsolicitedEvents' sub ids

	closeOnce sync.Once
	killOnce  sync.Once
}

// New starts a test relay on 127.0.0.1. Stop it with Close.
func New(cfg Config) *Relay {
	r := &Relay{
		cfg:      cfg,
		maxLimit: cfg.MaxLimit,
		byID:     map[string]struct{}{},
		conns:    map[*conn]struct{}{},
		extraSK:  gonostr.GeneratePrivateKey(),
	}
	if r.maxLimit <= 0 {
		r.maxLimit = DefaultMaxLimit
	}
	if r.cfg.RefuseReason == "" {
		r.cfg.RefuseReason = "blocked: refused by test relay"
	}
	if r.cfg.RateLimitReason == "" {
		r.cfg.RateLimitReason = "rate-limited: slow down"
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	if cfg.Workers > 0 {
		r.jobs = make(chan job, 1<<16)
		for i := 0; i < cfg.Workers; i++ {
			r.workers.Add(1)
			go r.worker()
		}
	}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serveHTTP))
	return r
}

// URL returns the relay's ws:// URL.
func (r *Relay) URL() string { return "ws" + strings.TrimPrefix(r.srv.URL, "http") }

// MaxLimit returns the per-filter cap the relay applies and announces.
func (r *Relay) MaxLimit() int { return r.maxLimit }

// Close disconnects every client abruptly, stops the workers and the
// listener. It is idempotent, and safe after Kill.
func (r *Relay) Close() {
	r.closeOnce.Do(func() {
		r.dropConns()
		r.srv.Close()
		r.workers.Wait()
	})
}

// Kill makes the relay die at once, as if its process were killed: every
// open connection is closed abruptly (TCP close, no close frame; frames
// still queued for sending are lost), the listener is closed so that new
// connections are refused, and the workers stop. It does not wait for the
// connections' goroutines, so it may be called from anywhere, including
// the relay's own handlers. The stored events and Stats remain readable.
// It is idempotent, and Close may still be called afterwards.
func (r *Relay) Kill() {
	r.killOnce.Do(func() {
		r.count(func(s *Stats) { s.Killed = true })
		r.srv.Listener.Close()
		r.dropConns()
	})
}

// dropConns closes every connection abruptly. Cancelling first means a
// connection registering after the snapshot sees it and closes itself
// (see serveHTTP); the connections not upgraded (yet: NIP-11, handshakes
// in progress) are closed last.
func (r *Relay) dropConns() {
	r.cancel()
	r.mu.RLock()
	for c := range r.conns {
		c.ws.CloseNow()
	}
	r.mu.RUnlock()
	r.srv.CloseClientConnections()
}

// Stats returns a snapshot of the counters.
func (r *Relay) Stats() Stats {
	r.statsMu.Lock()
	defer r.statsMu.Unlock()
	return r.stats
}

func (r *Relay) count(f func(s *Stats)) {
	r.statsMu.Lock()
	f(&r.stats)
	r.statsMu.Unlock()
}

// Stored returns a copy of the stored events, newest first.
func (r *Relay) Stored() []*nostr.Event { return r.snapshot() }

// snapshot returns a copy of the stored events, newest first.
func (r *Relay) snapshot() []*nostr.Event {
	r.mu.Lock()
	if !r.sorted && r.cfg.TiesByArrival {
		slices.SortStableFunc(r.events, func(a, b *nostr.Event) int { return cmp.Compare(b.CreatedAt, a.CreatedAt) })
	} else if !r.sorted {
		nostr.SortNewestFirst(r.events)
	}
	r.sorted = true
	out := make([]*nostr.Event, len(r.events))
	copy(out, r.events)
	r.mu.Unlock()
	return out
}

// Received returns the ids of all EVENTs received from clients, in order of
// receipt, whatever became of them (stored, dropped, refused, duplicate).
func (r *Relay) Received() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]string(nil), r.received...)
}

// Has reports whether an event with this id is stored.
func (r *Relay) Has(id string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	_, ok := r.byID[id]
	return ok
}

// Add stores events directly (no knobs apply) and delivers them to live
// subscriptions; it returns how many were new.
func (r *Relay) Add(evs ...*nostr.Event) int {
	n := 0
	for _, ev := range evs {
		if r.store(ev) {
			n++
			r.broadcast(ev)
		}
	}
	return n
}

// store adds ev unless present; reports whether it was new.
func (r *Relay) store(ev *nostr.Event) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.byID[ev.ID]; ok {
		return false
	}
	r.byID[ev.ID] = struct{}{}
	// NIP-01: a replaceable or addressable event replaces the older version
	// (on equal created_at the lower id stays); a version older than the
	// stored one is kept out of answers. KeepSuperseded keeps every version.
	if key, ok := rbverify.ReplaceKey(ev); ok && !r.cfg.KeepSuperseded {
		for i, old := range r.events {
			if k, _ := rbverify.ReplaceKey(old); k != key {
				continue
			}
			if old.CreatedAt > ev.CreatedAt || (old.CreatedAt == ev.CreatedAt && (old.ID < ev.ID || r.cfg.TiesByArrival)) {
				return true // accepted, but the newer version stays
			}
			r.events = append(r.events[:i], r.events[i+1:]...)
			break
		}
	}
	r.events = append(r.events, ev)
	r.sorted = false
	r.statsMu.Lock()
	r.stats.Stored++
	r.statsMu.Unlock()
	return true
}

func (r *Relay) serveHTTP(w http.ResponseWriter, req *http.Request) {
	if !strings.EqualFold(req.Header.Get("Upgrade"), "websocket") {
		if r.cfg.NoNIP11 || !strings.Contains(req.Header.Get("Accept"), "application/nostr+json") {
			http.NotFound(w, req)
			return
		}
		w.Header().Set("Content-Type", "application/nostr+json")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Allow-Headers", "*")
		w.Header().Set("Access-Control-Allow-Methods", "GET")
		doc := map[string]any{
			"name":           "relaybench testrelay",
			"description":    "in-memory misbehaving relay for relaybench tests",
			"software":       "relaybench-testrelay",
			"version":        "1",
			"supported_nips": []int{1, 11},
			"limitation": map[string]any{
				"max_limit":          r.maxLimit,
				"max_message_length": readLimit,
				"auth_required":      false,
				"payment_required":   false,
			},
		}
		for k, v := range r.cfg.NIP11 {
			doc[k] = v
		}
		json.NewEncoder(w).Encode(doc)
		return
	}
	if d := r.cfg.ConnectDelay; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-req.Context().Done():
		case <-r.ctx.Done():
		}
		t.Stop()
	}
	ws, err := websocket.Accept(w, req, &websocket.AcceptOptions{
		CompressionMode:    websocket.CompressionDisabled,
		InsecureSkipVerify: true,
	})
	if err != nil {
		return
	}
	ws.SetReadLimit(readLimit)
	ctx, cancel := context.WithCancel(r.ctx)
	c := &conn{
		r:      r,
		ws:     ws,
		ctx:    ctx,
		cancel: cancel,
		out:    make(chan []byte, 4096),
		flush:  make(chan struct{}),
		subs:   map[string]*sub{},
	}
	if r.cfg.OKDelay > 0 {
		c.okq = make(chan okItem, 1<<14)
	}
	r.mu.Lock()
	if r.ctx.Err() != nil { // closed or killed during the handshake
		r.mu.Unlock()
		cancel()
		ws.CloseNow()
		return
	}
	r.conns[c] = struct{}{}
	r.mu.Unlock()
	r.count(func(s *Stats) { s.Connections++ })
	defer func() {
		r.mu.Lock()
		delete(r.conns, c)
		r.mu.Unlock()
		cancel()
		ws.CloseNow()
	}()
	c.run()
}

const readLimit = 1 << 22

// conn is one client connection. All frames go out through c.out, written
// by one goroutine, so frame counting (GarbageEvery) is exact.
type conn struct {
	r      *Relay
	ws     *websocket.Conn
	ctx    context.Context
	cancel context.CancelFunc
	out    chan []byte
	okq    chan okItem
	flush  chan struct{} // closed to make the writer send what is queued and stop

	// Counted by the reading goroutine only (RateLimitAfter,
	// RateLimitREQAfter, NoEOSEAfter).
	events, reqs int

	mu   sync.Mutex
	subs map[string]*sub
}

// sub is one subscription. Until its stored results are sent it is not
// live: events arriving meanwhile wait in pending, then are delivered after
// EOSE unless they were among the results.
type sub struct {
	filters []nostr.Filter
	live    bool
	pending []*nostr.Event
	alias   string // SameIDNoReplace: the id a displaced subscription delivers under
}

type okItem struct {
	at  time.Time
	msg []byte
}

// job is one received EVENT on its way to its answer.
type job struct {
	c        *conn
	id       string       // the event's id, as far as it could be read
	ev       *nostr.Event // nil if malformed
	received time.Time
	silent   bool // NeverOKAfter: never answer it
}

func (c *conn) run() {
	var wg sync.WaitGroup
	wg.Add(1)
	writerDone := make(chan struct{})
	go func() { defer wg.Done(); defer close(writerDone); c.writer() }()
	if c.okq != nil {
		wg.Add(1)
		go func() { defer wg.Done(); c.okSender() }()
	}
	defer wg.Wait()
	defer c.cancel()
	received := 0
	for {
		_, data, err := c.ws.Read(c.ctx)
		if err != nil {
			return
		}
		received++
		c.r.count(func(s *Stats) { s.Messages++ })
		if n := c.r.cfg.StallAfter; n > 0 && c.r.msgSeq.Add(1) > int64(n) {
			// Hang: neither handle this message nor read any other from
			// this connection, but keep it open.
			c.r.count(func(s *Stats) { s.Stalled++ })
			<-c.ctx.Done()
			return
		}
		if c.r.cfg.CloseAfter > 0 && received >= c.r.cfg.CloseAfter {
			c.r.count(func(s *Stats) { s.AbruptCloses++ })
			// Answers already queued go out first; the Nth message is not
			// answered and no close frame is sent.
			close(c.flush)
			<-writerDone
			c.ws.CloseNow()
			return
		}
		c.handle(data)
		if received == 1 && c.r.cfg.UnsolicitedEvents {
			c.unsolicited(fmt.Sprintf("unsolicited-%d", c.r.connSeq.Add(1)))
		}
	}
}

func (c *conn) writer() {
	n := 0
	write := func(m []byte) bool {
		if err := c.ws.Write(c.ctx, websocket.MessageText, m); err != nil {
			c.cancel()
			return false
		}
		n++
		if g := c.r.cfg.GarbageEvery; g > 0 && n%g == 0 {
			junk := garbage[(n/g-1)%len(garbage)]
			c.r.count(func(s *Stats) { s.Garbage++ }) // counted before the client can see it
			if err := c.ws.Write(c.ctx, websocket.MessageText, []byte(junk)); err != nil {
				c.cancel()
				return false
			}
		}
		return true
	}
	for {
		select {
		case m := <-c.out:
			if !write(m) {
				return
			}
		case <-c.flush:
			for {
				select {
				case m := <-c.out:
					if !write(m) {
						return
					}
				default:
					return
				}
			}
		case <-c.ctx.Done():
			return
		}
	}
}

// garbage are the malformed frames GarbageEvery sends, in turn.
var garbage = []string{`["OK",`, `this is not json`, `["EOSE"]`}

func (c *conn) send(m []byte) {
	select {
	case c.out <- m:
	case <-c.ctx.Done():
	}
}

func (c *conn) okSender() {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		select {
		case it := <-c.okq:
			if d := time.Until(it.at); d > 0 {
				t.Reset(d)
				select {
				case <-t.C:
				case <-c.ctx.Done():
					return
				}
			}
			c.send(it.msg)
		case <-c.ctx.Done():
			return
		}
	}
}

func (c *conn) notice(msg string) {
	b, _ := json.Marshal([]string{"NOTICE", msg})
	c.send(b)
}

func (c *conn) handle(data []byte) {
	var msg []json.RawMessage
	if err := json.Unmarshal(data, &msg); err != nil || len(msg) == 0 {
		c.notice("error: could not parse message")
		return
	}
	var label string
	if err := json.Unmarshal(msg[0], &label); err != nil {
		c.notice("error: message label is not a string")
		return
	}
	switch label {
	case "EVENT":
		c.handleEvent(msg)
	case "REQ":
		c.handleReq(msg)
	case "CLOSE":
		c.r.count(func(s *Stats) { s.Closes++ })
		var id string
		if len(msg) >= 2 && json.Unmarshal(msg[1], &id) == nil {
			c.mu.Lock()
			delete(c.subs, id)
			c.mu.Unlock()
			if c.r.cfg.UnsolicitedEvents {
				c.r.count(func(s *Stats) { s.EventsAfterClose++ })
				c.sendEvent(id, c.r.extras(nil, 1)[0])
			}
		}
	default:
		c.notice("error: unknown message type " + label)
	}
}

func (c *conn) handleEvent(msg []json.RawMessage) {
	received := time.Now()
	c.r.count(func(s *Stats) { s.Events++ })
	k := int(c.r.eventMsgSeq.Add(1))
	if n := c.r.cfg.KillAfterEvents; n > 0 && k >= n {
		c.r.Kill()
		return
	}
	c.events++
	j := job{c: c, received: received}
	j.silent = c.r.cfg.NeverOKAfter > 0 && k > c.r.cfg.NeverOKAfter
	if len(msg) < 2 {
		c.notice("error: EVENT without an event")
		return
	}
	ev, err := nostr.ParseEvent(msg[1])
	if err != nil {
		var probe struct {
			ID string `json:"id"`
		}
		json.Unmarshal(msg[1], &probe)
		j.id = probe.ID
		c.r.count(func(s *Stats) { s.Refused++ })
		j.answer(false, "invalid: "+err.Error())
		return
	}
	j.id, j.ev = ev.ID, ev
	c.r.mu.Lock()
	c.r.received = append(c.r.received, ev.ID)
	c.r.mu.Unlock()
	if n := c.r.cfg.RateLimitAfter; n > 0 && c.events > n {
		c.r.count(func(s *Stats) { s.Refused++; s.RateLimited++ })
		j.answer(false, c.r.cfg.RateLimitReason)
		return
	}
	if c.r.jobs != nil {
		select {
		case c.r.jobs <- j:
		case <-c.ctx.Done():
		}
		return
	}
	c.r.process(j)
}

func (r *Relay) worker() {
	defer r.workers.Done()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		select {
		case j := <-r.jobs:
			if r.cfg.ProcessingTime > 0 {
				t.Reset(r.cfg.ProcessingTime)
				select {
				case <-t.C:
				case <-r.ctx.Done():
					return
				}
			}
			r.process(j)
		case <-r.ctx.Done():
			return
		}
	}
}

// process applies the knobs to one received, well-formed event and answers
// it.
func (r *Relay) process(j job) {
	ev := j.ev
	if r.cfg.Verify {
		if reason := verify(ev); reason != "" {
			r.count(func(s *Stats) { s.Refused++ })
			j.answer(false, reason)
			return
		}
	}
	n := int(r.eventSeq.Add(1))
	if r.cfg.RefuseEvery > 0 && n%r.cfg.RefuseEvery == 0 {
		r.count(func(s *Stats) { s.Refused++ })
		j.answer(false, r.cfg.RefuseReason)
		return
	}
	lost := r.cfg.LoseUnanswered && (r.cfg.NeverOK || j.silent)
	if lost || r.cfg.DropEvery > 0 && n%r.cfg.DropEvery == 0 {
		r.count(func(s *Stats) { s.Dropped++ })
		j.answer(true, "")
		return
	}
	if ephemeral(ev) && !r.cfg.StoreEphemeral {
		r.broadcast(ev)
		j.answerEphemeral()
		return
	}
	if !r.store(ev) {
		r.count(func(s *Stats) { s.Duplicates++ })
		j.answer(!r.cfg.DuplicateOKFalse, "duplicate: already have this event")
		return
	}
	r.broadcast(ev)
	if ephemeral(ev) {
		j.answerEphemeral()
		return
	}
	j.answer(true, "")
}

func ephemeral(ev *nostr.Event) bool { return ev.Kind >= 20000 && ev.Kind < 30000 }

// answerEphemeral answers an ephemeral event OK true, unless
// NoOKForEphemeral.
func (j *job) answerEphemeral() {
	if j.c.r.cfg.NoOKForEphemeral {
		j.c.r.count(func(s *Stats) { s.Unanswered++ })
		return
	}
	j.answer(true, "")
}

// limitZero reports whether a filter's JSON has "limit":0 (nostr.Filter
// cannot tell it from no limit).
func limitZero(raw json.RawMessage) bool {
	var f struct {
		Limit *int `json:"limit"`
	}
	return json.Unmarshal(raw, &f) == nil && f.Limit != nil && *f.Limit == 0
}

// unfilled keeps the filters without a limit or whose limit results did
// not fill (LimitEndsSubscription).
func unfilled(filters []nostr.Filter, results []*nostr.Event) []nostr.Filter {
	var out []nostr.Filter
	for i := range filters {
		n := 0
		for _, ev := range results {
			if filters[i].Matches(ev) {
				n++
			}
		}
		if filters[i].Limit == 0 || n < filters[i].Limit {
			out = append(out, filters[i])
		}
	}
	return out
}

// match is Filter.Matches, bent by IgnoreIDsConditions, TagPrefixMatch and
// BoundsExclusive.
func (r *Relay) match(f *nostr.Filter, ev *nostr.Event) bool {
	if r.cfg.BoundsExclusive && (f.Since != nil && *f.Since == ev.CreatedAt || f.Until != nil && *f.Until == ev.CreatedAt) {
		return false
	}
	if r.cfg.IgnoreIDsConditions && len(f.IDs) > 0 {
		return slices.Contains(f.IDs, ev.ID)
	}
	if !r.cfg.TagPrefixMatch || len(f.Tags) == 0 {
		return f.Matches(ev)
	}
	g := *f
	g.Tags = nil
	if !g.Matches(ev) {
		return false
	}
	for _, values := range f.Tags {
		if !slices.ContainsFunc(ev.Tags, func(t nostr.Tag) bool {
			return len(t) >= 2 && slices.ContainsFunc(values, func(v string) bool { return strings.HasPrefix(t[1], v) })
		}) {
			return false
		}
	}
	return true
}

func verify(ev *nostr.Event) string {
	if !ev.CheckID() {
		return "invalid: event id does not match its content"
	}
	g := toGo(ev)
	if ok, err := g.CheckSignature(); err != nil || !ok {
		return "invalid: bad signature"
	}
	return ""
}

// answer sends the OK for j, after OKDelay, unless NeverOK or NeverOKAfter
// says it goes unanswered.
func (j *job) answer(ok bool, reason string) {
	c := j.c
	if c.r.cfg.NeverOK || j.silent {
		c.r.count(func(s *Stats) { s.Unanswered++ })
		return
	}
	b, _ := json.Marshal([]any{"OK", j.id, ok, reason})
	c.r.count(func(s *Stats) { s.OKs++ })
	j.sendOK(b)
	if n := c.r.cfg.ForeignOKEvery; n > 0 && c.r.okSeq.Add(1)%int64(n) == 0 {
		c.r.count(func(s *Stats) { s.ForeignOKs++ })
		j.sendOK([]byte(`["OK","` + randomID() + `",true,""]`))
	}
}

// sendOK sends an OK now, or after OKDelay.
func (j *job) sendOK(b []byte) {
	c := j.c
	if c.okq == nil {
		c.send(b)
		return
	}
	select {
	case c.okq <- okItem{at: j.received.Add(c.r.cfg.OKDelay), msg: b}:
	case <-c.ctx.Done():
	}
}

// randomID is a random event id: 32 random bytes in hex.
func randomID() string {
	var b [32]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// unsolicited sends one valid event under subID, which the client never
// opened (UnsolicitedEvents).
func (c *conn) unsolicited(subID string) {
	c.r.count(func(s *Stats) { s.UnsolicitedEvents++ })
	c.sendEvent(subID, c.r.extras(nil, 1)[0])
}

func (c *conn) handleReq(msg []json.RawMessage) {
	c.r.count(func(s *Stats) { s.REQs++ })
	c.reqs++
	var subID string
	if len(msg) < 2 || json.Unmarshal(msg[1], &subID) != nil {
		c.notice("error: REQ without a subscription id")
		return
	}
	if n := c.r.cfg.RateLimitREQAfter; n > 0 && c.reqs > n || c.r.cfg.RefuseAllREQs {
		c.mu.Lock()
		delete(c.subs, subID)
		c.mu.Unlock()
		c.r.count(func(s *Stats) { s.RateLimitedREQs++ })
		b, _ := json.Marshal([]string{"CLOSED", subID, c.r.cfg.RateLimitReason})
		c.send(b)
		return
	}
	filters := make([]nostr.Filter, 0, len(msg)-2)
	var stored []nostr.Filter // the filters answered from the store: not "limit":0
	for _, raw := range msg[2:] {
		var f nostr.Filter
		if err := json.Unmarshal(raw, &f); err != nil {
			if c.r.cfg.NoClosedForMalformed {
				return
			}
			b, _ := json.Marshal([]string{"CLOSED", subID, "error: bad filter: " + err.Error()})
			c.send(b)
			return
		}
		filters = append(filters, f)
		if !limitZero(raw) {
			stored = append(stored, f)
		} else if c.r.cfg.LimitEndsSubscription {
			filters = filters[:len(filters)-1]
		}
	}
	// Register before the snapshot so that nothing stored meanwhile is
	// missed; such events wait in pending until the results are out.
	sb := &sub{filters: filters}
	c.mu.Lock()
	if old := c.subs[subID]; old != nil && c.r.cfg.SameIDNoReplace {
		old.alias = subID
		c.subs[fmt.Sprintf("%s\x00%p", subID, old)] = old
	}
	old := c.subs[subID]
	c.subs[subID] = sb
	c.mu.Unlock()
	if old != nil && c.r.cfg.ReplacedLiveEvent {
		c.replacedLive(subID, old.filters, filters)
	}

	if c.r.cfg.EndlessAnswers {
		go c.endless(subID, sb, filters)
		return
	}
	results := c.r.query(stored)
	if lim := firstLimit(stored); c.r.cfg.FirstFilterLimit && len(stored) > 1 && lim > 0 && len(results) > lim {
		results = results[:lim]
	}
	if c.r.cfg.LimitEndsSubscription {
		c.mu.Lock()
		sb.filters = unfilled(sb.filters, results)
		c.mu.Unlock()
	}
	sent := make(map[string]bool, len(results))
	for _, ev := range results {
		sent[ev.ID] = true
		c.sendEvent(subID, ev)
	}
	for _, ev := range c.r.extras(filters, c.r.cfg.ExtraEvents) {
		c.sendEvent(subID, ev)
	}
	c.r.count(func(s *Stats) { s.QueryResults += len(results) + c.r.cfg.ExtraEvents })
	if c.r.cfg.NoEOSE || c.r.cfg.NoEOSEAfter > 0 && c.reqs > c.r.cfg.NoEOSEAfter {
		c.r.count(func(s *Stats) { s.EOSEsWithheld++ })
	} else {
		b, _ := json.Marshal([]string{"EOSE", subID})
		c.send(b)
	}
	c.mu.Lock()
	pending := sb.pending
	sb.pending, sb.live = nil, true
	c.mu.Unlock()
	for _, ev := range pending {
		if !sent[ev.ID] {
			c.r.deliver(c, subID, ev)
		}
	}
}

// firstLimit is the limit of the first of filters (0: none, or no filter).
func firstLimit(filters []nostr.Filter) int {
	if len(filters) == 0 {
		return 0
	}
	return filters[0].Limit
}

// replacedLive sends under subID the newest stored event that matches one
// of old and none of filters (ReplacedLiveEvent), if there is one.
func (c *conn) replacedLive(subID string, old, filters []nostr.Filter) {
	matches := func(fs []nostr.Filter, ev *nostr.Event) bool {
		for i := range fs {
			if fs[i].Matches(ev) {
				return true
			}
		}
		return false
	}
	for _, ev := range c.r.snapshot() {
		if matches(old, ev) && !matches(filters, ev) {
			c.r.count(func(s *Stats) { s.ReplacedLiveEvents++ })
			c.sendEvent(subID, ev)
			return
		}
	}
}

// endless streams the results of a REQ (EndlessAnswers), pre-encoded once
// and sent again and again, until sb is closed or replaced, or the
// connection ends. It never sends EOSE; sb is live from the start.
func (c *conn) endless(subID string, sb *sub, filters []nostr.Filter) {
	pool := c.r.query(filters)
	c.mu.Lock()
	pending := sb.pending
	sb.pending, sb.live = nil, true
	c.mu.Unlock()
	for _, ev := range pending {
		c.r.deliver(c, subID, ev)
	}
	if len(pool) == 0 {
		return
	}
	frames := make([][]byte, len(pool))
	for i, ev := range pool {
		b := append([]byte(`["EVENT",`), nostr.AppendJSONString(nil, subID)...)
		b = append(c.r.appendEvent(append(b, ','), ev), ']')
		frames[i] = b
	}
	for i := 0; ; i++ {
		c.mu.Lock()
		open := c.subs[subID] == sb
		c.mu.Unlock()
		if !open || c.ctx.Err() != nil {
			return
		}
		c.r.count(func(s *Stats) { s.EndlessEvents++ })
		c.send(frames[i%len(frames)])
	}
}

// query returns the union of each filter's results, newest first, each
// filter capped at min(its limit, MaxLimit).
func (r *Relay) query(filters []nostr.Filter) []*nostr.Event {
	all := r.snapshot()
	seen := map[string]bool{}
	var out []*nostr.Event
	for i := range filters {
		f := &filters[i]
		limit := r.maxLimit
		if f.Limit > 0 && f.Limit < limit {
			limit = f.Limit
		}
		if r.cfg.IgnoreLimit {
			limit = -1
		}
		n := 0
		for _, ev := range all {
			if n == limit {
				break
			}
			if r.match(f, ev) {
				n++
				if !seen[ev.ID] || r.cfg.UnionDuplicates {
					seen[ev.ID] = true
					out = append(out, ev)
				}
			}
		}
	}
	nostr.SortNewestFirst(out)
	return out
}

// extras returns n valid events matching none of filters: stored ones
// first, then freshly signed ones.
func (r *Relay) extras(filters []nostr.Filter, n int) []*nostr.Event {
	if n <= 0 {
		return nil
	}
	matchesAny := func(ev *nostr.Event) bool {
		for i := range filters {
			if filters[i].Matches(ev) {
				return true
			}
		}
		return false
	}
	var out []*nostr.Event
	r.mu.RLock()
	for _, ev := range r.events {
		if len(out) == n {
			break
		}
		if !matchesAny(ev) {
			out = append(out, ev)
		}
	}
	r.mu.RUnlock()
	kind := 1
	for i := range filters {
		for _, k := range filters[i].Kinds {
			if k >= kind {
				kind = k + 1
			}
		}
	}
	for i := 0; len(out) < n; i++ {
		g := gonostr.Event{
			CreatedAt: gonostr.Now(),
			Kind:      kind,
			Tags:      gonostr.Tags{{"t", "testrelay-extra"}},
			Content:   fmt.Sprintf("extra event %d, outside the filter", i),
		}
		g.Sign(r.extraSK)
		out = append(out, fromGo(&g))
	}
	return out
}

// sendEvent sends ["EVENT",subID,ev], corrupting it if InvalidEvery says so.
func (c *conn) sendEvent(subID string, ev *nostr.Event) {
	if n := c.r.cfg.InvalidEvery; n > 0 {
		if k := c.r.sentSeq.Add(1); k%int64(n) == 0 {
			ev = corrupt(ev, (k/int64(n))%2 == 1)
		}
	}
	b := make([]byte, 0, 256+len(ev.Content))
	b = append(b, `["EVENT",`...)
	b = nostr.AppendJSONString(b, subID)
	b = append(b, ',')
	b = c.r.appendEvent(b, ev)
	b = append(b, ']')
	c.send(b)
}

// appendEvent appends ev's JSON as the relay sends it (Config.SortKeys).
func (r *Relay) appendEvent(b []byte, ev *nostr.Event) []byte {
	if !r.cfg.SortKeys {
		return ev.AppendJSON(b)
	}
	b = append(b, `{"content":`...)
	b = nostr.AppendJSONString(b, ev.Content)
	b = append(b, `,"created_at":`...)
	b = strconv.AppendInt(b, ev.CreatedAt, 10)
	b = append(b, `,"id":"`...)
	b = append(b, ev.ID...)
	b = append(b, `","kind":`...)
	b = strconv.AppendInt(b, int64(ev.Kind), 10)
	b = append(b, `,"pubkey":"`...)
	b = append(b, ev.PubKey...)
	b = append(b, `","sig":"`...)
	b = append(b, ev.Sig...)
	b = append(b, `","tags":`...)
	b = nostr.AppendTags(b, ev.Tags)
	return append(b, '}')
}

// corrupt returns a copy of ev that fails verification: with a wrong id
// (content changed after signing) if badID, else with a wrong signature.
func corrupt(ev *nostr.Event, badID bool) *nostr.Event {
	bad := *ev
	if badID {
		bad.Content += " (changed after signing)"
	} else {
		bad.Sig = flipHex(bad.Sig)
	}
	return &bad
}

func flipHex(s string) string {
	if s == "" {
		return s
	}
	last := s[len(s)-1]
	repl := byte('0')
	if last == '0' {
		repl = '1'
	}
	return s[:len(s)-1] + string(repl)
}

// broadcast delivers ev to every live subscription it matches (and, if
// WrongFilterDeliveriesEvery says so, to every one it does not match).
func (r *Relay) broadcast(ev *nostr.Event) {
	wrong := false
	if n := r.cfg.WrongFilterDeliveriesEvery; n > 0 {
		wrong = r.broadcastSeq.Add(1)%int64(n) == 0
	}
	type target struct {
		c  *conn
		id string
	}
	var targets []target
	misfits := 0
	r.mu.RLock()
	for c := range r.conns {
		c.mu.Lock()
		for id, sb := range c.subs {
			if sb.alias != "" {
				id = sb.alias
			}
			switch {
			case sb.matches(ev):
				if sb.live {
					targets = append(targets, target{c, id})
				} else {
					sb.pending = append(sb.pending, ev)
				}
			case wrong && sb.live:
				targets = append(targets, target{c, id})
				misfits++
			}
		}
		c.mu.Unlock()
	}
	r.mu.RUnlock()
	if misfits > 0 {
		r.count(func(s *Stats) { s.WrongFilterDeliveries += misfits })
	}
	for _, t := range targets {
		r.deliver(t.c, t.id, ev)
	}
}

// matches reports whether ev matches any of the subscription's filters.
func (sb *sub) matches(ev *nostr.Event) bool {
	for i := range sb.filters {
		if sb.filters[i].Matches(ev) {
			return true
		}
	}
	return false
}

// deliver sends one live event to one subscription, applying the delivery
// knobs (DropDeliveriesEvery, DuplicateDeliveriesEvery,
// InvalidDeliveriesEvery, DelayDeliveries).
func (r *Relay) deliver(c *conn, subID string, ev *nostr.Event) {
	k := int(r.deliverySeq.Add(1))
	if n := r.cfg.DropDeliveriesEvery; n > 0 && k%n == 0 {
		r.count(func(s *Stats) { s.DeliveriesDropped++ })
		return
	}
	times := 1
	if n := r.cfg.DuplicateDeliveriesEvery; n > 0 && k%n == 0 {
		times = 2
		r.count(func(s *Stats) { s.DeliveriesDuplicated++ })
	}
	r.count(func(s *Stats) { s.Deliveries += times })
	if n := r.cfg.InvalidDeliveriesEvery; n > 0 && k%n == 0 {
		ev = corrupt(ev, (k/n)%2 == 0)
		r.count(func(s *Stats) { s.InvalidDeliveries += times })
	}
	send := func() {
		for i := 0; i < times; i++ {
			c.sendEvent(subID, ev)
		}
	}
	d := r.cfg.DelayDeliveries
	if d <= 0 {
		send()
		return
	}
	go func() {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
			send()
		case <-c.ctx.Done():
		}
	}()
}

func toGo(ev *nostr.Event) gonostr.Event {
	tags := make(gonostr.Tags, len(ev.Tags))
	for i, t := range ev.Tags {
		tags[i] = gonostr.Tag(t)
	}
	return gonostr.Event{ID: ev.ID, PubKey: ev.PubKey, CreatedAt: gonostr.Timestamp(ev.CreatedAt),
		Kind: ev.Kind, Tags: tags, Content: ev.Content, Sig: ev.Sig}
}

func fromGo(g *gonostr.Event) *nostr.Event {
	tags := make([]nostr.Tag, len(g.Tags))
	for i, t := range g.Tags {
		tags[i] = nostr.Tag(t)
	}
	return &nostr.Event{ID: g.ID, PubKey: g.PubKey, CreatedAt: int64(g.CreatedAt),
		Kind: g.Kind, Tags: tags, Content: g.Content, Sig: g.Sig}
}
