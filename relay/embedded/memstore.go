package embedded

import (
	"context"
	"sync"

	"github.com/fiatjaf/eventstore"
	"github.com/fiatjaf/eventstore/slicestore"
	"github.com/nbd-wtf/go-nostr"
)

// memStore makes eventstore's slicestore safe for concurrent use: in v0.16.2
// its SaveEvent, DeleteEvent and QueryEvents touch the slice without a lock,
// and khatru handles every message on its own goroutine, so concurrent
// publishes would lose events. Writes take the lock exclusively; a query
// collects its results under the read lock before delivering them.
type memStore struct {
	mu    sync.RWMutex
	inner slicestore.SliceStore
}

var (
	_ eventstore.Store   = (*memStore)(nil)
	_ eventstore.Counter = (*memStore)(nil)
)

func newMemStore(maxLimit int) *memStore {
	return &memStore{inner: slicestore.SliceStore{MaxLimit: maxLimit}}
}

func (m *memStore) Init() error { return m.inner.Init() }
func (m *memStore) Close()      { m.inner.Close() }

func (m *memStore) SaveEvent(ctx context.Context, ev *nostr.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.inner.SaveEvent(ctx, ev)
}

func (m *memStore) DeleteEvent(ctx context.Context, ev *nostr.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.inner.DeleteEvent(ctx, ev)
}

func (m *memStore) ReplaceEvent(ctx context.Context, ev *nostr.Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.inner.ReplaceEvent(ctx, ev)
}

func (m *memStore) CountEvents(ctx context.Context, f nostr.Filter) (int64, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.inner.CountEvents(ctx, f)
}

func (m *memStore) QueryEvents(ctx context.Context, f nostr.Filter) (chan *nostr.Event, error) {
	m.mu.RLock()
	in, err := m.inner.QueryEvents(context.Background(), f)
	if err != nil {
		m.mu.RUnlock()
		return nil, err
	}
	var evs []*nostr.Event
	for ev := range in {
		evs = append(evs, ev)
	}
	m.mu.RUnlock()
	out := make(chan *nostr.Event)
	go func() {
		defer close(out)
		for _, ev := range evs {
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}
