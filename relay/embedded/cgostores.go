//go:build cgo

package embedded

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/fiatjaf/eventstore"
	"github.com/fiatjaf/eventstore/lmdb"
	"github.com/fiatjaf/eventstore/sqlite3"
	"github.com/nbd-wtf/go-nostr"
)

// cgoStores are the stores that need cgo (LMDB and SQLite are C libraries).
var cgoStores = []string{"lmdb", "sqlite3"}

// sqliteParams make the sqlite3 store usable under concurrent load: khatru
// handles every message on its own goroutine and the database/sql pool opens
// several connections, so without a busy timeout concurrent writes fail with
// "database is locked". WAL lets queries run alongside the writer.
const sqliteParams = "?_busy_timeout=10000&_journal_mode=WAL"

// openCgoStore makes the lmdb or sqlite3 store in dir.
func openCgoStore(name, dir string) (eventstore.Store, error) {
	if name == "lmdb" {
		return &lmdbStore{LMDBBackend: &lmdb.LMDBBackend{Path: filepath.Join(dir, "lmdb"), MaxLimit: MaxLimit}}, nil
	}
	return &sqlite3.SQLite3Backend{
		DatabaseURL:       "file:" + filepath.Join(dir, "relay.sqlite3") + sqliteParams,
		QueryLimit:        MaxLimit,
		QueryIDsLimit:     MaxLimit,
		QueryAuthorsLimit: MaxLimit,
		QueryTagsLimit:    100,
	}, nil
}

// lmdbStore fixes duplicate detection in eventstore's lmdb store: in v0.16.2
// its SaveEvent only reports a duplicate when the id lookup fails with an
// error other than "not found", so an event found by id is saved a second
// time (and then returned twice by queries). SaveEvent here looks the id up
// first; the mutex makes look-up and save one step (lmdb serializes writers
// anyway).
type lmdbStore struct {
	*lmdb.LMDBBackend
	mu sync.Mutex
}

func (s *lmdbStore) SaveEvent(ctx context.Context, ev *nostr.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, err := s.LMDBBackend.QueryEvents(ctx, nostr.Filter{IDs: []string{ev.ID}})
	if err != nil {
		return err
	}
	found := false
	for range ch {
		found = true
	}
	if found {
		return eventstore.ErrDupEvent
	}
	return s.LMDBBackend.SaveEvent(ctx, ev)
}
