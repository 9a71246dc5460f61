package wire

// NIP-42 AUTH.
//
// A connection dialled with an Auth (Options.Auth, or the process default set
// by SetDefaultAuth) answers the relay's challenges with kind-22242 events
// signed by keys of an AuthKeys ring, and retries what the relay refused for
// want of authentication:
//
//   - An EVENT answered OK false "auth-required: …" is held (it stays pending:
//     its timeout keeps running from its first send). The connection signs an
//     AUTH event with the key of the event's author (AuthKeys.KeyFor), sends
//     ["AUTH",ev], waits for its OK and, when the relay accepts, sends the
//     EVENT again. Its OK then is the event's one outcome. When the relay
//     refuses the AUTH (or no key can sign), the event gets the original
//     auth-required refusal.
//   - A REQ answered CLOSED "auth-required: …" is held the same way (key:
//     the ring's default key) and sent again after the AUTH is accepted; its
//     handler sees the CLOSED only when the AUTH fails.
//   - Each operation is retried at most once; an operation first sent after
//     an AUTH with its key was accepted and refused auth-required again is
//     not retried (the relay does not want that key).
//   - An AUTH with one key is sent at most once per connection at a time;
//     operations needing it wait for it together. An AUTH refused is not
//     sent again on that connection. The relay may keep one authenticated key
//     per connection (ORLY keeps the last, nostr-rs-relay the first) or
//     several (NIP-42 allows it): a publisher connection that publishes for
//     many authors authenticates as each author whose event is refused.
//   - Without a challenge yet (the relay refused first), held operations
//     wait for the relay's ["AUTH",challenge].
//
// Every AUTH round trip (["AUTH",ev] written → its OK read) is counted and
// timed apart from the workload's operations: Stats().AuthSent,
// AuthAccepted, AuthRejected, AuthRetried and AuthRoundTrips(). A retried
// operation's OK.Sent (and a retried subscription's Sent) is the time of its
// second send, so the workload's latencies do not include the AUTH.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/internal/secp"
	"github.com/relaybench/relaybench/nostr"
)

// AuthMode says when a connection authenticates.
type AuthMode uint8

// Auth modes.
const (
	// AuthOnDemand answers a challenge only when the relay refuses an EVENT
	// or REQ with "auth-required:" (then retries it). Relays that send a
	// challenge they do not require (ORLY, khatru) see no AUTH.
	AuthOnDemand AuthMode = iota
	// AuthEager answers every challenge at once with the ring's default key,
	// and also retries auth-required refusals as AuthOnDemand does.
	AuthEager
	// AuthOff never authenticates: auth-required refusals are final.
	AuthOff
)

// ParseAuthMode parses "on-demand", "always" or "off".
func ParseAuthMode(s string) (AuthMode, error) {
	switch s {
	case "on-demand", "":
		return AuthOnDemand, nil
	case "always":
		return AuthEager, nil
	case "off":
		return AuthOff, nil
	}
	return 0, fmt.Errorf("auth mode %q: want on-demand, always or off", s)
}

func (m AuthMode) String() string {
	switch m {
	case AuthOnDemand:
		return "on-demand"
	case AuthEager:
		return "always"
	case AuthOff:
		return "off"
	}
	return fmt.Sprintf("AuthMode(%d)", uint8(m))
}

// KindAuth is the NIP-42 client authentication event kind.
const KindAuth = 22242

// Auth is how connections answer NIP-42. One Auth is shared by many
// connections; it is safe for concurrent use.
type Auth struct {
	Mode AuthMode
	Keys *AuthKeys
}

var defaultAuth atomic.Pointer[Auth]

// SetDefaultAuth sets the Auth of connections dialled with neither
// Options.Auth nor Options.AuthSigner (nil: none). The CLI sets it once from
// its --auth flags, so that every workload's connections authenticate.
func SetDefaultAuth(a *Auth) { defaultAuth.Store(a) }

// DefaultAuth returns what SetDefaultAuth set.
func DefaultAuth() *Auth { return defaultAuth.Load() }

// authFor is the Auth a connection dialled with o uses (nil: none).
func authFor(o Options) *Auth {
	a := o.Auth
	if a == nil && o.AuthSigner == nil {
		a = defaultAuth.Load()
	}
	if a == nil || a.Mode == AuthOff || a.Keys == nil {
		return nil
	}
	return a
}

// AuthKeys is a ring of secret keys that sign AUTH events. Keys may be added
// while connections use it (a corpus is often loaded after the flags are
// read). With a fixed key (SetFixed) every connection authenticates with it;
// otherwise an operation authenticates with the key of its event's author
// when the ring has it, else with the default key (the first added).
type AuthKeys struct {
	signer secp.Signer
	mu     sync.RWMutex
	byPub  map[string]*secp.Key
	def    string
	fixed  bool
}

// NewAuthKeys returns an empty ring signing with signer (nil: secp.Default()).
func NewAuthKeys(signer secp.Signer) *AuthKeys {
	if signer == nil {
		signer = secp.Default()
	}
	return &AuthKeys{signer: signer, byPub: map[string]*secp.Key{}}
}

// Add adds a secret key and returns its public key (hex). The first key
// added becomes the default unless a fixed key is set.
func (k *AuthKeys) Add(secret [32]byte) (string, error) {
	key, err := k.signer.NewKey(secret)
	if err != nil {
		return "", err
	}
	pub := hex.EncodeToString(key.Pub[:])
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.byPub[pub]; !ok {
		k.byPub[pub] = key
	}
	if k.def == "" {
		k.def = pub
	}
	return pub, nil
}

// SetFixed adds secret and makes it the key of every AUTH.
func (k *AuthKeys) SetFixed(secret [32]byte) (string, error) {
	pub, err := k.Add(secret)
	if err != nil {
		return "", err
	}
	k.mu.Lock()
	k.def, k.fixed = pub, true
	k.mu.Unlock()
	return pub, nil
}

// Fixed reports whether one key signs every AUTH.
func (k *AuthKeys) Fixed() bool {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.fixed
}

// Len is the number of keys in the ring.
func (k *AuthKeys) Len() int {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return len(k.byPub)
}

// KeyFor returns the public key that authenticates for an operation of
// author ("" for a REQ): author when the ring holds its key and no fixed key
// is set, else the default key; "" when the ring is empty.
func (k *AuthKeys) KeyFor(author string) string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if !k.fixed && author != "" {
		if _, ok := k.byPub[author]; ok {
			return author
		}
	}
	return k.def
}

// Sign returns the JSON and id of a kind-22242 event with tags relay and
// challenge, created now and signed by the ring's key pub.
func (k *AuthKeys) Sign(pub, challenge, relayURL string) ([]byte, string, error) {
	k.mu.RLock()
	key := k.byPub[pub]
	k.mu.RUnlock()
	if key == nil {
		return nil, "", fmt.Errorf("no secret key for %s", pub)
	}
	ev := nostr.Event{
		PubKey:    pub,
		CreatedAt: time.Now().Unix(),
		Kind:      KindAuth,
		Tags:      []nostr.Tag{{"relay", relayURL}, {"challenge", challenge}},
	}
	id := sha256.Sum256(ev.AppendSerialized(make([]byte, 0, 256)))
	sig, err := k.signer.SignKey(key, &id, &id)
	if err != nil {
		return nil, "", err
	}
	ev.ID = hex.EncodeToString(id[:])
	ev.Sig = hex.EncodeToString(sig[:])
	return ev.AppendJSON(nil), ev.ID, nil
}

// ParseSecretKey reads a secret key given as 64 hex digits.
func ParseSecretKey(s string) ([32]byte, error) {
	var sk [32]byte
	s = strings.TrimSpace(s)
	if len(s) != 64 {
		return sk, errors.New("want 64 hex digits or an nsec")
	}
	if _, err := hex.Decode(sk[:], []byte(s)); err != nil {
		return sk, errors.New("want 64 hex digits or an nsec")
	}
	if !secp.ValidSecret(&sk) {
		return sk, errors.New("not a valid secp256k1 secret key")
	}
	return sk, nil
}

var errUnsigned = errors.New("AUTH event not signed")

// maxAuthRTTs bounds the AUTH round-trip times a connection keeps.
const maxAuthRTTs = 1 << 14

// authState is a connection's NIP-42 state; guarded by Conn.mu.
type authState struct {
	accepted map[string]int64    // key → mono time its AUTH was accepted
	last     string              // the key accepted last
	refused  map[string]bool     // keys whose AUTH the relay refused (or we could not sign)
	inflight map[string]*authTry // key → AUTH sent, OK awaited
	noChal   []*authTry          // AUTHs that wait for a challenge
	rtts     []int64             // AUTH round trips, ns
}

// authTry is one AUTH (one key) and the operations waiting for it.
type authTry struct {
	key     string
	waiters []authWaiter
}

// authWaiter is a held operation: an EVENT (id) or a subscription (sub),
// with the refusal it gets if the AUTH fails.
type authWaiter struct {
	id     string
	sub    *Sub
	reason string
	recv   int64
}

// holdForAuth decides what to do with an operation the relay refused
// auth-required: it returns true when the operation is now held (retried
// after an AUTH), false when the refusal is final. author is the event's
// pubkey ("" for a REQ); sent is when the operation was first sent (0:
// unknown, for a REQ).
// Called from the reader goroutine: it never blocks on the network.
func (c *Conn) holdForAuth(w authWaiter, author string, sent int64) bool {
	key := c.auth.Keys.KeyFor(author)
	if key == "" {
		c.st.authRejected.Add(1) // nothing can sign
		return false
	}
	c.mu.Lock()
	as := &c.as
	if c.closed || as.refused[key] {
		c.mu.Unlock()
		return false
	}
	if at, ok := as.accepted[key]; ok {
		if sent != 0 && sent <= at || sent == 0 && as.last != key {
			c.mu.Unlock()
			go c.retry(w) // the refusal raced our AUTH
			return true
		}
		if as.last == key {
			c.mu.Unlock()
			return false // refused although authenticated with this key
		}
		// Another key was accepted since: the relay may keep one key per
		// connection (ORLY keeps the last). Authenticate with this one again.
		delete(as.accepted, key)
	}
	if t := as.inflight[key]; t != nil {
		t.waiters = append(t.waiters, w)
		c.mu.Unlock()
		return true
	}
	for _, t := range as.noChal {
		if t.key == key {
			t.waiters = append(t.waiters, w)
			c.mu.Unlock()
			return true
		}
	}
	t := &authTry{key: key, waiters: []authWaiter{w}}
	chal := c.authChal
	if chal == "" {
		as.noChal = append(as.noChal, t)
		c.mu.Unlock()
		return true
	}
	c.startAuthLocked(t)
	c.mu.Unlock()
	go c.sendAuth(t, chal)
	return true
}

func (c *Conn) startAuthLocked(t *authTry) {
	if c.as.inflight == nil {
		c.as.inflight = map[string]*authTry{}
	}
	c.as.inflight[t.key] = t
}

// onChallenge is called by the reader for each ["AUTH",challenge] (after
// c.authChal is set): it starts the AUTHs that waited for a challenge and,
// in eager mode, authenticates with the default key.
func (c *Conn) onChallenge(chal string) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	start := c.as.noChal
	c.as.noChal = nil
	if c.auth.Mode == AuthEager {
		key := c.auth.Keys.KeyFor("")
		_, acc := c.as.accepted[key]
		_, inf := c.as.inflight[key]
		waiting := false
		for _, t := range start {
			waiting = waiting || t.key == key
		}
		if key != "" && !acc && !inf && !waiting && !c.as.refused[key] {
			start = append(start, &authTry{key: key})
		}
	}
	for _, t := range start {
		c.startAuthLocked(t)
	}
	c.mu.Unlock()
	for _, t := range start {
		go c.sendAuth(t, chal)
	}
}

// sendAuth signs and sends the AUTH of t; its OK ends t (authDone).
func (c *Conn) sendAuth(t *authTry, chal string) {
	raw, id, err := c.auth.Keys.Sign(t.key, chal, c.url)
	if err != nil {
		c.authDone(t, OK{Err: fmt.Errorf("%w: %v", errUnsigned, err)})
		return
	}
	c.st.authSent.Add(1)
	err = c.send(`["AUTH",`, id, raw, func(ok OK) { c.authDone(t, ok) }, nil)
	if err != nil {
		c.authDone(t, OK{Err: err})
	}
}

// authDone ends an AUTH: it records the verdict and its round trip, then
// retries the waiting operations (accepted) or gives them their refusal.
func (c *Conn) authDone(t *authTry, ok OK) {
	accepted := ok.Err == nil && ok.Accepted
	c.mu.Lock()
	delete(c.as.inflight, t.key)
	if accepted {
		if c.as.accepted == nil {
			c.as.accepted = map[string]int64{}
		}
		c.as.accepted[t.key] = ok.Recv
		c.as.last = t.key
	} else {
		if c.as.refused == nil {
			c.as.refused = map[string]bool{}
		}
		c.as.refused[t.key] = true
	}
	if ok.Err == nil && ok.Sent > 0 && len(c.as.rtts) < maxAuthRTTs {
		c.as.rtts = append(c.as.rtts, max(ok.Recv-ok.Sent, 1))
	}
	waiters := t.waiters
	t.waiters = nil
	c.mu.Unlock()
	switch {
	case accepted:
		c.st.authAccepted.Add(1)
		c.authOnce.Do(func() { close(c.authed) })
	case ok.Err == nil || errors.Is(ok.Err, errUnsigned):
		c.st.authRejected.Add(1) // refused, or nothing could sign
	}
	// else: no answer (the connection closed, or the AUTH could not be
	// written): neither accepted nor refused.
	for _, w := range waiters {
		if accepted {
			c.retry(w)
		} else {
			c.giveUp(w)
		}
	}
}

// retry sends a held operation again, if it is still held (not timed out,
// cancelled or failed with the connection meanwhile).
func (c *Conn) retry(w authWaiter) {
	if c.lockOpen() != nil {
		return // the connection is failing or closed: fail() delivers ErrClosed
	}
	if w.sub != nil {
		s := w.sub
		if c.subs[s.id] != s || !s.held {
			c.mu.Unlock()
			c.wmu.Unlock()
			return
		}
		s.held = false
		c.mu.Unlock()
		s.resent.Store(mono.Now())
		c.st.authRetried.Add(1)
		c.queueLocked("", s.req, "")
		if err := c.flushUnlock(false); err != nil {
			c.fail(err)
		}
		return
	}
	p, found := c.pending[w.id]
	if !found || !p.held {
		c.mu.Unlock()
		c.wmu.Unlock()
		return
	}
	p.held = false
	p.resent = mono.Now()
	c.pending[w.id] = p
	async := len(c.pending) > 1
	c.mu.Unlock()
	c.st.authRetried.Add(1)
	c.queueLocked(`["EVENT",`, p.raw, "]")
	if err := c.flushUnlock(async); err != nil {
		c.fail(err)
	}
}

// giveUp ends a held operation with the auth-required refusal it got.
func (c *Conn) giveUp(w authWaiter) {
	if w.sub != nil {
		s := w.sub
		c.mu.Lock()
		mine := !c.closed && c.subs[s.id] == s && s.held
		if mine {
			c.dropSub(s.id)
		}
		c.mu.Unlock()
		if mine {
			s.closedByRelay.Store(true)
			if s.h.OnClosed != nil {
				s.h.OnClosed(w.reason, ClassAuthRequired, w.recv)
			}
		}
		return
	}
	c.mu.Lock()
	p, found := c.pending[w.id]
	if found && p.held {
		delete(c.pending, w.id)
	}
	c.mu.Unlock()
	if found && p.held {
		c.deliver(p, OK{ID: p.id, Accepted: false, Reason: w.reason, Class: ClassAuthRequired, Sent: p.sent, Recv: w.recv})
	}
}

// AuthRoundTrips returns the AUTH round trips of this connection
// (["AUTH",ev] written → its OK read), in nanoseconds, in order.
func (c *Conn) AuthRoundTrips() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int64(nil), c.as.rtts...)
}

// eventAuthor returns the pubkey of an event's JSON, "" if unreadable.
func eventAuthor(raw []byte) string {
	ev, err := nostr.ParseEvent(raw)
	if err != nil {
		return ""
	}
	return ev.PubKey
}
