package embedded

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/fasthttp/websocket"
	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip42"
	"github.com/nbd-wtf/go-nostr/nip70"
	"github.com/nbd-wtf/go-nostr/nip77"
	"github.com/nbd-wtf/go-nostr/nip77/negentropy"
)

// The WebSocket side of the relay replaces khatru's: khatru v0.19.1 handles
// every message of a connection on a goroutine of its own, so a CLOSE and
// the REQ reusing its id race, a NEG-MSG can arrive before its NEG-OPEN's
// session is stored, and a REQ with an id in use adds a second subscription
// instead of replacing the first. Here a connection's messages take effect
// in the order they arrive:
//
//   - REQ, CLOSE, COUNT, AUTH and the NIP-77 messages are handled by the
//     read loop, one after the other; a REQ's stored events are then sent
//     by a goroutine of its own, so REQs still run side by side.
//   - EVENTs are checked and stored concurrently (the native store commits
//     concurrent writes together), but REQ, COUNT, NEG-OPEN and AUTH wait
//     until the EVENTs before them are answered: a REQ sees every event
//     sent before it. (CLOSE, NEG-MSG and NEG-CLOSE do not depend on them.)
//
// Events go through khatru's AddEvent (its hooks: deletion checks, store,
// replacement, NIP-40 tracking); khatru still serves NIP-11 and its HTTP
// routes.

const (
	pongWait   = 60 * time.Second // read deadline, renewed by every pong
	pingPeriod = 30 * time.Second
	closeWait  = time.Second // deadline of the close frame sent by Close
)

var upgrader = websocket.Upgrader{
	ReadBufferSize:  1024,
	WriteBufferSize: 1024,
	CheckOrigin:     func(*http.Request) bool { return true },
}

// conn is one client connection.
type conn struct {
	r         *Relay
	ws        *websocket.Conn
	req       *http.Request
	ctx       context.Context
	cancel    context.CancelFunc
	challenge string
	authed    atomic.Pointer[string] // NIP-42 authenticated pubkey

	wmu sync.Mutex // serialises writes

	// Used by the read loop only.
	subs   map[string]*sub
	negs   map[string]*negentropy.Negentropy
	events sync.WaitGroup // EVENTs being handled
}

func (r *Relay) serveHTTP(w http.ResponseWriter, req *http.Request) {
	if !strings.EqualFold(req.Header.Get("Upgrade"), "websocket") {
		r.k.ServeHTTP(w, req)
		return
	}
	ws, err := upgrader.Upgrade(w, req, nil)
	if err != nil {
		r.k.Log.Printf("failed to upgrade websocket: %v", err)
		return
	}
	challenge := make([]byte, 8)
	rand.Read(challenge)
	c := &conn{r: r, ws: ws, req: req, challenge: hex.EncodeToString(challenge),
		subs: map[string]*sub{}, negs: map[string]*negentropy.Negentropy{}}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	if !r.addConn(c) {
		ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "relay shutting down"), time.Now().Add(closeWait))
		ws.Close()
		return
	}
	go c.ping()
	c.readLoop()
	c.shutdown()
}

func (c *conn) ping() {
	t := time.NewTicker(pingPeriod)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(pongWait)); err != nil {
				return
			}
		}
	}
}

func (c *conn) readLoop() {
	c.ws.SetReadLimit(MaxMessageLength)
	c.ws.SetReadDeadline(time.Now().Add(pongWait))
	c.ws.SetPongHandler(func(string) error { return c.ws.SetReadDeadline(time.Now().Add(pongWait)) })
	parser := nostr.NewMessageParser()
	for {
		_, msg, err := c.ws.ReadMessage()
		if err != nil {
			if websocket.IsUnexpectedCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway,
				websocket.CloseNoStatusReceived, websocket.CloseAbnormalClosure, 4537) {
				c.r.k.Log.Printf("unexpected close error from %s: %v", c.req.RemoteAddr, err)
			}
			return
		}
		// ReadMessage returns a new slice every time, so the string may
		// alias it.
		c.handle(parser, unsafe.String(unsafe.SliceData(msg), len(msg)))
	}
}

// shutdown ends the connection's subscriptions once its read loop is over.
func (c *conn) shutdown() {
	c.cancel()
	for _, s := range c.subs {
		c.r.unregister(s)
		s.close()
	}
	c.ws.Close()
	c.r.removeConn(c)
}

func (c *conn) handle(parser nostr.MessageParser, msg string) {
	env, err := parser.ParseMessage(msg)
	if err == nostr.UnknownLabel {
		if e := nip77.ParseNegMessage(msg); e != nil {
			env, err = e, nil
		}
	}
	if err != nil || env == nil {
		c.malformed(msg, err)
		return
	}
	switch e := env.(type) {
	case *nostr.EventEnvelope:
		c.events.Add(1)
		go func() {
			defer c.events.Done()
			c.onEvent(&e.Event)
		}()
		return
	case *nostr.CloseEnvelope:
		c.closeSub(string(*e))
		return
	case *nip77.MessageEnvelope:
		c.onNegMsg(e)
		return
	case *nip77.CloseEnvelope:
		delete(c.negs, e.SubscriptionID)
		return
	}
	c.events.Wait() // what follows sees every event sent before it
	switch e := env.(type) {
	case *nostr.ReqEnvelope:
		c.onReq(e)
	case *nostr.CountEnvelope:
		go c.onCount(e, msg)
	case *nip77.OpenEnvelope:
		c.onNegOpen(e)
	case *nostr.AuthEnvelope:
		c.onAuth(&e.Event) // EVENTs before it are judged unauthenticated
	default:
		c.send(nostr.NoticeEnvelope("invalid: unexpected " + env.Label() + " message from a client"))
	}
}

// malformed answers a message that could not be parsed: CLOSED for a REQ
// or COUNT with a subscription id, OK false for an EVENT with an id,
// NOTICE otherwise.
func (c *conn) malformed(msg string, err error) {
	reason := "invalid: malformed message"
	if err != nil {
		reason = "invalid: " + err.Error()
	}
	var arr []json.RawMessage
	var label, id string
	if json.Unmarshal([]byte(msg), &arr) == nil && len(arr) >= 2 && json.Unmarshal(arr[0], &label) == nil {
		switch label {
		case "REQ", "COUNT":
			if json.Unmarshal(arr[1], &id) == nil {
				c.send(nostr.ClosedEnvelope{SubscriptionID: id, Reason: reason})
				return
			}
		case "EVENT":
			var ev struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(arr[1], &ev) == nil && ev.ID != "" {
				c.send(nostr.OKEnvelope{EventID: ev.ID, OK: false, Reason: reason})
				return
			}
		}
	}
	c.send(nostr.NoticeEnvelope(reason))
}

// send writes one message; errors mean the connection is gone, which the
// read loop notices.
func (c *conn) send(env interface{ MarshalJSON() ([]byte, error) }) {
	b, err := env.MarshalJSON()
	if err != nil {
		return
	}
	c.write(b)
}

func (c *conn) write(b []byte) {
	c.wmu.Lock()
	c.ws.WriteMessage(websocket.TextMessage, b)
	c.wmu.Unlock()
}

func (c *conn) requestAuth() {
	c.send(nostr.AuthEnvelope{Challenge: &c.challenge})
}

func (c *conn) onEvent(ev *nostr.Event) {
	ok, reason := c.r.addEvent(c, ev)
	if !ok && strings.HasPrefix(reason, "auth-required:") {
		c.requestAuth()
	}
	c.send(nostr.OKEnvelope{EventID: ev.ID, OK: ok, Reason: reason})
}

// addEvent checks, stores and broadcasts ev, and returns the OK answer.
func (r *Relay) addEvent(c *conn, ev *nostr.Event) (bool, string) {
	if !ev.CheckID() {
		return false, "invalid: id is computed incorrectly"
	}
	if ok, err := ev.CheckSignature(); err != nil {
		return false, "error: failed to verify signature"
	} else if !ok {
		return false, "invalid: signature is invalid"
	}
	if ev.Kind == 22242 { // NIP-42: "Relays MUST exclude `kind: 22242` events from being broadcasted to any client."
		return false, "invalid: kind-22242 events are sent with AUTH, not published (NIP-42)"
	}
	if nip70.IsProtected(*ev) {
		switch authed := c.authed.Load(); {
		case authed == nil:
			return false, "auth-required: must be published by authenticated event author"
		case *authed != ev.PubKey:
			return false, "blocked: must be published by event author"
		}
	} else if nip70.HasEmbeddedProtected(*ev) {
		return false, "blocked: can't repost nip70 protected"
	}
	if ev.Kind == 5 {
		if err := r.deleteTargets(c.ctx, ev); err != nil {
			return false, nostr.NormalizeOKMessage(err.Error(), "error")
		}
	}
	defer r.storing(ev.ID)()
	skip, err := r.k.AddEvent(c.ctx, ev)
	if err != nil {
		reason := err.Error()
		// NIP-01: ["OK", id, true, "duplicate: already have this event"].
		return strings.HasPrefix(reason, "duplicate:"), reason
	}
	if !skip {
		r.broadcast(ev)
	}
	return true, ""
}

// storing waits until no other copy of the event with this id is being
// stored, and marks this one as being stored until the returned function
// is called, after its broadcast. A copy sent while the first is stored is
// then a duplicate on every store (the badger store alone would save both),
// and an event not marked has no broadcast to come (see sub.eose).
func (r *Relay) storing(hexID string) (done func()) {
	id, ok := parseID(hexID)
	if !ok {
		return func() {}
	}
	for {
		r.pendMu.Lock()
		wait, busy := r.pending[id]
		if !busy {
			ch := make(chan struct{})
			r.pending[id] = ch
			r.pendMu.Unlock()
			return func() {
				r.pendMu.Lock()
				delete(r.pending, id)
				r.pendMu.Unlock()
				close(ch)
			}
		}
		r.pendMu.Unlock()
		<-wait
	}
}

// deleteTargets applies a NIP-09 deletion request (what khatru v0.19.1
// does): every event it names by e or a tag is deleted if ev's author wrote
// it; naming someone else's event refuses the request.
func (r *Relay) deleteTargets(ctx context.Context, ev *nostr.Event) error {
	for _, tag := range ev.Tags {
		if len(tag) < 2 {
			continue
		}
		var f nostr.Filter
		switch tag[0] {
		case "e":
			f = nostr.Filter{IDs: []string{tag[1]}, Limit: 1}
		case "a":
			spl := strings.SplitN(tag[1], ":", 3)
			if len(spl) != 3 {
				continue
			}
			kind, err := strconv.Atoi(spl[0])
			if err != nil {
				continue
			}
			f = nostr.Filter{Kinds: []int{kind}, Authors: []string{spl[1]},
				Tags: nostr.TagMap{"d": []string{spl[2]}}, Until: &ev.CreatedAt, Limit: 1}
		default:
			continue
		}
		ch, err := r.query(ctx, f)
		if err != nil || ch == nil {
			continue
		}
		var target *nostr.Event
		for e := range ch {
			if target == nil {
				target = e
			}
		}
		if target == nil {
			continue
		}
		if target.PubKey != ev.PubKey {
			return errNotAuthor
		}
		for _, del := range r.k.DeleteEvent {
			if err := del(ctx, target); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *conn) onAuth(ev *nostr.Event) {
	url := strings.Replace(baseURL(c.r.k.ServiceURL, c.req), "http", "ws", 1)
	if pubkey, ok := nip42.ValidateAuthEvent(ev, c.challenge, url); ok {
		c.authed.Store(&pubkey)
		c.send(nostr.OKEnvelope{EventID: ev.ID, OK: true})
		return
	}
	c.send(nostr.OKEnvelope{EventID: ev.ID, OK: false, Reason: "error: failed to authenticate"})
}

// baseURL is the relay's own URL as khatru v0.19.1 works it out (for NIP-42).
func baseURL(service string, r *http.Request) string {
	if service != "" {
		return service
	}
	host := r.Header.Get("X-Forwarded-Host")
	if host == "" {
		host = r.Host
	}
	proto := r.Header.Get("X-Forwarded-Proto")
	if proto == "" {
		proto = "https"
		if _, err := strconv.Atoi(strings.ReplaceAll(host, ".", "")); err == nil || host == "localhost" || strings.Contains(host, ":") {
			proto = "http"
		}
	}
	return proto + "://" + host
}

func (c *conn) onCount(e *nostr.CountEnvelope, msg string) {
	if c.r.count == nil {
		c.send(nostr.ClosedEnvelope{SubscriptionID: e.SubscriptionID, Reason: "unsupported: this relay does not support NIP-45"})
		return
	}
	filters, err := countFilters(msg)
	var n int64
	if err == nil {
		n, err = c.r.countUnion(c.ctx, filters)
	}
	if err != nil {
		c.send(nostr.ClosedEnvelope{SubscriptionID: e.SubscriptionID, Reason: nostr.NormalizeOKMessage(err.Error(), "error")})
		return
	}
	c.send(nostr.CountEnvelope{SubscriptionID: e.SubscriptionID, Count: &n})
}

// countFilters reads every filter of ["COUNT",id,filter...]: go-nostr's
// CountEnvelope decodes them all into one Filter, the last one's fields
// overwriting the others' (NIP-45: "Multiple filters are OR'd together").
func countFilters(msg string) ([]nostr.Filter, error) {
	var arr []json.RawMessage
	if err := json.Unmarshal([]byte(msg), &arr); err != nil || len(arr) < 3 {
		return nil, errors.New("invalid: COUNT without a filter")
	}
	out := make([]nostr.Filter, len(arr)-2)
	for i := range out {
		if err := json.Unmarshal(arr[i+2], &out[i]); err != nil {
			return nil, fmt.Errorf("invalid: filter %d: %v", i, err)
		}
	}
	return out, nil
}

// countByQuery counts the events a query for f returns (up to
// MaxNegentropy, or the store's cap for such a query).
func (r *Relay) countByQuery(ctx context.Context, f nostr.Filter) (int64, error) {
	ch, err := r.query(eventstore.SetNegentropy(ctx), f)
	if err != nil {
		return 0, err
	}
	var n int64
	for range chOrClosed(ch) {
		n++
	}
	return n, nil
}

// countUnion counts the stored events matching any of filters, each once:
// one filter by the store's count, several by the union of their ids (up
// to MaxNegentropy events per filter).
func (r *Relay) countUnion(ctx context.Context, filters []nostr.Filter) (int64, error) {
	if len(filters) == 1 {
		return r.count(ctx, filters[0])
	}
	seen := map[string]struct{}{}
	for _, f := range filters {
		if f.LimitZero {
			continue
		}
		ch, err := r.query(eventstore.SetNegentropy(ctx), f)
		if err != nil {
			return 0, err
		}
		for ev := range chOrClosed(ch) {
			seen[ev.ID] = struct{}{}
		}
	}
	return int64(len(seen)), nil
}

// onNegOpen starts a NIP-77 session (replacing one with the same id); the
// session is in place before its first answer is sent.
func (c *conn) onNegOpen(e *nip77.OpenEnvelope) {
	delete(c.negs, e.SubscriptionID)
	if !c.r.k.Negentropy {
		c.send(nip77.ErrorEnvelope{SubscriptionID: e.SubscriptionID, Reason: "blocked: the " + c.r.storeName + " store does not support NIP-77"})
		return
	}
	neg, err := c.r.negentropy(c.ctx, e.Filter)
	if err != nil {
		c.send(nip77.ErrorEnvelope{SubscriptionID: e.SubscriptionID, Reason: nostr.NormalizeOKMessage(err.Error(), "error")})
		return
	}
	c.reconcile(e.SubscriptionID, neg, e.Message)
}

func (c *conn) onNegMsg(e *nip77.MessageEnvelope) {
	neg, ok := c.negs[e.SubscriptionID]
	if !ok {
		c.send(nip77.ErrorEnvelope{SubscriptionID: e.SubscriptionID, Reason: "closed: no negentropy session with this id"})
		return
	}
	c.reconcile(e.SubscriptionID, neg, e.Message)
}

// reconcile answers one NIP-77 message; the session stays open while there
// is more to reconcile.
func (c *conn) reconcile(id string, neg *negentropy.Negentropy, msg string) {
	out, err := neg.Reconcile(msg)
	if err != nil {
		delete(c.negs, id)
		c.send(nip77.ErrorEnvelope{SubscriptionID: id, Reason: nostr.NormalizeOKMessage(err.Error(), "error")})
		return
	}
	if out == "" {
		delete(c.negs, id)
	} else {
		c.negs[id] = neg
	}
	c.send(nip77.MessageEnvelope{SubscriptionID: id, Message: out})
}
