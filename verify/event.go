package verify

import (
	"bytes"
	"sync"

	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
)

// Fault is what is wrong with one event a relay sent, if anything.
type Fault uint8

// Faults, in the order they are checked.
const (
	Valid       Fault = iota // well-formed, id and signature valid, matches the filter, first in its answer
	Invalid                  // not an event object, wrong id, or bad signature
	NotMatching              // valid but outside the filter it answers
	Duplicate                // valid and matching, but already delivered in this answer/subscription
)

func (f Fault) String() string {
	return [...]string{"valid", "invalid", "not matching", "duplicate"}[f]
}

// Checker parses events a relay sends and checks their id and BIP-340
// signature once per distinct raw JSON (the same event comes back in many
// answers), and a signature once per event id (other bytes of it, a relay's
// re-serialization, are parsed and their id checked, not the signature
// again). Events relaybench published itself can be registered with Trust:
// a byte-identical copy is then valid without a signature check, and any
// other bytes claiming the same id are checked in full. It is safe for
// concurrent use.
type Checker struct {
	mu     sync.RWMutex
	ok     map[string]*nostr.Event // raw JSON → parsed, valid event
	cached int64                   // bytes of raw JSON cached by Check (not Trust)
	// sigs: id → signature already verified for it (at most CheckCacheSigs):
	// other bytes of an event whose id is right and whose signature was
	// verified before need no second signature check (the id commits to
	// the pubkey, so the same id and signature verify the same way).
	sigs map[string]string

	// alt: a known event (EventAt) → other bytes of it already checked in
	// full ([]byte): a relay that re-serializes events (strfry sorts the
	// keys) sends every subscriber the same other bytes, compared then
	// instead of hashed into ok.
	alt sync.Map
}

// NewChecker returns an empty checker.
func NewChecker() *Checker {
	return &Checker{ok: map[string]*nostr.Event{}, sigs: map[string]string{}}
}

// Trust registers raw, the exact bytes of an event relaybench signed.
func (c *Checker) Trust(raw []byte, e *nostr.Event) {
	c.mu.Lock()
	c.ok[string(raw)] = e
	c.mu.Unlock()
}

// Check parses raw and verifies its id and signature.
func (c *Checker) Check(raw []byte) (*nostr.Event, bool) {
	c.mu.RLock()
	e, ok := c.ok[string(raw)]
	c.mu.RUnlock()
	if ok {
		return e, true
	}
	e, err := nostr.ParseEvent(raw)
	if err != nil || !e.CheckID() {
		return nil, false
	}
	c.mu.RLock()
	sig, known := c.sigs[e.ID]
	c.mu.RUnlock()
	if !known || sig != e.Sig {
		if !ValidSignature(e) {
			return nil, false
		}
	}
	c.mu.Lock()
	if c.cached+int64(len(raw)) <= CheckCacheBytes {
		c.ok[string(raw)] = e
		c.cached += int64(len(raw))
	}
	if !known && len(c.sigs) < CheckCacheSigs {
		c.sigs[e.ID] = e.Sig
	}
	c.mu.Unlock()
	return e, true
}

// Vouch registers the id and signature of an event relaybench signed
// itself: bytes of it with a right id then need no signature check, and
// the same id with another signature is still checked in full. The event's
// strings are kept, not copied; Vouch is not bounded by CheckCacheSigs (the
// caller holds the events anyway).
func (c *Checker) Vouch(e *nostr.Event) {
	if len(e.Sig) != 128 || len(e.ID) != 64 {
		return // not a signed event: nothing to vouch for
	}
	c.mu.Lock()
	c.sigs[e.ID] = e.Sig
	c.mu.Unlock()
}

// CheckCacheSigs bounds the signatures Check remembers as verified, by id
// (about 200 bytes each): past it, every other event's signature is
// verified each time its bytes are not cached.
const CheckCacheSigs = 1 << 16

// CheckCacheBytes bounds the raw JSON that Check remembers as valid: past
// it, events relaybench did not publish are checked in full each time they
// come (a relay that streams events of its own cannot grow the client).
const CheckCacheBytes = 16 << 20

// Same reports whether raw is byte for byte the event relaybench published
// (then it needs no further check: it was signed and checked before sending).
func Same(raw, published []byte) bool { return bytes.Equal(raw, published) }

// Stream checks the events of one answer or one live subscription as they
// come: each must be valid, match the filter and arrive once. Not safe for
// concurrent use: one Stream per subscription.
type Stream struct {
	Filter *nostr.Filter
	seen   map[string]struct{}
	c      *Checker
	grid   *Grid // NewIndexedStream, Grid.Stream: the known list's state, column col
	col    int32
	group  int32 // the grid's match row for Filter (-1: none)
}

// NewIndexedStream is NewStream for an answer made mostly of a known list
// of n events (a live subscription to events relaybench publishes itself):
// EventAt then books those by their index in the list, one byte each,
// instead of by id.
func (c *Checker) NewIndexedStream(f *nostr.Filter, n int) *Stream {
	g := &Grid{cols: 1, n: n, seen: make([]byte, n)}
	s := g.Stream(c, f, 0)
	return &s
}

// EventAt is Event for an event whose bytes name event k of the stream's
// known list (known, with its published bytes), or k < 0 and known nil.
func (s *Stream) EventAt(raw []byte, k int, known *nostr.Event, published []byte) (*nostr.Event, Fault) {
	if known == nil || k < 0 || s.grid == nil || k >= s.grid.n {
		return s.Event(raw, known, published)
	}
	e := known
	if !Same(raw, published) {
		if a, ok := s.c.alt.Load(known); !ok || !bytes.Equal(a.([]byte), raw) {
			if e, ok = s.c.Check(raw); !ok {
				return s.faulty(nil, Invalid, raw)
			}
			if e.ID != known.ID { // valid, but another event than its bytes seemed to name
				return s.Event(raw, nil, nil)
			}
			// the same id: the same fields (the id is their hash); only the bytes differ
			s.c.alt.LoadOrStore(known, bytes.Clone(raw))
			e = known
		}
	}
	if !s.gridMatches(e, k) {
		return s.faulty(e, NotMatching, raw)
	}
	if s.gridSeen(k) {
		return s.faulty(e, Duplicate, raw)
	}
	return e, Valid
}

// Warm reads what EventAt(…, k, …) will touch (the filter's values, the
// seen bits of k), for a caller that loads many streams' state at once
// before checking (wire.KnownHandler.Warm): it changes nothing and returns
// a value computed from what it read.
func (s *Stream) Warm(k int) int {
	v := int(s.col) + int(s.group)
	if g := s.grid; g != nil && g.known == nil && k >= 0 && k < g.n {
		v += int(g.seen[k*g.cols+int(s.col)]) // a stream of its own: its row is its own
	}
	if f := s.Filter; f != nil && (s.grid == nil || s.group < 0) {
		if len(f.Kinds) > 0 {
			v += f.Kinds[0]
		}
		if len(f.Authors) > 0 && len(f.Authors[0]) > 0 {
			v += int(f.Authors[0][0])
		}
		if len(f.IDs) > 0 && len(f.IDs[0]) > 0 {
			v += int(f.IDs[0][0])
		}
		if f.Since != nil {
			v += int(*f.Since)
		}
		if f.Until != nil {
			v += int(*f.Until)
		}
	}
	return v
}

// Events checks each raw event of an answer: the valid ones, parsed, and
// how many were invalid.
func (c *Checker) Events(raws [][]byte) (evs []*nostr.Event, invalid int64) {
	for _, raw := range raws {
		if e, ok := c.Check(raw); ok {
			evs = append(evs, e)
		} else {
			invalid++
		}
	}
	return evs, invalid
}

// NewStream starts checking an answer to f.
func (c *Checker) NewStream(f *nostr.Filter) *Stream {
	return &Stream{Filter: f, seen: map[string]struct{}{}, c: c}
}

// Event checks one event of the stream. When relaybench published this
// event itself, known is the event and published its exact bytes: a
// byte-identical delivery then needs no parsing or signature check; any other
// bytes are checked in full.
func (s *Stream) Event(raw []byte, known *nostr.Event, published []byte) (*nostr.Event, Fault) {
	var e *nostr.Event
	if known != nil && Same(raw, published) {
		e = known
	} else {
		var ok bool
		if e, ok = s.c.Check(raw); !ok {
			return s.faulty(nil, Invalid, raw)
		}
	}
	if s.Filter != nil && !s.Filter.Matches(e) {
		return s.faulty(e, NotMatching, raw)
	}
	if _, dup := s.seen[e.ID]; dup {
		return s.faulty(e, Duplicate, raw)
	}
	s.seen[e.ID] = struct{}{}
	return e, Valid
}

// Book counts one event with fault f into v: every event counts as
// returned; a fault also counts as invalid, not matching or duplicated.
func Book(v *results.Verification, f Fault) {
	v.Returned++
	switch f {
	case Invalid:
		v.Invalid++
	case NotMatching:
		v.NotMatching++
	case Duplicate:
		v.Duplicated++
	}
}
