package workload

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/flagcheck"
	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/internal/rlimit"
	"github.com/relaybench/relaybench/internal/sysinfo"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/schedule"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/wire"
)

// Subscription filter kinds of the subscribe workload.
const (
	FilterTag    = "tag"    // {"#t": k channels, since}
	FilterAuthor = "author" // {"authors": k authors, since}
	FilterKind   = "kind"   // {"kinds": [1], since}: every event reaches every such subscriber
	FilterMix    = "mix"    // subscriber i uses tag, author, kind for i mod 3
)

func init() {
	Declare[SubscribeOptions](Decl{Name: "subscribe", Brief: "but as many fresh events as --events", Input: NeedsKeys, Adds: true,
		Summary: "Fan-out: subscribers hold live REQs while publishers send fresh events; every delivery timed and checked."})
}

// SubscribeOptions configure the subscribe (fan-out) workload: Subscribers
// connections hold live REQs while Publishers connections publish fresh
// events carrying one of Channels channel tags.
type SubscribeOptions struct {
	Base        `set:"timeout=10s" set:"timeout_help=How long an EVENT may wait for its OK, and a REQ for its EOSE."`
	Name        string `kong:"-" default:"subscribe"` // phase name
	Subscribers int    `name:"sub-count" aliases:"subscribers" default:"10" help:"Subscriber connections, one live REQ each (alias --subscribers; reference: -sub-count)."`
	Publishers  int    `default:"2" help:"Publisher connections."`
	Channels    int    `default:"10" help:"Distinct channel tags (t) the events are spread over."`
	// Overlap is how many channels (tag filter) or authors (author filter)
	// each subscriber follows; above 1 an event reaches several
	// subscribers.
	Overlap int    `default:"2" help:"Channels (or authors) each subscriber follows: above 1, one event reaches several subscribers."`
	Filter  string `default:"mix" enum:"tag,author,kind,mix" help:"Subscription filters: tag (#t channels), author, kind (every event reaches every subscriber), or mix (one of each in turn)."`
	// Events is the fresh events to pre-sign and publish (0: EventCount).
	Events  int `default:"0" help:"Fresh events to publish (default: rate×duration, else 10000)."`
	Size    int `default:"1024" help:"Content bytes of each fresh event."`
	Authors int `kong:"-"` // corpus keys signing the fresh events (default min(50, corpus authors))
	// Rate is the total target publish rate in events/s, spread over the
	// publishers, open loop (send times are scheduled; latency and lateness
	// are also measured from the intended time). 0: closed loop (Mode).
	Rate     float64       `default:"0" help:"Total publish rate in events/s, open loop; 0: closed loop (--mode)."`
	Mode     string        `default:"wait" enum:"wait,pipeline" help:"Closed loop: wait (one EVENT in flight per publisher) or pipeline (--window)."`
	Window   int           `default:"0" help:"Unacknowledged EVENTs allowed per publisher (pipeline: 64; open loop: 1024)."`
	Duration time.Duration `name:"sub-duration" aliases:"duration" default:"0s" help:"Stop publishing after this (0: when all events are sent) (alias --duration; reference: -sub-duration)."`
	// Grace is how long to wait after the last OK for deliveries still on
	// their way before the missing ones are counted.
	Grace time.Duration `default:"2s" zero:"keep" help:"Wait this long after the last OK for late deliveries before counting the missing ones."`
	// SourceAddrs are the local addresses the connections are spread over
	// (round robin); nil: one address, or 127.0.0.1…127.0.0.K on their own
	// when a loopback relay needs more connections than one address has
	// ephemeral ports for (see scale.go).
	SourceAddrs []net.IP `kong:"-"`
	// Segment runs only this execution segment's share (subscribe_segment.go):
	// it needs Rate and StartAt. StartAt, also without Segment, starts the
	// open-loop schedule at that wall-clock time and derives the fresh
	// events' nonce and created_at from it.
	Segment Segment   `kong:"-"`
	StartAt time.Time `kong:"-"`

	fresh      *Fresh   // pre-signed events (sweep signs its own); nil: sign here
	flags      subFlags // the command's flags, for notes and reasons (zero: subscribe's)
	onDelivery func()   // test hook: called on the reader goroutine before each delivery is handled
}

// EventCount is the number of fresh events the options publish: Events,
// else rate×duration, else 10,000.
func (o SubscribeOptions) EventCount() int {
	switch {
	case o.Events > 0:
		return o.Events
	case o.Rate > 0 && o.Duration > 0:
		return max(1, int(o.Rate*o.Duration.Seconds()))
	}
	return 10000
}

// Run runs the fan-out workload on env's relay, with fresh events signed
// by env's corpus keys.
func (o SubscribeOptions) Run(ctx context.Context, env Env) ([]results.Phase, error) {
	applyDefaults(&o)
	total := int64(o.Segment.Share(o.EventCount())) // a segment publishes its share
	o.fromEnv(env, progress.Counting(fmt.Sprintf("Publishing %s to %s", numfmt.Count(total, "event"), numfmt.Count(o.Subscribers, "subscriber")), "Published", "event", "events", total), total)
	return onePhase(Subscribe(ctx, env.URL, env.Corpus, o))
}

func (o *SubscribeOptions) defaults() error {
	if o.Overlap <= 0 {
		o.Overlap = 1
	}
	applyDefaults(o)
	switch o.Filter {
	case FilterTag, FilterAuthor, FilterKind, FilterMix:
	default:
		return fmt.Errorf("subscribe filter %q: want tag, author, kind or mix", o.Filter)
	}
	if o.Mode != ModeWait && o.Mode != ModePipeline {
		return fmt.Errorf("publish mode %q: want %q or %q", o.Mode, ModeWait, ModePipeline)
	}
	if o.Window <= 0 {
		o.Window = 64
		if o.Rate > 0 {
			o.Window = 1024
		}
	}
	o.Events = o.EventCount()
	if o.Grace <= 0 {
		o.Grace = 2 * time.Second
	}
	o.Overlap = min(o.Overlap, o.Channels)
	return nil
}

// ---------------------------------------------------------------------------
// Subscribe.
//
// Accounting. Every requested subscription ends in one outcome (OpSub):
// accepted at its EOSE, refused on CLOSED, timed out without EOSE within
// Timeout, connection lost, or cancelled. Every event of the plan ends in one
// outcome (OpEvent, from the live engine). For every event the relay
// accepted, each subscription whose filter matches it is owed one delivery
// (OpDelivery):
//   - accepted: a valid, matching first copy arrived within the grace period;
//   - not run ("subscription not open"): the subscription never opened;
//   - connection lost: the subscriber's connection dropped first;
//   - not run (closed by the relay): the relay ended the subscription first;
//   - cancelled: the user stopped the run first;
//   - timed out: none of these, and no valid copy came within the grace
//     period; the relay failed to deliver it (NIP-01: live events matching an
//     open subscription are sent), so it also counts as missing in the
//     verification.
//
// Every event a subscriber receives goes through the verifier (one
// verify.Stream per subscription; a byte-identical copy of what relaybench
// published needs no signature check). Invalid, non-matching and duplicate
// copies are counted in the verification and credited nowhere: not in
// "deliveries", deliveries/s or the deliver latency.

const (
	whySubNotOpen = "subscription not open"
	whySubClosed  = "subscription closed by the relay"
	whyNoSub      = "no subscription open"
	// whyBehindRelay, whyBehindClient: an open-loop event due before
	// --sub-duration (%s: the command's flag) ended that was still unsent
	// then (requested work that did not run), its publisher held back by
	// its in-flight window full of EVENTs awaiting the relay's OK or by
	// writes the relay did not read (work the relay prevented: exit 4), or
	// late with room in the window (the client's limit: exit 1).
	whyBehindRelay  = "relay-limited: not sent within 1s after %s ended (--rate %s/s): the in-flight window (--window) was full of EVENTs awaiting the relay's OK, or the relay did not read what was written"
	whyBehindClient = outcome.WhyClientLimited + " not sent within 1s after %s ended (--rate %s/s): the client sent late with room in its in-flight window (its CPU or timer wake-ups, not the relay)"
)

// subFlags are the flags of the command that ran the fan-out workload, as
// its notes and reasons name them: subscribe's, or sweep's.
//
// A flag a note can name inside run --workloads (or compare's) is named as
// its command's: run runs the workload with its command's defaults and has
// no such flag, or one of the same name for something else (run's --events
// is the corpus size). The others (duration, and --rate and --window in
// the notes and reasons of an open loop) appear only when --rate or the
// duration is set, which run never does (TestRunDefaultsNameNoBareFlag).
type subFlags struct {
	count    string // the command and flag asking for more subscribers
	events   string // the command and flag asking for more fresh events
	grace    string // the command and flag of the wait for late deliveries
	duration string // the flag that stops publishing
}

// flagNames are o's flags: subscribe's unless set (sweep).
func (o SubscribeOptions) flagNames() subFlags {
	return subFlags{count: cmp.Or(o.flags.count, "the subscribe command's --subscribers"),
		events:   cmp.Or(o.flags.events, "the subscribe command's --events"),
		grace:    cmp.Or(o.flags.grace, "the subscribe command's --grace"),
		duration: cmp.Or(o.flags.duration, "--sub-duration")}
}

// behindWhy is the why of the events a publisher left unsent when the
// duration ended: whyBehindRelay or whyBehindClient, naming the flag and
// the rate.
func (o SubscribeOptions) behindWhy(relayLimited bool) string {
	if relayLimited {
		return fmt.Sprintf(whyBehindRelay, o.flagNames().duration, fmtRate(o.Rate))
	}
	return fmt.Sprintf(whyBehindClient, o.flagNames().duration, fmtRate(o.Rate))
}

// subscriber is one connection holding one live REQ. Its callbacks run on
// the connection's reader goroutine; mu lets the workload read it.
type subscriber struct {
	// What a delivery touches comes first, together (see warm): the first
	// two cache lines.
	stopped atomic.Bool  // deliveries after this are not counted
	state   outcome.Kind // the subscription's outcome; None while opening
	col     int32        // its column in the run's receipt times and the checks' grid
	next    int          // the fresh event after the last one delivered (reader goroutine only)
	run     *subRun      // the run it is part of (its deliveries' wire.KnownHandler)
	mu      sync.Mutex
	have    int64         // of the accepted events, received
	acc     []bool        // accepted events (set once publishing is over)
	stream  verify.Stream // on the grid; used on the reader goroutine only
	v       results.Verification

	i        int
	kind     string
	filter   nostr.Filter
	sub      *wire.Sub
	opened   chan struct{} // closed at EOSE, CLOSED or connection loss
	once     sync.Once
	refusal  string // CLOSED reason class, when refused
	closed   string // CLOSED reason (at opening or later)
	lostErr  error  // the connection's error, once lost
	expected int64  // deliveries owed (set once publishing is over)
	foreign  int64  // valid matching events after EOSE that are not ours
	preEOSE  int64  // valid events before EOSE
}

// Warm reads what s's next delivery will touch (wire.KnownHandler):
// its first fields (its lock, state and counts with them, its stream);
// the rows of the event it touches besides are shared by every
// subscriber, and in the cache while the event fans out.
func (s *subscriber) Warm() int {
	v := s.next + int(s.col)
	if s.stopped.Load() {
		v++
	}
	return v + s.stream.Warm(s.next) + int(s.v.Returned&1)
}

func (s *subscriber) endOpening() { s.once.Do(func() { close(s.opened) }) }

// subRun is one run of the subscribe workload.
type subRun struct {
	o        SubscribeOptions
	user     context.Context // the run's ctx: cancelled only by the user
	fresh    *Fresh
	channels []string
	checks   *verify.Checker
	// lastKnown is the fresh event knownEvent last recognised by its id,
	// tried first for the next delivery (a guess: 0 before any).
	lastKnown atomic.Int32
	subs      []*subscriber
	grid      *verify.Grid // the checks' state of every subscriber, event by event (layOut)
	recvAll   []int64      // the subscribers' receipt times, event by event: [n*len(subs)+col] (0: none); a column written by its subscriber's reader
	subConns  []*wire.Conn
	pubConns  []*wire.Conn
	subLed    *outcome.Ledger
	dLed      *outcome.Ledger
	out       *liveOut
	series    *metrics.Series
	acc       []bool // event n was accepted
	start     int64
	offs      []int64 // open loop: each fresh event's intended send time from start
	aborted   string  // why nothing was published
	addrs     []net.IP
	bl        *backlog // the client's read backlog while publishing
	graceEnd  int64    // when the wait for deliveries ended
	lastRecv  int64    // the last credited delivery
	unread    int64    // bytes sent to subscribers not yet handled when the wait ended
	unreadN   int      // connections with such bytes
	unreadAt  []bool   // per subscriber connection: it held such bytes
	behind    string   // the note of publishing behind the --rate schedule (behindNote; "": none)
	machine   string   // the load average when other processes competed for the cores (behindOthersBusy; "": not judged so)
}

// Subscribe runs the fan-out workload: it pre-signs fresh events, opens the
// subscriptions and waits for their EOSE, then publishes and times every
// delivery from the publisher's send to the subscriber's receive. Every
// delivery is verified; every subscription, event and owed delivery ends in
// exactly one outcome (see the accounting above). It returns an error only
// when it could not start (dialing) or when ctx was cancelled.
func Subscribe(ctx context.Context, url string, c *corpus.Corpus, o SubscribeOptions) (results.Phase, error) {
	if err := o.defaults(); err != nil {
		return results.Phase{}, err
	}
	if err := o.checkSegment(); err != nil {
		return results.Phase{}, err
	}
	if err := rlimit.Need(o.Subscribers + o.Publishers); err != nil {
		return results.Phase{}, err
	}
	r, err := newSubRun(ctx, c, o)
	if err != nil {
		return results.Phase{}, err
	}
	rss0 := settledRSS()
	setup := mono.Now()
	if err := r.dial(url); err != nil {
		return results.Phase{}, err
	}
	defer closeAll(r.pubConns)
	defer closeAll(r.subConns)

	r.openSubscriptions()
	rssIdle := settledRSS()
	r.bl = startBacklog(r.subConns)
	w := o.open(setup)
	r.publish()
	w.Start = r.start // the clock starts when publishing does (at --start-at under a segment)
	r.awaitDeliveries()
	r.unread, r.unreadN = unreadNow(r.subConns)
	r.unreadAt = make([]bool, len(r.subConns))
	for i, c := range r.subConns {
		r.unreadAt[i] = c.Unread() > 0
	}
	for _, s := range r.subs {
		s.stopped.Store(true)
	}
	w.Close(0)
	r.bl.stop()
	ph := r.phase(w)
	connScale(&ph, len(r.subs), rss0, rssIdle, r.addrs, o.flagNames().count)
	readStats(&ph, r.subConns)
	r.explainMissing(&ph, w.CPU())
	w.Finish(&ph) // cut to the window when deliveries were waited for in vain
	r.behindOthersBusy(&ph)
	return ph, ctx.Err()
}

// machineOthersBusy is sysinfo.OthersBusy (a test sets the machine's load).
var machineOthersBusy = sysinfo.OthersBusy

// behindOthersBusy ends the note of publishing behind the schedule with
// the machine's load when other processes competed for its cores beyond
// what the two sides kept busy over the timed window (sysinfo.OthersBusy,
// the runner's "neither side saturated its CPU" note's clause): a window
// full of EVENTs awaiting OKs, or a publisher sending late, is then the
// machine's doing too, not the relay's or the client's alone. With the
// relay's CPU known (load's rule, machineBusy: relaybench started it, so
// it is not one of the others), the events a full window held back are
// then relay- or machine-limited, in the note and in their not-run reason,
// which quotes the load average (machineLimitedWhy), as load's drops.
func (r *subRun) behindOthersBusy(ph *results.Phase) {
	i := slices.Index(ph.Notes, r.behind)
	if r.behind == "" || i < 0 || ph.Resources == nil || ph.Duration <= 0 {
		return
	}
	res := ph.Resources
	sides := (res.ClientCPUSecs + res.RelayCPUSecs) / (float64(ph.Duration) / 1e9)
	busy := machineOthersBusy(sides)
	if busy == "" {
		return
	}
	if res.RelayCPUSecs > 0 || res.RelayPeakRSS != 0 {
		r.machine, _, _ = strings.Cut(busy, ": ")
		r.behind = r.behindNote(ph)
		rebookNotRun(ph, r.o.behindWhy(true), machineLimitedWhy(r.o.behindWhy(true), r.machine))
	}
	ph.Notes[i] = r.behind + "; " + busy
}

// rebookNotRun books ph's operations not run for why as not run for to.
func rebookNotRun(ph *results.Phase, why, to string) {
	for i := range ph.Accounts {
		a := &ph.Accounts[i]
		if n := a.NotRunBy[why]; n > 0 {
			delete(a.NotRunBy, why)
			a.NotRunBy[to] += n
		}
	}
}

// newSubRun signs the fresh events (unless the sweep did) and sets up the
// subscribers' filters.
func newSubRun(ctx context.Context, c *corpus.Corpus, o SubscribeOptions) (*subRun, error) {
	r := &subRun{o: o, user: ctx, fresh: o.fresh, checks: verify.NewChecker()}
	if r.fresh == nil {
		nonce, createdAt := o.freshIdentity()
		r.channels = ChannelNames(o.Seed, nonce, o.Channels)
		var err error
		r.fresh, err = NewFresh(ctx, c, FreshSpec{Count: o.Events, Size: o.Size, Seed: o.Seed, Authors: o.Authors, Channels: r.channels, CreatedAt: createdAt}, nonce)
		if err != nil {
			return nil, err
		}
	} else {
		r.channels = freshChannels(r.fresh)
		r.o.Channels = len(r.channels)
		r.o.Overlap = min(r.o.Overlap, r.o.Channels)
	}
	nEv := len(r.fresh.Events)
	if r.o.Rate > 0 { // drawn before the clock
		r.offs = schedule.ConstantTimes(0, r.o.Rate, nEv)
	}
	since := r.fresh.Events[0].CreatedAt
	r.subs = make([]*subscriber, 0, r.o.Segment.Split(r.o.Subscribers))
	for i := range r.o.Subscribers {
		if !r.o.owns(i) {
			continue // another segment's subscriber
		}
		kind := r.o.Filter
		if kind == FilterMix {
			kind = []string{FilterTag, FilterAuthor, FilterKind}[i%3]
		}
		s := &subscriber{i: i, run: r, kind: kind, opened: make(chan struct{})}
		s.filter = subFilter(kind, i, r.o.Overlap, r.channels, r.fresh.Authors, since)
		s.v.Verified = true
		r.subs = append(r.subs, s)
	}
	r.layOut(nil)
	r.recvAll = make([]int64, nEv*len(r.subs))
	r.subLed = outcome.New(results.OpSub, int64(len(r.subs)))
	r.dLed = outcome.New(results.OpDelivery, 0)
	r.acc = make([]bool, nEv)
	return r, nil
}

// layOut gives each subscriber its column in the receipt times and the
// checks' grid (verify.Grid), where a delivery's state is laid out event
// by event: the subscribers read by one reader thread side by side
// (reader[j]: subscriber j's; nil: one reader), so that the cache lines
// one reader writes are not also another's. Before any delivery.
func (r *subRun) layOut(reader []int) {
	order := make([]int, len(r.subs))
	for j := range order {
		order[j] = j
	}
	if reader != nil {
		sort.SliceStable(order, func(a, b int) bool { return reader[order[a]] < reader[order[b]] })
	}
	if r.grid == nil { // made once: laid out again, a stream keeps its filter's match row
		r.grid = r.checks.NewGrid(r.fresh.Events, len(r.subs))
	}
	for col, j := range order {
		s := r.subs[j]
		s.col = int32(col)
		s.stream = r.grid.Stream(r.checks, &s.filter, col)
	}
}

// recvOf is s's receipt time of fresh event n (0: none).
func (r *subRun) recvOf(s *subscriber, n int) int64 { return r.recvAll[n*len(r.subs)+int(s.col)] }

// dial connects the subscribers and the publishers.
func (r *subRun) dial(url string) error {
	var err error
	r.addrs = sourceAddrs(url, len(r.subs)+r.o.publishers(), r.o.SourceAddrs)
	sd := r.o.Dial
	sd.SharedReader = true // handlers only book (onEvent): a few reader threads, not a goroutine per subscriber
	sd.KnownEvent = r.knownEvent
	if r.subConns, err = dialMany(r.user, url, len(r.subs), sd, r.addrs); err != nil {
		return fmt.Errorf("subscribers: %w", err)
	}
	reader, many := make([]int, len(r.subConns)), false
	for j, c := range r.subConns {
		reader[j] = c.Reader()
		many = many || reader[j] != reader[0]
	}
	if many {
		r.layOut(reader)
	}
	pd := r.o.Dial
	pd.OKTimeout = r.o.Timeout
	if r.pubConns, err = dialMany(r.user, url, r.o.publishers(), pd, r.addrs); err != nil {
		closeAll(r.subConns)
		return fmt.Errorf("publishers: %w", err)
	}
	return nil
}

// openSubscriptions sends every REQ, waits (all together, at most Timeout)
// for the EOSEs and books each subscription's outcome. A subscription
// without EOSE by then is closed: it timed out.
func (r *subRun) openSubscriptions() {
	for i, s := range r.subs {
		sub, err := r.subConns[i].Req("live-"+strconv.Itoa(i), []nostr.Filter{s.filter}, r.handler(s))
		if err != nil {
			r.lose(s, err)
			continue
		}
		s.sub = sub
	}
	tm := time.NewTimer(r.o.Timeout)
	defer tm.Stop()
	waiting := true
	for _, s := range r.subs {
		if !waiting {
			break
		}
		select {
		case <-s.opened:
		case <-tm.C:
			waiting = false
		case <-r.user.Done():
			waiting = false
		}
	}
	for _, s := range r.subs {
		r.bookSub(s)
	}
}

// handler is subscriber s's REQ handler.
func (r *subRun) handler(s *subscriber) wire.SubHandler {
	return wire.SubHandler{
		OnEvent: func(raw []byte, recv int64) { r.onEvent(s, raw, recv) },
		Known:   s,
		OnEOSE: func(int64) {
			s.mu.Lock()
			if s.state == outcome.None {
				s.state = outcome.Accepted
			}
			s.mu.Unlock()
			s.endOpening()
		},
		OnClosed: func(reason string, class wire.Class, _ int64) {
			s.mu.Lock()
			s.closed = reason
			if s.state == outcome.None {
				s.state, s.refusal = outcome.Refused, outcome.RefusalClass(class)
			}
			s.mu.Unlock()
			s.endOpening()
		},
		OnConnError: func(err error) { r.lose(s, err) },
	}
}

// lose records that s's connection is gone.
func (r *subRun) lose(s *subscriber, err error) {
	s.mu.Lock()
	if s.lostErr == nil {
		s.lostErr = err
	}
	if s.state == outcome.None {
		s.state = outcome.OfErr(r.user, err)
	}
	s.mu.Unlock()
	s.endOpening()
}

// bookSub books s's outcome once the opening wait is over: a subscription
// still without an answer timed out (or was cancelled by the user) and is
// closed.
func (r *subRun) bookSub(s *subscriber) {
	s.mu.Lock()
	if s.state == outcome.None {
		s.state = outcome.TimedOut
		if r.user.Err() != nil {
			s.state = outcome.Cancelled
		}
	}
	k, detail := s.state, s.refusal
	s.mu.Unlock()
	if k != outcome.Accepted && s.sub != nil {
		s.sub.Close()
	}
	if k == outcome.NotRun {
		detail = outcome.WhyAborted
	}
	r.subLed.Add(k, detail)
}

// onEvent checks one event a subscriber received (on its reader goroutine).
// The hot path is a byte comparison with what relaybench published; only a
// valid, matching first copy after EOSE of an event of ours is recorded.
func (r *subRun) onEvent(s *subscriber, raw []byte, recv int64) {
	if s.stopped.Load() {
		return
	}
	if r.o.onDelivery != nil {
		r.o.onDelivery()
	}
	var known *nostr.Event
	var pub []byte
	n, ours := r.fresh.Index(raw)
	if ours {
		known, pub = r.fresh.Events[n], r.fresh.Raw[n]
	}
	k := -1
	if ours {
		k = n
	}
	e, fault := s.stream.EventAt(raw, k, known, pub)
	if fault == verify.Valid && e != known {
		n, ours = r.fresh.IndexOf(e.ID) // valid, but not our bytes
	}
	r.book(s, fault, n, ours, recv)
}

// knownEvent is the subscribers' wire.KnownEventFunc: obj begins with
// fresh event n byte for byte as relaybench published it (valid JSON,
// signed and checked before it was sent) or as the relay re-serialized it
// and an earlier delivery was checked in full, so the reader need not scan
// it. An event fans out to every subscriber one after another, so the
// event of the last recognised delivery is tried first: its bytes equal
// to obj's name the same event that looking obj's id up would (and spare
// a scan for the id past the content, where a relay that sorts the keys
// puts it, and a map lookup per delivery).
func (r *subRun) knownEvent(obj []byte) (int, int32) {
	if g := r.lastKnown.Load(); int(g) < len(r.fresh.Events) {
		if m := r.checks.KnownPrefix(obj, r.fresh.Events[g], r.fresh.Raw[g]); m > 0 {
			return m, g
		}
	}
	n, ok := r.fresh.Index(obj)
	if !ok {
		return 0, 0
	}
	m := r.checks.KnownPrefix(obj, r.fresh.Events[n], r.fresh.Raw[n])
	if m > 0 {
		r.lastKnown.Store(int32(n)) // once per event and reader: a store is a fence
	}
	return m, int32(n)
}

// OnKnownEvent is s's delivery of fresh event n (wire.KnownHandler): s
// itself is the handler, so that a delivery loads no closure of its own.
func (s *subscriber) OnKnownEvent(raw []byte, n int, recv int64) { s.run.onKnownEvent(s, raw, n, recv) }

// onKnownEvent is onEvent for a delivery that knownEvent recognised as
// fresh event n's bytes: the same checks (filter, once, after EOSE) and
// timing. raw is given to EventAt as the bytes to compare with too: it is
// event n's published bytes or other bytes of it checked in full, so it
// needs no check again (a fault then names the bytes the relay sent).
func (r *subRun) onKnownEvent(s *subscriber, raw []byte, n int, recv int64) {
	if s.stopped.Load() {
		return
	}
	if r.o.onDelivery != nil {
		r.o.onDelivery()
	}
	_, fault := s.stream.EventAt(raw, n, r.fresh.Events[n], raw)
	s.next = n + 1
	r.book(s, fault, n, true, recv)
}

// book records what s's check of a delivery of fresh event n (ours) found.
func (r *subRun) book(s *subscriber, fault verify.Fault, n int, ours bool, recv int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	verify.Book(&s.v, fault)
	switch {
	case fault != verify.Valid:
	case s.state != outcome.Accepted:
		s.preEOSE++
	case !ours:
		s.foreign++
	default:
		r.recvAll[n*len(r.subs)+int(s.col)] = recv
		if s.acc != nil && s.acc[n] {
			s.have++
		}
	}
}

// publish sends the fresh events (dealt round-robin to the publishers)
// through the live engine; with no subscription open nothing is sent and
// every event is not run.
func (r *subRun) publish() {
	nEv := len(r.fresh.Events)
	r.out = newLiveOut(nEv)
	r.start = r.o.startClock(r.user)
	r.series = metrics.NewSeries(r.start).Times(metrics.TimesDelivery)
	if r.subLed.Count(outcome.Accepted) == 0 && !r.o.segmented() { // a segment publishes for the others' subscribers too
		r.skipPublishing()
		return
	}
	o := r.o
	plan := &livePlan{user: r.user, conns: r.pubConns, fresh: r.fresh, mode: o.Mode, window: o.Window, timeout: o.Timeout, progress: o.Progress, series: r.series}
	np := o.publishers()
	plan.order = make([][]int, np)
	for n, k := 0, 0; n < nEv; n++ {
		if o.owns(n) { // event n is this segment's (all: no segment)
			plan.order[k%np] = append(plan.order[k%np], n)
			k++
		}
	}
	if o.Duration > 0 {
		plan.stopAt = r.start + int64(o.Duration)
	}
	if o.Rate > 0 {
		plan.behindWhy = o.behindWhy
		plan.intended = make([][]int64, np)
		for w := range plan.order {
			for _, n := range plan.order[w] {
				plan.intended[w] = append(plan.intended[w], r.start+r.offs[n])
			}
		}
	}
	runLive(r.user, plan, r.out)
	r.accepted()
}

// skipPublishing settles every event as not run (cancelled when the user
// stopped the run): no subscription was open to receive it.
func (r *subRun) skipPublishing() {
	r.out.led = outcome.New(results.OpEvent, int64(len(r.fresh.Events)))
	_, r.out.wd = outcome.NewWatchdog(r.user, 1, "")
	r.out.wd.Stop()
	r.out.led.SettleFor(r.user, whyNoSub)
	if r.user.Err() == nil {
		r.aborted = fmt.Sprintf("no subscription opened (%s; timeout %v): nothing was published", outcome.Split(r.subLed.Result()), r.o.Timeout)
	}
}

// awaitDeliveries tells each open subscriber which deliveries it is owed,
// then waits until they are all in, every subscription has ended, the
// grace period has passed, or the user stops the run. (A duplicate or
// stray copy arriving after every owed delivery is in is not seen.)
func (r *subRun) awaitDeliveries() {
	var open []*subscriber
	for _, s := range r.subs {
		var want int64
		for n, e := range r.fresh.Events {
			if r.acc[n] && s.filter.Matches(e) {
				want++
			}
		}
		s.mu.Lock()
		s.acc, s.expected = r.acc, want
		for n := range r.fresh.Events {
			if r.recvOf(s, n) != 0 && r.acc[n] {
				s.have++
			}
		}
		if s.state == outcome.Accepted {
			open = append(open, s)
		}
		s.mu.Unlock()
	}
	deadline := time.Now().Add(r.o.Grace)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	defer func() { r.graceEnd = mono.Now() }()
	for !r.delivered(open) {
		if time.Now().After(deadline) {
			return
		}
		select {
		case <-tick.C:
		case <-r.user.Done():
			return
		}
	}
}

// delivered reports whether nothing more can be expected: every open
// subscriber has its deliveries, or has ended.
func (r *subRun) delivered(open []*subscriber) bool {
	for _, s := range open {
		s.mu.Lock()
		waiting := s.have < s.expected && s.lostErr == nil && s.closed == ""
		s.mu.Unlock()
		if waiting {
			return false
		}
	}
	return true
}

// subTally is what the subscribers add up to: the per filter kind groups,
// their deliver latency, and the deliveries not credited.
type subTally struct {
	hist     *metrics.Histogram
	groups   map[string]*results.Group
	ghist    map[string]*metrics.Histogram
	total    *results.Verification
	counts   map[string]int64
	lastRecv int64
	closed   []string
	lost     []string
	refused  map[string]int // refusal reason → subscriptions
}

// countUnreadTimedOut counts the owed deliveries timed out on connections
// that still held unread bytes when the wait ended (not missing).
const countUnreadTimedOut = "timed_out_unread"

// tally books every subscriber's owed deliveries and builds the latency,
// series and verification from the credited ones.
func (r *subRun) tally() *subTally {
	t := &subTally{hist: metrics.NewHistogram(), groups: map[string]*results.Group{}, ghist: map[string]*metrics.Histogram{},
		total: &results.Verification{Verified: true}, counts: map[string]int64{}, refused: map[string]int{}}
	for _, s := range r.subs {
		g := t.groups[s.kind]
		if g == nil {
			g = &results.Group{Name: s.kind, Counts: map[string]int64{}, Rates: map[string]float64{}, Latency: map[string]*results.Histogram{}, Verification: &results.Verification{Verified: true}}
			t.groups[s.kind] = g
			t.ghist[s.kind] = metrics.NewHistogram()
		}
		v, credited := r.bookDeliveries(s, t, t.ghist[s.kind])
		g.Counts["subscribers"]++
		g.Counts[results.CountDeliveries] += credited
		verify.Add(g.Verification, &v)
		verify.Add(t.total, &v)
	}
	return t
}

// bookDeliveries books the deliveries s is owed in the delivery ledger and
// returns its verification and how many deliveries were credited (valid,
// matching, first copies of accepted events, within the grace period),
// whose latency goes into gh, t.hist and the series.
func (r *subRun) bookDeliveries(s *subscriber, t *subTally, gh *metrics.Histogram) (results.Verification, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n [outcome.Cancelled + 1]int64
	v := s.v
	for i, e := range r.fresh.Events {
		got := r.recvOf(s, i)
		if !r.acc[i] {
			r.unowed(i, got, &v, t)
			continue
		}
		if !s.filter.Matches(e) {
			continue
		}
		k := r.deliveryOutcome(s, got)
		n[k]++
		if k == outcome.Accepted {
			r.credit(i, got, gh, t)
		}
	}
	for k := outcome.Accepted; k <= outcome.Cancelled; k++ {
		r.dLed.Request(n[k])
	}
	r.dLed.AddN(outcome.Accepted, "", n[outcome.Accepted])
	r.dLed.AddN(outcome.TimedOut, "", n[outcome.TimedOut])
	r.dLed.AddN(outcome.ConnLost, "", n[outcome.ConnLost])
	r.dLed.AddN(outcome.Cancelled, "", n[outcome.Cancelled])
	why := whySubNotOpen
	if s.state == outcome.Accepted {
		why = whySubClosed
		v.Checked = 1
		v.Expected = n[outcome.Accepted] + n[outcome.TimedOut] + n[outcome.ConnLost] + n[outcome.NotRun] + n[outcome.Cancelled]
	}
	r.dLed.AddN(outcome.NotRun, why, n[outcome.NotRun])
	v.Missing = n[outcome.TimedOut]
	if s.i < len(r.unreadAt) && r.unreadAt[s.i] && v.Missing > 0 {
		// Its connection still held bytes the client had not read when the
		// wait ended: the deliveries may be among them. Timed out (the run
		// is incomplete), not missing: the client fell behind, which is no
		// wrong answer of the relay's.
		t.counts[countUnreadTimedOut] += v.Missing
		v.Missing = 0
	}
	v.Extra += s.foreign
	t.counts["foreign"] += s.foreign
	t.counts["before_eose"] += s.preEOSE
	r.subEnd(s, t)
	return v, n[outcome.Accepted]
}

// deliveryOutcome is the outcome of one delivery s is owed, received at got
// (0: not received).
func (r *subRun) deliveryOutcome(s *subscriber, got int64) outcome.Kind {
	switch {
	case got != 0:
		return outcome.Accepted
	case s.state != outcome.Accepted:
		return outcome.NotRun // subscription not open
	case r.user.Err() != nil:
		return outcome.Cancelled
	case s.lostErr != nil:
		return outcome.ConnLost
	case s.closed != "":
		return outcome.NotRun // closed by the relay
	}
	return outcome.TimedOut
}

// credit times one credited delivery of event i received at got.
func (r *subRun) credit(i int, got int64, gh *metrics.Histogram, t *subTally) {
	t.lastRecv = max(t.lastRecv, got)
	r.series.Add(got, "deliveries", 1)
	sent := r.sentRef(i)
	if sent <= 0 {
		return
	}
	lat := max(1, got-sent)
	gh.Record(lat)
	t.hist.Record(lat)
	r.series.Latency(got, lat)
}

// unowed counts a valid copy of event i, which the relay did not accept,
// received at got (0: none): a refused event delivered is extra; one whose
// OK never came (timed out, connection lost, interrupted) is not credited.
func (r *subRun) unowed(i int, got int64, v *results.Verification, t *subTally) {
	if got == 0 {
		return
	}
	switch r.out.outcomes[i] {
	case Refused:
		v.Extra++
		v.Notes = verify.AppendUnique(v.Notes, "delivered events the relay had refused")
	default:
		t.counts[results.CountDeliveredUnacknowledged]++
	}
}

// subEnd notes how s ended: refused at opening, closed by the relay later,
// or its connection lost.
func (r *subRun) subEnd(s *subscriber, t *subTally) {
	switch {
	case s.state == outcome.Refused:
		t.refused[s.closed]++
	case s.closed != "":
		t.closed = verify.AppendUnique(t.closed, fmt.Sprintf("subscriber %d: the relay ended the subscription: CLOSED: %s", s.i, s.closed))
	case s.lostErr != nil && r.user.Err() == nil:
		t.lost = verify.AppendUnique(t.lost, fmt.Sprintf("subscriber %d: connection lost: %v", s.i, s.lostErr))
	}
}

// phase builds the results phase: the accounts, the publishing side, the
// credited deliveries and the verification.
func (r *subRun) phase(w *Window) results.Phase {
	o := r.o
	nEv := len(r.fresh.Events)
	t := r.tally()
	r.lastRecv = t.lastRecv
	w.Trim(max(r.out.lastOK.Load(), t.lastRecv, r.start)) // nothing sent: no timed window
	ph := w.Phase(o.Name, "subscribe")
	ph.Aborted, ph.Size, ph.Rates = r.aborted, o.Size, map[string]float64{}
	ph.Params = map[string]any{
		"subscribers": o.Subscribers, "publishers": o.Publishers, "channels": o.Channels, "overlap": o.Overlap,
		"filter": o.Filter, "events": nEv, "size": o.Size, "authors": len(r.fresh.Authors), "rate": o.Rate, "mode": o.Mode, "window": o.Window,
		"duration": o.Duration.String(), "grace": o.Grace.String(), "timeout": o.Timeout.String(),
	}
	publishSummary(&ph, r.out, nEv)
	ph.Accounts = append(ph.Accounts, r.subLed.Result(), r.dLed.Result())
	addConnStats(r.user, &ph, append(append([]*wire.Conn(nil), r.pubConns...), r.subConns...))
	for k, v := range t.counts {
		ph.Counts[k] = v
	}
	d := r.dLed.Result()
	ph.Counts[results.CountDeliveries] = d.Accepted
	ph.Counts[results.CountExpected] = t.total.Expected
	ph.Counts[results.CountMissing] = t.total.Missing
	ph.Counts["duplicated"] = t.total.Duplicated
	ph.Counts["invalid"] = t.total.Invalid
	ph.Counts["not_matching"] = t.total.NotMatching
	ph.Latency[results.LatencyDeliver] = t.hist.Result()
	r.rates(&ph, t)
	ph.Verification = t.total
	ph.Series = r.series.Result(w.End)
	ph.Errors = verify.AppendUnique(ph.Errors, t.closed...)
	ph.Errors = verify.AppendUnique(ph.Errors, t.lost...)
	ph.Notes = append(ph.Notes, r.notes(&ph, t)...)
	r.recordSegment(&ph)
	return ph
}

// rates sets the phase's and the groups' rates (credited work only) and
// finishes the verifications.
func (r *subRun) rates(ph *results.Phase, t *subTally) {
	timed := ph.Duration > 0 && ph.Counts[results.CountSent] > 0
	if timed {
		ph.Rates[results.RateEvents] = results.PerSecond(ph.Counts[results.CountAccepted], ph.Duration)
		ph.Rates[results.RateDeliveries] = results.PerSecond(ph.Counts[results.CountDeliveries], ph.Duration)
		ph.Rates[results.RateMB] = results.PerSecond(ph.Counts[results.CountBytesSent], ph.Duration) / 1e6
	}
	if acc := ph.Counts[results.CountAccepted]; acc > 0 {
		ph.Rates[results.RateFanout] = float64(r.dLed.Requested()) / float64(acc)
	}
	for _, k := range []string{FilterTag, FilterAuthor, FilterKind} {
		g := t.groups[k]
		if g == nil {
			continue
		}
		g.Latency[results.LatencyDeliver] = t.ghist[k].Result()
		if timed {
			g.Rates[results.RateDeliveries] = results.PerSecond(g.Counts[results.CountDeliveries], ph.Duration)
		}
		finishSubVerification(g.Verification, r.o.Grace)
		ph.Groups = append(ph.Groups, *g)
	}
	finishSubVerification(t.total, r.o.Grace)
}

// finishSubVerification sets Passed and explains the faults, none of which
// was credited.
func finishSubVerification(v *results.Verification, grace time.Duration) {
	verify.Finish(v)
	if v.Missing > 0 {
		v.Notes = verify.AppendUnique(v.Notes, fmt.Sprintf("accepted events matching an open subscription were not delivered to it within %v after the last OK", grace))
	}
	v.Notes = verify.AppendUnique(v.Notes, faultNotes("live deliveries", v)...)
	if v.Extra > 0 {
		v.Notes = verify.AppendUnique(v.Notes, "valid matching events were delivered that relaybench did not publish or that the relay refused (extra)")
	}
}

// eventsRanOut says whether n events are fewer than the run could have
// published in --duration: closed loop, or an open loop whose --events is
// below rate × duration (an open loop of exactly rate × duration answers
// its last event just before the duration ends, as planned).
func (r *subRun) eventsRanOut(n int) bool {
	o := r.o
	return o.Rate <= 0 || n < int(o.Rate*o.Duration.Seconds()) // as EventCount rounds
}

// notes explains the phase: how it was run and measured, and what did not
// go as asked.
func (r *subRun) notes(ph *results.Phase, t *subTally) []string {
	o := r.o
	nEv := len(r.fresh.Events)
	var notes []string
	if r.out.behind.Load() > 0 {
		r.behind = r.behindNote(ph)
		notes = append(notes, r.behind)
	}
	if n := r.out.cut.Load() - r.out.behind.Load(); n > 0 {
		notes = append(notes, fmt.Sprintf("publishing stopped at %s %v with %s unsent (beyond the plan: not requested)", o.flagNames().duration, o.Duration, numfmt.Count(n, "pre-signed event")))
	} else if a := ph.Account(results.OpEvent); o.Duration > 0 && a != nil && a.Accepted+a.Refused == int64(nEv) && time.Duration(r.out.lastOK.Load()-r.start) < o.Duration && r.eventsRanOut(nEv) {
		notes = append(notes, fmt.Sprintf("all %s were answered in %v, before %s %v ended (raise %s)", numfmt.Count(nEv, "pre-signed event"), numfmt.Dur(time.Duration(r.out.lastOK.Load()-r.start)), o.flagNames().duration, o.Duration, o.flagNames().events))
	}
	each, filters := "each ", " filters"
	if o.Subscribers == 1 {
		each, filters = "", " filter"
	}
	notes = append(notes, fmt.Sprintf("%s (%s%s, %s) %swaited for EOSE before publishing; %s sent fresh events of %s content bytes signed before the clock (%s planned)",
		numfmt.Count(o.Subscribers, "subscriber"), o.Filter, filters, r.follows(each), each, numfmt.Count(o.Publishers, "publisher"), numfmt.Group(int64(o.Size)), numfmt.Group(int64(nEv))))
	deliver := "delivery latency: publisher's clock just before the EVENT write → subscriber's read of the delivery (one monotonic clock), of credited deliveries only: valid, matching, first copies of accepted events"
	if o.sharedSchedule() {
		deliver = "delivery latency: the event's intended send time on the open-loop schedule from --start-at (start + j/rate) → subscriber's read of the delivery, of credited deliveries only (valid, matching, first copies of accepted events); it includes the send lateness, and across machines the clock offset between the instances (see the run's segment clock offset)"
	}
	if ph.Counts[results.CountSent] > 0 {
		notes = append(notes,
			deliver,
			"timed window: first EVENT write → the later of the last OK and the last credited delivery",
			r.loopNote(),
		)
	}
	if a := ph.Account(results.OpSub); a != nil && a.Accepted < a.Requested {
		notes = append(notes, fmt.Sprintf("subscriptions: %s; the deliveries they were owed are not run (%s)", outcome.Split(*a), whySubNotOpen))
	}
	for _, reason := range slices.Sorted(maps.Keys(t.refused)) {
		notes = append(notes, fmt.Sprintf("subscription refused: CLOSED: %s (%d×)", reason, t.refused[reason]))
	}
	if d := ph.Account(results.OpDelivery); d != nil && d.TimedOut > 0 {
		unread := ph.Counts[countUnreadTimedOut]
		if lost := d.TimedOut - unread; lost > 0 {
			notes = append(notes, fmt.Sprintf("%s never arrived (valid) although relaybench waited %v after the last OK: timed out, and missing in the verification", numfmt.Count(lost, "owed delivery"), o.Grace))
		}
		if unread > 0 {
			notes = append(notes, fmt.Sprintf("%s had not arrived when relaybench stopped waiting (%v after the last OK) while their subscriptions' connections still held bytes the client had not read: they may be among them, so they are timed out (the client fell behind: the run is incomplete), not missing", numfmt.Count(unread, "owed delivery"), o.Grace))
		}
	}
	if n := ph.Counts["foreign"]; n > 0 {
		notes = append(notes, fmt.Sprintf("%d valid live events matching a subscription were not relaybench's (another client of this relay?): extra, not credited", n))
	}
	if n := ph.Counts[results.CountDeliveredUnacknowledged]; n > 0 {
		notes = append(notes, fmt.Sprintf("%d deliveries were of events whose OK never arrived (not owed, not credited)", n))
	}
	if n := ph.Counts["before_eose"]; n > 0 {
		notes = append(notes, fmt.Sprintf("%s answered before EOSE or without it (not deliveries)", wereCount(n, "stored event")))
	}
	return notes
}

// behindNote says, in one line, that publishing fell behind the --rate
// schedule and who held it back, with the evidence: how long the
// publishers waited on a full in-flight window and in writes the relay did
// not read, of the time they were behind, and how full the window was when
// the duration ended. Events the client held back make the phase
// client-limited; those the relay did are relay-limited, or relay- or
// machine-limited once other processes were found competing for the
// machine's cores (r.machine, behindOthersBusy).
func (r *subRun) behindNote(ph *results.Phase) string {
	var by [2]struct {
		events, pubs, fullWait, writeWait, lag int64
		inFlight                               int
	}
	for _, l := range r.out.lags {
		if l.behind == 0 {
			continue
		}
		b := &by[0] // the client's
		if l.relayLimited() {
			b = &by[1]
		}
		b.events += l.behind
		b.pubs++
		b.fullWait += l.fullWait
		b.writeWait += l.writeWait
		b.lag += l.lag
		b.inFlight = max(b.inFlight, l.inFlight)
	}
	evidence := func(i int) string {
		b := by[i]
		f := "the publisher waited %v on a full window and %v in writes the relay did not read, of the %v it was behind; %s of its %s awaited an OK at the end"
		if b.pubs > 1 {
			f = fmt.Sprintf("%d publishers waited %%v in all on a full window and %%v in writes the relay did not read, of the %%v they were behind in all; at most %%s of each one's %%s awaited an OK at the end", b.pubs)
		}
		d := func(ns int64) string { return numfmt.Dur(time.Duration(ns)) }
		return fmt.Sprintf(f, d(b.fullWait), d(b.writeWait), d(b.lag), numfmt.Group(int64(b.inFlight)), numfmt.Count(r.o.Window, "slot"))
	}
	head := fmt.Sprintf("publishing fell behind the --rate schedule: %s due before %s %v ended were still unsent then (not run)",
		numfmt.Count(by[0].events+by[1].events, "event"), r.o.flagNames().duration, r.o.Duration)
	client := "the client sent late with room in its in-flight window and its writes not held up, its CPU or timer wake-ups, not the relay"
	relay := "the in-flight window (--window) was full of EVENTs awaiting the relay's OK, or the relay did not read what was written (TCP back-pressure)"
	who := "relay-limited"
	if r.machine != "" {
		who, relay = strings.TrimSuffix(RelayOrMachine, ":"), relay+", "+relayMayHaveWaited
	}
	ph.ClientLimited = ph.ClientLimited || by[0].events > 0
	switch {
	case by[1].events == 0:
		return fmt.Sprintf("client-limited: %s: %s (%s)", head, client, evidence(0))
	case by[0].events == 0:
		return fmt.Sprintf("%s: %s: %s (%s)", who, head, relay, evidence(1))
	}
	return fmt.Sprintf("%s: %d %s: %s (%s); %d client-limited: %s (%s)", head, by[1].events, who, relay, evidence(1), by[0].events, client, evidence(0))
}

// follows says what each subscriber follows; each is "each " or, for one
// subscriber, "".
func (r *subRun) follows(each string) string {
	o, na := r.o, len(r.fresh.Authors)
	switch o.Filter {
	case FilterKind:
		return "kind 1: every event reaches every subscriber"
	case FilterTag:
		return fmt.Sprintf("%sfollowing %s of %s", each, numfmt.Group(int64(o.Overlap)), numfmt.Count(o.Channels, "channel"))
	case FilterAuthor:
		return fmt.Sprintf("%sfollowing %s of %s", each, numfmt.Group(int64(min(o.Overlap, na))), numfmt.Count(na, "author"))
	}
	return fmt.Sprintf("%sfollowing %s of %s or %s of %s", each, numfmt.Group(int64(o.Overlap)), numfmt.Count(o.Channels, "channel"), numfmt.Group(int64(min(o.Overlap, na))), numfmt.Count(na, "author"))
}

// loopNote says how the events were paced.
func (r *subRun) loopNote() string {
	switch {
	case r.o.Rate > 0:
		return fmt.Sprintf("open loop at %s events/s in total (at most %s unacknowledged per publisher)", numfmt.Group(int64(r.o.Rate+0.5)), numfmt.Group(int64(r.o.Window)))
	case r.o.Mode == ModeWait:
		return "closed loop: one EVENT in flight per publisher"
	}
	return fmt.Sprintf("closed loop, pipelined: up to %s unacknowledged EVENTs per publisher", numfmt.Group(int64(r.o.Window)))
}

// subFilter is subscriber i's filter of the given kind.
func subFilter(kind string, i, overlap int, channels, authors []string, since int64) nostr.Filter {
	f := nostr.Filter{Since: nostr.Int64(since)}
	switch kind {
	case FilterTag:
		var vals []string
		for j := 0; j < overlap && j < len(channels); j++ {
			vals = append(vals, channels[(i+j)%len(channels)])
		}
		f.Tags = map[string][]string{"t": vals}
	case FilterAuthor:
		for j := 0; j < overlap && j < len(authors); j++ {
			f.Authors = append(f.Authors, authors[(i+j)%len(authors)])
		}
	default:
		f.Kinds = []int{1}
	}
	return f
}

// freshChannels lists the distinct channel tags of fresh events, in order.
func freshChannels(f *Fresh) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range f.Events {
		if v := e.TagValue("t"); v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}
func closeAll(conns []*wire.Conn) {
	for _, c := range conns {
		if c != nil {
			c.Close()
		}
	}
}

// explainMissing adds, when owed deliveries never came, the note that says
// who lost them (the relay, or a client that could not keep up) with the
// evidence: the client's CPU, its read backlog during the run and when the
// wait ended, how the missing deliveries spread over the subscribers, when
// deliveries stopped, duplicates.
func (r *subRun) explainMissing(ph *results.Phase, cpu time.Duration) {
	d := ph.Account(results.OpDelivery)
	if d == nil || d.TimedOut == 0 {
		return
	}
	m := missingEvidence{missing: d.TimedOut, duplicated: ph.Counts["duplicated"], cores: float64(runtime.GOMAXPROCS(0)),
		unreadEnd: r.unread, unreadConns: r.unreadN, lastDelivery: r.lastRecv, lastOK: r.out.lastOK.Load(), graceEnd: r.graceEnd, bl: r.bl, graceFlag: r.o.flagNames().grace}
	if wall := float64(r.graceEnd-r.start) / 1e9; wall > 0 { // the CPU was measured until the wait ended
		m.busy = cpu.Seconds() / wall
	}
	for _, s := range r.subs {
		s.mu.Lock()
		have, want := s.have, s.expected
		open := s.state == outcome.Accepted
		s.mu.Unlock()
		if !open || want == 0 {
			continue
		}
		m.owedSubs++
		switch {
		case have >= want:
			m.full++
		case have == 0:
			m.none++
		default:
			m.some++
		}
	}
	ph.Counts["client_unread_bytes_at_end"] = r.unread
	ph.Notes = append(ph.Notes, m.conclusion())
}

// Check checks the options as the CLI's flags set them (Checked): each
// range, then the costs: the channel names, the fresh events (each with a
// delivery time per subscriber), the connections.
func (o SubscribeOptions) Check(r *flagcheck.Ranges, _ CheckInput) {
	r.Min("sub-count", o.Subscribers, 1)
	r.Min("publishers", o.Publishers, 1)
	r.Min("channels", o.Channels, 1)
	if o.Overlap < 1 || o.Overlap > o.Channels {
		r.Bad("overlap", o.Overlap, "must be between 1 and --channels (%d)", o.Channels)
	}
	r.Min("events", o.Events, 0)
	r.Size("size", o.Size)
	r.NotNegative("sub-duration", o.Duration)
	r.RateMax("rate", o.Rate, true, "sub-duration", o.Duration)
	r.Min("window", o.Window, 0)
	r.Window("window", o.Window, 1024, o.freshEvents())
	r.Positive("grace", o.Grace)
	r.Positive("timeout", o.Timeout)
	r.Memory("channels", o.Channels, float64(o.Channels), 64, "channel name")
	flag, v := "events", any(o.Events)
	if o.Events == 0 {
		flag, v = "rate", o.Rate // --rate × --sub-duration
	}
	r.ConnPair("sub-count", o.Subscribers, "publishers", o.Publishers)
	r.Memory(flag, v, o.freshEvents(), flagcheck.FreshEventBytes(o.Size)+deliveryStateBytes*float64(o.Subscribers), "event, with its delivery time and check marks at each subscriber")
	r.Memory("sub-count", o.Subscribers, float64(o.Subscribers), deliveryStateBytes*o.freshEvents(), "subscriber (a delivery time and check marks per event)")
}

// deliveryStateBytes is what a live run keeps at most per (subscriber,
// fresh event): its receipt time (8 bytes), the checks' seen mark (1) and
// its filter's match mark (1, shared by the subscribers with the same
// filter; see verify.Grid).
const deliveryStateBytes = 10

// freshEvents is EventCount computed without overflow, for the cost check
// of an absurd --rate × --sub-duration.
func (o SubscribeOptions) freshEvents() float64 {
	if o.Events == 0 && o.Rate > 0 && o.Duration > 0 {
		return max(1, o.Rate*o.Duration.Seconds())
	}
	return float64(o.EventCount())
}
