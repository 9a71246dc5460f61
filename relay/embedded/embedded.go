// Package embedded is a real Nostr relay built on khatru v0.19.1 with one of
// these stores:
//
//   - native (the default): relaybench's own store on a badger v4 database
//     (native.go), whose answers are exactly those NIP-01 asks for: its
//     tests compare thousands of answers over varied corpora with a
//     brute-force model.
//   - badger, lmdb, sqlite3, memory: the fiatjaf/eventstore v0.16.2 stores,
//     kept so that what khatru users run can be benchmarked, known defects
//     included (see below).
//
// It is configured for benchmarking: no rate limits, no per-IP limits, no
// rejection of events by created_at. Every store returns at most MaxLimit
// events per filter, and that cap is announced as NIP-11
// limitation.max_limit so that query verification can compute what a REQ
// should return. A filter without a limit (or above the cap) is treated as
// limit = MaxLimit: without this, the badger and lmdb stores would silently
// return only a quarter of their cap for such filters. With the native and
// badger stores it also answers NIP-77 (negentropy) over the whole matching
// set, up to MaxNegentropy events.
//
// Client messages are handled by relaybench's own WebSocket loop (conn.go),
// not khatru's, so that they take effect in the order they arrive: a REQ
// with an id in use replaces that subscription, CLOSE then REQ with the
// same id does not race, a NIP-77 session exists before its first answer,
// and an event is sent at most once per REQ even when it matches several
// of its filters. A duplicate EVENT is answered
// ["OK",id,true,"duplicate: already have this event"] (NIP-01's own
// example; khatru alone would answer a bare OK true). The native store
// also answers NIP-50 searches (search.go).
//
// Upstream store defects fixed here, since they would lose or refuse
// benchmark traffic: the memory store (slicestore) is made safe for
// concurrent use; the lmdb store no longer saves an event it already has a
// second time; the sqlite3 store gets a busy timeout and WAL so concurrent
// writes do not fail with "database is locked".
//
// Known wrong answers of the eventstore v0.16.2 stores, kept as they are
// (eventstore v0.17.14 was found to fail the same way); relaybench's
// verification reports them:
//   - badger: a query over several authors and kinds with since/until and a
//     limit sometimes returns older events instead of the newest (and, in
//     v0.16.2, a filter with ids ignores its other conditions); tag values
//     are matched as prefixes, without the tag's letter (#t ["zap"] returns
//     events tagged only "zapathon", or "r":"zap…"); under concurrent writes
//     of replaceable events it may answer "error: Transaction Conflict".
//   - lmdb: a #p query with a limit returns older events instead of the
//     newest; a filter with ids ignores its other conditions; tag values are
//     matched as prefixes, as badger does (relaybench conformance finds
//     both). It commits (and syncs) one transaction per event, so it is much
//     slower per event than the others on most disks.
//   - sqlite3: tag values are matched with LIKE over the tags' JSON, so a #t
//     query can return events whose tags merely contain the value as a
//     substring; it refuses filters with more than 10 kinds.
//   - memory (slicestore): events whose created_at equals since are left out.
package embedded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	badgerdb "github.com/dgraph-io/badger/v4"
	"github.com/fasthttp/websocket"
	"github.com/fiatjaf/eventstore"
	"github.com/fiatjaf/eventstore/badger"
	"github.com/fiatjaf/khatru"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip11"
)

// MaxLimit is the most events any store returns for one filter, announced
// as NIP-11 limitation.max_limit.
const MaxLimit = 1000

// MaxNegentropy is the most events a NIP-77 (negentropy) session of the
// native and badger stores reconciles (strfry's default maxSyncEvents); the
// other stores do not announce NIP-77.
const MaxNegentropy = 1000000

// MaxMessageLength is the largest client message accepted (khatru's
// default), announced as limitation.max_message_length.
const MaxMessageLength = 512000

// KhatruVersion is the khatru release this relay is built on.
const KhatruVersion = "v0.19.1"

// Stores lists the accepted values of Options.Store; the first is the default.
var Stores = append([]string{"native", "badger"}, append(cgoStores, "memory")...)

// drainTimeout bounds how long Close waits for store operations in flight.
const drainTimeout = 5 * time.Second

// Options configure New.
type Options struct {
	// Store is one of Stores; empty means "native".
	Store string
	// DataDir is where on-disk stores keep their files (created if missing).
	// Required for native, badger, lmdb and sqlite3; ignored for memory.
	DataDir string
	// Version is the relaybench version, announced as NIP-11 version.
	Version string
	// Logger receives khatru's log lines; nil discards them.
	Logger *log.Logger
}

// Relay is a khatru relay over one event store.
type Relay struct {
	k         *khatru.Relay
	store     eventstore.Store
	storeName string

	mu       sync.RWMutex // guards closed and the inflight.Add calls
	closed   bool
	inflight sync.WaitGroup

	connMu sync.Mutex
	conns  map[*conn]struct{}

	subMu sync.RWMutex
	subs  map[*sub]struct{} // open subscriptions of every connection

	pendMu  sync.Mutex
	pending map[[32]byte]chan struct{} // ids of the events being stored

	// count answers COUNT (NIP-45); nil if the store cannot count.
	count func(context.Context, nostr.Filter) (int64, error)

	closeOnce sync.Once
	closeErr  error
}

// New opens the store and builds the relay. Call Close when done.
func New(o Options) (*Relay, error) {
	name := o.Store
	if name == "" {
		name = Stores[0]
	}
	store, err := openStore(name, o.DataDir, o.Logger)
	if err != nil {
		return nil, err
	}

	k := khatru.NewRelay()
	if o.Logger != nil {
		k.Log = o.Logger
	} else {
		k.Log = log.New(io.Discard, "", 0)
	}
	version := o.Version
	if version == "" {
		version = "dev"
	}
	k.Info.Name = "relaybench embedded relay"
	k.Info.Description = "khatru with the " + name + " store, run by relaybench for benchmarking: no rate limits"
	// Read before the version (relaybench's) in a summary's Relay line:
	// no brackets of its own, so that the line nests none.
	k.Info.Software = fmt.Sprintf("khatru %s, %s store, embedded in relaybench", KhatruVersion, name)
	k.Info.Version = version
	k.Info.Limitation = &nip11.RelayLimitationDocument{
		MaxMessageLength: MaxMessageLength,
		MaxLimit:         MaxLimit,
		DefaultLimit:     MaxLimit,
	}
	k.MaxMessageSize = MaxMessageLength
	// NIP-77 needs the whole matching set, which native and badger can list.
	k.Negentropy = name == "native" || name == "badger"
	if name == "native" {
		k.Info.AddSupportedNIP(50)
	}

	r := &Relay{k: k, store: store, storeName: name, conns: map[*conn]struct{}{}, subs: map[*sub]struct{}{}, pending: map[[32]byte]chan struct{}{}}

	k.StoreEvent = append(k.StoreEvent, func(ctx context.Context, ev *nostr.Event) error {
		if !r.enter() {
			return errShuttingDown
		}
		defer r.inflight.Done()
		return visibleDup(store.SaveEvent(ctx, ev))
	})
	k.ReplaceEvent = append(k.ReplaceEvent, func(ctx context.Context, ev *nostr.Event) error {
		if !r.enter() {
			return errShuttingDown
		}
		defer r.inflight.Done()
		return visibleDup(store.ReplaceEvent(ctx, ev))
	})
	k.DeleteEvent = append(k.DeleteEvent, func(ctx context.Context, ev *nostr.Event) error {
		if !r.enter() {
			return errShuttingDown
		}
		defer r.inflight.Done()
		return store.DeleteEvent(ctx, ev)
	})
	k.QueryEvents = append(k.QueryEvents, r.query)
	if c, ok := store.(eventstore.Counter); ok {
		// Every COUNT is exact, the HyperLogLog ones of NIP-45 included
		// (no registers are sent). The hook makes NIP-11 announce NIP-45.
		countEvents := c.CountEvents
		if name == "lmdb" {
			// eventstore v0.16.2's lmdb CountEvents never returns for a
			// filter whose index holds every condition (e.g. {"#t":[v]}):
			// its count++ branch does not advance the cursor
			// (lmdb/count.go). Such a store counts what a query returns.
			countEvents = r.countByQuery
		}
		r.count = func(ctx context.Context, f nostr.Filter) (int64, error) {
			if !r.enter() {
				return 0, errShuttingDown
			}
			defer r.inflight.Done()
			return countEvents(ctx, f)
		}
		k.CountEvents = append(k.CountEvents, r.count)
	}
	return r, nil
}

// addConn registers a connection; false once Close has begun.
func (r *Relay) addConn(c *conn) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return false
	}
	r.connMu.Lock()
	r.conns[c] = struct{}{}
	r.connMu.Unlock()
	return true
}

func (r *Relay) removeConn(c *conn) {
	r.connMu.Lock()
	delete(r.conns, c)
	r.connMu.Unlock()
}

var errShuttingDown = errors.New("error: relay is shutting down")

// errDuplicate is the reason a duplicate EVENT is answered with, OK true
// (NIP-01). khatru v0.19.1 alone answers a duplicate
// (eventstore.ErrDupEvent) with a bare OK true, which makes duplicates
// invisible to a benchmark; as an error of the store hooks it reaches
// addEvent (conn.go), which answers it OK true and does not broadcast.
var errDuplicate = errors.New("duplicate: already have this event")

func visibleDup(err error) error {
	if errors.Is(err, eventstore.ErrDupEvent) {
		return errDuplicate
	}
	return err
}

// enter registers a store operation; false once Close has begun.
func (r *Relay) enter() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return false
	}
	r.inflight.Add(1)
	return true
}

// query runs a store query; the operation counts as in flight until the
// store has delivered its last event.
func (r *Relay) query(ctx context.Context, f nostr.Filter) (chan *nostr.Event, error) {
	if !r.enter() {
		return nil, errShuttingDown
	}
	in, err := r.store.QueryEvents(ctx, f)
	if err != nil || in == nil {
		r.inflight.Done()
		return in, err
	}
	out := make(chan *nostr.Event)
	go func() {
		defer r.inflight.Done()
		defer close(out)
		for ev := range in {
			select {
			case out <- ev:
			case <-ctx.Done():
				for range in {
				}
				return
			}
		}
	}()
	return out, nil
}

// Handler returns the relay's http.Handler: WebSocket upgrades, NIP-11
// documents (Accept: application/nostr+json) and khatru's other routes.
func (r *Relay) Handler() http.Handler { return http.HandlerFunc(r.serveHTTP) }

// Store returns the name of the store in use.
func (r *Relay) Store() string { return r.storeName }

// Close sends a close frame (1001 going away) to every connected client,
// waits up to 5 s for store operations in flight, then closes the store.
// Later EVENTs are refused with "error: relay is shutting down". Close is
// idempotent.
func (r *Relay) Close() error {
	r.closeOnce.Do(func() {
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
		r.connMu.Lock()
		conns := make([]*conn, 0, len(r.conns))
		for c := range r.conns {
			conns = append(conns, c)
		}
		r.connMu.Unlock()
		msg := websocket.FormatCloseMessage(websocket.CloseGoingAway, "relay shutting down")
		for _, c := range conns {
			c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(closeWait))
		}

		done := make(chan struct{})
		go func() { r.inflight.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(drainTimeout):
			r.closeErr = fmt.Errorf("closing %s store: operations still running after %s", r.storeName, drainTimeout)
		}
		r.store.Close()
	})
	return r.closeErr
}

func openStore(name, dir string, logger *log.Logger) (eventstore.Store, error) {
	var store eventstore.Store
	switch name {
	case "memory":
		store = newMemStore(MaxLimit)
	case "native", "badger", "lmdb", "sqlite3":
		if dir == "" {
			return nil, fmt.Errorf("store %s needs a data directory", name)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("data directory: %w", err)
		}
		switch name {
		case "native":
			store = newNativeStore(filepath.Join(dir, "native"), MaxLimit, logger)
		case "badger":
			store = &badger.BadgerBackend{
				Path:     filepath.Join(dir, "badger"),
				MaxLimit: MaxLimit,
				BadgerOptionsModifier: func(bo badgerdb.Options) badgerdb.Options {
					return bo.WithLogger(badgerLogger{logger})
				},
			}
		default:
			var err error
			if store, err = openCgoStore(name, dir); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("unknown store %q (want native, badger, lmdb, sqlite3 or memory)", name)
	}
	if err := store.Init(); err != nil {
		return nil, fmt.Errorf("opening %s store in %s: %v", name, dir, err)
	}
	if b, ok := store.(*badger.BadgerBackend); ok {
		b.MaxLimitNegentropy = MaxNegentropy // Init set it to MaxLimit
	}
	return store, nil
}

// badgerLogger sends badger's errors and warnings to the relay's logger (if
// any) and drops its info and debug chatter.
type badgerLogger struct{ l *log.Logger }

func (b badgerLogger) Errorf(f string, a ...any) {
	if b.l != nil {
		b.l.Printf("badger error: "+f, a...)
	}
}

func (b badgerLogger) Warningf(f string, a ...any) {
	if b.l != nil {
		b.l.Printf("badger warning: "+f, a...)
	}
}

func (badgerLogger) Infof(string, ...any)  {}
func (badgerLogger) Debugf(string, ...any) {}
