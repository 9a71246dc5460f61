package embedded

import (
	"context"
	"errors"
	"sync"

	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
	"github.com/nbd-wtf/go-nostr/nip77/negentropy"
	"github.com/nbd-wtf/go-nostr/nip77/negentropy/storage/vector"
)

var errNotAuthor = errors.New("blocked: you are not the author of this event")

// sub is one open subscription (REQ) of a connection. It sends each event
// at most once, whether it matches one filter or several, and whether it
// comes from the store or live.
type sub struct {
	c       *conn
	id      string
	filters []nostr.Filter // fixed once registered
	search  [][]string     // per filter: its NIP-50 search terms, nil if none
	cancel  context.CancelFunc

	mu     sync.Mutex
	closed bool
	eosed  bool
	// sent holds the ids of the events sent before EOSE, stored or live;
	// after EOSE, only those of stored events whose broadcast was still to
	// come (saved during the query, broadcast after it).
	sent map[[32]byte]struct{}
}

// onReq opens a subscription, replacing the connection's subscription with
// the same id (NIP-01: "a new subscription is created, replacing the old
// one"). The old one sends nothing once this returns.
func (c *conn) onReq(e *nostr.ReqEnvelope) {
	c.closeSub(e.SubscriptionID)
	s := &sub{c: c, id: e.SubscriptionID, filters: make([]nostr.Filter, len(e.Filters)), sent: map[[32]byte]struct{}{}}
	for i, f := range e.Filters {
		capLimit(&f)
		s.filters[i] = f
		if f.Search != "" {
			if s.search == nil {
				s.search = make([][]string, len(e.Filters))
			}
			s.search[i] = searchTerms(f.Search)
		}
	}
	ctx, cancel := context.WithCancel(c.ctx)
	s.cancel = cancel
	c.subs[s.id] = s
	c.r.register(s)
	go s.stored(ctx)
}

// capLimit applies MaxLimit to a filter without a limit or above it.
func capLimit(f *nostr.Filter) {
	if !f.LimitZero && (f.Limit <= 0 || f.Limit > MaxLimit) {
		f.Limit = MaxLimit
	}
}

// closeSub ends the subscription with this id, if any (CLOSE).
func (c *conn) closeSub(id string) {
	if s := c.subs[id]; s != nil {
		delete(c.subs, id)
		c.r.unregister(s)
		s.close()
	}
}

func (s *sub) close() {
	s.mu.Lock()
	s.closed = true
	s.sent = nil
	s.mu.Unlock()
	s.cancel()
}

// stored sends the stored events of every filter, then EOSE. A store error
// ends the subscription with CLOSED.
func (s *sub) stored(ctx context.Context) {
	for _, f := range s.filters {
		if f.LimitZero {
			continue
		}
		ch, err := s.c.r.query(ctx, f)
		if err != nil {
			s.c.r.unregister(s)
			s.mu.Lock()
			if !s.closed {
				s.c.send(nostr.ClosedEnvelope{SubscriptionID: s.id, Reason: nostr.NormalizeOKMessage(err.Error(), "error")})
			}
			s.mu.Unlock()
			s.close()
			return
		}
		if ch == nil {
			continue
		}
		for ev := range ch {
			s.deliver(ev, false)
		}
	}
	s.eose()
}

// eose sends EOSE and keeps, of the ids sent, those whose event is still
// being stored: only these can still arrive live (storing marks an event
// from before it is saved until after its broadcast).
func (s *sub) eose() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.c.send(nostr.EOSEEnvelope(s.id))
	s.eosed = true
	r := s.c.r
	var keep map[[32]byte]struct{}
	r.pendMu.Lock()
	for id := range s.sent {
		if _, busy := r.pending[id]; busy {
			if keep == nil {
				keep = map[[32]byte]struct{}{}
			}
			keep[id] = struct{}{}
		}
	}
	r.pendMu.Unlock()
	s.sent = keep
}

// deliver sends ev unless the subscription is closed or has sent it.
func (s *sub) deliver(ev *nostr.Event, live bool) {
	id, ok := parseID(ev.ID)
	b, err := nostr.EventEnvelope{SubscriptionID: &s.id, Event: *ev}.MarshalJSON()
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if ok {
		if _, dup := s.sent[id]; dup {
			return
		}
		if !live || !s.eosed {
			s.sent[id] = struct{}{}
		}
	}
	s.c.write(b)
}

// matches reports whether a live event matches one of the filters.
func (s *sub) matches(ev *nostr.Event) bool {
	for i := range s.filters {
		if s.filters[i].Matches(ev) && (s.search == nil || s.search[i] == nil || contentMatches(s.search[i], ev.Content)) {
			return true
		}
	}
	return false
}

func (r *Relay) register(s *sub) {
	r.subMu.Lock()
	r.subs[s] = struct{}{}
	r.subMu.Unlock()
}

func (r *Relay) unregister(s *sub) {
	r.subMu.Lock()
	delete(r.subs, s)
	r.subMu.Unlock()
}

// broadcast sends a newly accepted event to every subscription it matches.
func (r *Relay) broadcast(ev *nostr.Event) {
	var buf [16]*sub
	hits := buf[:0]
	r.subMu.RLock()
	for s := range r.subs {
		if s.matches(ev) {
			hits = append(hits, s)
		}
	}
	r.subMu.RUnlock()
	for _, s := range hits {
		s.deliver(ev, true)
	}
}

// negentropy builds a NIP-77 session over every stored event matching f
// (up to MaxNegentropy).
func (r *Relay) negentropy(ctx context.Context, f nostr.Filter) (*negentropy.Negentropy, error) {
	if f.LimitZero {
		return nil, errors.New("invalid: limit 0")
	}
	ch, err := r.query(eventstore.SetNegentropy(ctx), f)
	if err != nil {
		return nil, err
	}
	vec := vector.New()
	for ev := range chOrClosed(ch) {
		vec.Insert(ev.CreatedAt, ev.ID)
	}
	vec.Seal()
	return negentropy.New(vec, 1024*1024), nil
}

// chOrClosed is ch, or a closed channel when ch is nil.
func chOrClosed(ch chan *nostr.Event) chan *nostr.Event {
	if ch == nil {
		ch = make(chan *nostr.Event)
		close(ch)
	}
	return ch
}
