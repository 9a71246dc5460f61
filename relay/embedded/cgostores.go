//go:build cgo && cgostores

// The lmdb and sqlite3 stores are C libraries (LMDB, SQLite) compiled by cgo,
// which takes minutes on a small machine; they exist to reproduce the wrong
// answers of eventstore v0.16.2 listed in the package doc, so the default
// build leaves them out: build with -tags cgostores to have them.

package embedded

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"time"
	"unsafe"

	lmdbgo "github.com/PowerDNS/lmdb-go/lmdb"
	"github.com/fiatjaf/eventstore"
	"github.com/fiatjaf/eventstore/lmdb"
	"github.com/fiatjaf/eventstore/sqlite3"
	"github.com/nbd-wtf/go-nostr"
)

// cgoStores are the stores that need cgo and the cgostores build tag
// (LMDB and SQLite are C libraries).
var cgoStores = []string{"lmdb", "sqlite3"}

// NotBuilt names the stores this build leaves out: none.
var NotBuilt map[string]string

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

// Close closes the store once no read transaction is open. eventstore's
// lmdb QueryEvents reads in a goroutine of its own that closes the events'
// channel before its transaction ends: a reader that drained the channel
// (the relay's in-flight count) can still be inside LMDB, and closing the
// environment under it crashes the process (seen under load). Close waits
// for the reader table to show no open transaction, at most readersWait.
func (s *lmdbStore) Close() {
	if env := lmdbEnvOf(s.LMDBBackend); env != nil {
		deadline := time.Now().Add(readersWait)
		for openReaders(env) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	s.LMDBBackend.Close()
}

const readersWait = 5 * time.Second

// lmdbEnvOf is the LMDB environment of b (an unexported field of
// eventstore v0.16.2's LMDBBackend); nil when it is not there.
func lmdbEnvOf(b *lmdb.LMDBBackend) *lmdbgo.Env {
	f := reflect.ValueOf(b).Elem().FieldByName("lmdbEnv")
	if !f.IsValid() || f.Kind() != reflect.Pointer || f.IsNil() || f.Type() != reflect.TypeOf((*lmdbgo.Env)(nil)) {
		return nil
	}
	return (*lmdbgo.Env)(unsafe.Pointer(f.Pointer()))
}

// openReaders reports whether env's reader table holds an open read
// transaction (a txnid other than "-").
func openReaders(env *lmdbgo.Env) bool {
	open := false
	env.ReaderList(func(text string) error {
		for _, line := range strings.Split(text, "\n") {
			// "pid thread txnid": the header, and "-" for a free slot.
			if f := strings.Fields(line); len(f) >= 3 && isDigits(f[0]) && f[2] != "-" {
				open = true
			}
		}
		return nil
	})
	return open
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
