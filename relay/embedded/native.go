package embedded

import (
	"bytes"
	"container/heap"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"math"
	"sort"
	"strconv"
	"sync"

	badgerdb "github.com/dgraph-io/badger/v4"
	"github.com/fiatjaf/eventstore"
	"github.com/nbd-wtf/go-nostr"
)

// nativeStore is relaybench's own event store, the embedded relay's default:
// a badger v4 database with plain indexes, written so that every answer is
// the one NIP-01 asks for (the eventstore stores give wrong answers on some
// filters, see the package comment).
//
// Keys (ts = created_at encoded so that newer sorts first, id = 32 raw bytes,
// h = 8-byte FNV-1a hash; a hash collision only adds candidates, since every
// candidate is checked against the whole filter):
//
//	0x01 id                  → the event (native_codec.go)
//	0x02 ts id               every event
//	0x03 kind ts id          by kind
//	0x04 h(pubkey) ts id     by author
//	0x05 h(pubkey,kind) ts id by author and kind
//	0x06 h(name,value) ts id by tag, for every tag with a value (any name)
//	0x07 sha256(address)     → id of the live replaceable/addressable event
//
// A query uses the ids of the filter when it has some; otherwise it picks the
// index with the fewest entries in the since/until window among those the
// filter allows (author+kind, author, kind, each tag name), merges the
// index's prefixes (one per author, kind or tag value) newest first, checks
// each candidate against the whole filter and stops at the limit. Answers are
// newest first, ties by lowest id: exactly the first `limit` events of the
// NIP-01 order. A NIP-50 search is one more condition on each candidate
// (search.go): there is no text index, so a search walks the index the rest
// of the filter picks until it has `limit` matches.
//
// All writes go through one goroutine that commits them in groups (group
// commit), so writes never conflict and replacement is atomic: replaceable
// kinds (0, 3, 10000–19999) keep the newest event per pubkey and kind,
// addressable kinds (30000–39999) per pubkey, kind and d tag, the lower id
// winning on equal created_at. Ephemeral kinds are not stored. A second copy
// of a stored event is refused with eventstore.ErrDupEvent.
type nativeStore struct {
	path     string
	maxLimit int
	logger   *log.Logger

	db   *badgerdb.DB
	ops  chan *nativeOp
	done chan struct{} // closed when the writer has stopped

	mu     sync.RWMutex // guards closed; held (read) while an operation uses db
	closed bool
}

var (
	_ eventstore.Store   = (*nativeStore)(nil)
	_ eventstore.Counter = (*nativeStore)(nil)
)

const (
	nPrimary    byte = 0x01
	nAll        byte = 0x02
	nKind       byte = 0x03
	nAuthor     byte = 0x04
	nAuthorKind byte = 0x05
	nTag        byte = 0x06
	nAddr       byte = 0x07
	nVersion    byte = 0xff

	nativeFormat = "relaybench-native-1"

	suffixLen     = 8 + 32 // ts id, the end of every index key
	maxWriteBatch = 256    // events committed in one transaction at most
	probeBudget   = 512    // index entries counted per candidate index when choosing
)

var errStoreClosed = errors.New("error: store is closed")

func newNativeStore(path string, maxLimit int, logger *log.Logger) *nativeStore {
	return &nativeStore{path: path, maxLimit: maxLimit, logger: logger}
}

// Init opens (or creates) the database and starts the writer.
func (s *nativeStore) Init() error {
	opts := badgerdb.DefaultOptions(s.path).
		WithLogger(badgerLogger{s.logger}).
		WithDetectConflicts(false) // one writer: nothing to detect
	db, err := badgerdb.Open(opts)
	if err != nil {
		return err
	}
	err = db.Update(func(txn *badgerdb.Txn) error {
		item, err := txn.Get([]byte{nVersion})
		if errors.Is(err, badgerdb.ErrKeyNotFound) {
			return txn.Set([]byte{nVersion}, []byte(nativeFormat))
		}
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			if string(v) != nativeFormat {
				return fmt.Errorf("data written by another store format (%q, want %q)", v, nativeFormat)
			}
			return nil
		})
	})
	if err != nil {
		db.Close()
		return err
	}
	s.db = db
	s.ops = make(chan *nativeOp, maxWriteBatch)
	s.done = make(chan struct{})
	go s.writer()
	return nil
}

// Close stops the writer once queued writes are done and closes the database.
func (s *nativeStore) Close() {
	s.mu.Lock()
	if s.closed || s.db == nil {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	close(s.ops)
	<-s.done
	s.db.Close()
}

// --- writing ---

type nativeOp struct {
	ev  *nostr.Event
	del bool
	res chan error
}

// SaveEvent stores ev (with replacement semantics for replaceable and
// addressable kinds); eventstore.ErrDupEvent if it is already stored.
func (s *nativeStore) SaveEvent(_ context.Context, ev *nostr.Event) error {
	return s.write(&nativeOp{ev: ev})
}

// ReplaceEvent is SaveEvent: saving always applies replacement.
func (s *nativeStore) ReplaceEvent(_ context.Context, ev *nostr.Event) error {
	return s.write(&nativeOp{ev: ev})
}

// DeleteEvent removes the stored event with ev's id, if any.
func (s *nativeStore) DeleteEvent(_ context.Context, ev *nostr.Event) error {
	return s.write(&nativeOp{ev: ev, del: true})
}

func (s *nativeStore) write(op *nativeOp) error {
	op.res = make(chan error, 1)
	s.mu.RLock()
	if s.closed || s.db == nil {
		s.mu.RUnlock()
		return errStoreClosed
	}
	s.ops <- op
	s.mu.RUnlock()
	return <-op.res
}

// writer applies queued operations, as many as are waiting (up to
// maxWriteBatch) per transaction.
func (s *nativeStore) writer() {
	defer close(s.done)
	batch := make([]*nativeOp, 0, maxWriteBatch)
	for op := range s.ops {
		batch = append(batch[:0], op)
	more:
		for len(batch) < maxWriteBatch {
			select {
			case op, ok := <-s.ops:
				if !ok {
					break more
				}
				batch = append(batch, op)
			default:
				break more
			}
		}
		s.apply(batch)
	}
}

// apply runs batch in one transaction and answers each operation. A batch
// too big for one transaction is split in halves.
func (s *nativeStore) apply(batch []*nativeOp) {
	txn := s.db.NewTransaction(true)
	results := make([]error, len(batch))
	var fatal error
	for i, op := range batch {
		if op.del {
			fatal = s.deleteTxn(txn, op.ev.ID)
		} else {
			results[i], fatal = s.putTxn(txn, op.ev)
		}
		if fatal != nil {
			break
		}
	}
	if fatal == nil {
		fatal = txn.Commit()
	} else {
		txn.Discard()
	}
	if errors.Is(fatal, badgerdb.ErrTxnTooBig) && len(batch) > 1 {
		s.apply(batch[:len(batch)/2])
		s.apply(batch[len(batch)/2:])
		return
	}
	for i, op := range batch {
		switch {
		case results[i] != nil:
			op.res <- results[i]
		case fatal != nil:
			op.res <- fmt.Errorf("error: storing failed: %v", fatal)
		default:
			op.res <- nil
		}
	}
}

// putTxn stores ev in txn. result is what the publisher is told (nil,
// ErrDupEvent, a malformed id); fatal aborts the whole transaction. Every
// decision is made before the first write, so a non-nil result never leaves
// partial writes behind.
func (s *nativeStore) putTxn(txn *badgerdb.Txn, ev *nostr.Event) (result, fatal error) {
	if nostr.IsEphemeralKind(ev.Kind) {
		return nil, nil // ephemeral events are never stored
	}
	id, ok := parseID(ev.ID)
	if !ok {
		return errors.New("invalid: malformed event id"), nil
	}
	if _, err := txn.Get(primaryKey(id)); err == nil {
		return eventstore.ErrDupEvent, nil
	} else if !errors.Is(err, badgerdb.ErrKeyNotFound) {
		return nil, err
	}
	raw := encodeEvent(ev, id)
	if addr, ok := addressKey(ev); ok {
		oldID, found, err := getID(txn, addr)
		if err != nil {
			return nil, err
		}
		if found {
			old, err := loadTxn(txn, oldID)
			switch {
			case err == nil:
				if newer(old, ev) {
					return nil, nil // a newer version is stored: accepted, not kept
				}
				if err := removeTxn(txn, old, oldID); err != nil {
					return nil, err
				}
			case errors.Is(err, badgerdb.ErrKeyNotFound):
				// stale pointer: nothing to replace
			default:
				return nil, err
			}
		}
		if err := txn.Set(addr, id[:]); err != nil {
			return nil, err
		}
	}
	if err := txn.Set(primaryKey(id), raw); err != nil {
		return nil, err
	}
	for _, k := range indexKeys(ev, id) {
		if err := txn.Set(k, nil); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// deleteTxn removes the event with id hexID, if stored.
func (s *nativeStore) deleteTxn(txn *badgerdb.Txn, hexID string) error {
	id, ok := parseID(hexID)
	if !ok {
		return nil
	}
	ev, err := loadTxn(txn, id)
	if errors.Is(err, badgerdb.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if addr, ok := addressKey(ev); ok {
		cur, found, err := getID(txn, addr)
		if err != nil {
			return err
		}
		if found && cur == id {
			if err := txn.Delete(addr); err != nil {
				return err
			}
		}
	}
	return removeTxn(txn, ev, id)
}

// removeTxn deletes ev's primary record and index entries (not its address
// pointer, which the caller overwrites or deletes).
func removeTxn(txn *badgerdb.Txn, ev *nostr.Event, id [32]byte) error {
	if err := txn.Delete(primaryKey(id)); err != nil {
		return err
	}
	for _, k := range indexKeys(ev, id) {
		if err := txn.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

func getID(txn *badgerdb.Txn, key []byte) (id [32]byte, found bool, err error) {
	item, err := txn.Get(key)
	if errors.Is(err, badgerdb.ErrKeyNotFound) {
		return id, false, nil
	}
	if err != nil {
		return id, false, err
	}
	err = item.Value(func(v []byte) error {
		if len(v) != 32 {
			return fmt.Errorf("corrupt address entry")
		}
		copy(id[:], v)
		return nil
	})
	return id, err == nil, err
}

func loadTxn(txn *badgerdb.Txn, id [32]byte) (*nostr.Event, error) {
	item, err := txn.Get(primaryKey(id))
	if err != nil {
		return nil, err
	}
	var ev *nostr.Event
	err = item.Value(func(v []byte) (err error) {
		ev, err = decodeEvent(v)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("event %x: %w", id, err)
	}
	return ev, nil
}

// newer reports whether a wins over b as the live version of a replaceable
// event: created later, or at the same second with the lower id.
func newer(a, b *nostr.Event) bool {
	if a.CreatedAt != b.CreatedAt {
		return a.CreatedAt > b.CreatedAt
	}
	return a.ID < b.ID
}

// --- keys ---

// parseID decodes a 64-character lowercase hex id.
func parseID(s string) (id [32]byte, ok bool) {
	if len(s) != 64 {
		return id, false
	}
	for i := 0; i < 32; i++ {
		hi, ok1 := unhex(s[2*i])
		lo, ok2 := unhex(s[2*i+1])
		if !ok1 || !ok2 {
			return id, false
		}
		id[i] = hi<<4 | lo
	}
	return id, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

func primaryKey(id [32]byte) []byte {
	k := make([]byte, 33)
	k[0] = nPrimary
	copy(k[1:], id[:])
	return k
}

// tsEnc orders created_at newest first under bytewise comparison.
func tsEnc(ts int64) uint64 { return ^(uint64(ts) ^ (1 << 63)) }

func kindEnc(k int) uint64 { return uint64(int64(k)) ^ (1 << 63) }

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvAdd(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// fnvLen hashes a length, so that ("ab","c") and ("a","bc") differ.
func fnvLen(h uint64, n int) uint64 {
	for i := 0; i < 8; i++ {
		h ^= uint64(byte(n >> (8 * i)))
		h *= fnvPrime
	}
	return h
}

func authorHash(pk string) uint64 { return fnvAdd(fnvOffset, pk) }

func authorKindHash(pk string, kind int) uint64 {
	return fnvAdd(fnvLen(fnvAdd(fnvOffset, pk), len(pk)), strconv.Itoa(kind))
}

func tagHash(name, value string) uint64 {
	return fnvAdd(fnvAdd(fnvLen(fnvOffset, len(name)), name), value)
}

// prefix builds an index prefix: the index byte and an optional 8-byte value.
func prefix(index byte, v uint64, withV bool) []byte {
	if !withV {
		return []byte{index}
	}
	k := make([]byte, 9)
	k[0] = index
	binary.BigEndian.PutUint64(k[1:], v)
	return k
}

// addressKey is the key of ev's replacement slot; false for kinds that are
// not replaceable or addressable.
func addressKey(ev *nostr.Event) ([]byte, bool) {
	var h [32]byte
	switch {
	case nostr.IsReplaceableKind(ev.Kind):
		h = sha256.Sum256([]byte("r:" + strconv.Itoa(ev.Kind) + ":" + ev.PubKey))
	case nostr.IsAddressableKind(ev.Kind):
		h = sha256.Sum256([]byte("a:" + strconv.Itoa(ev.Kind) + ":" + ev.PubKey + ":" + ev.Tags.GetD()))
	default:
		return nil, false
	}
	return append([]byte{nAddr}, h[:]...), true
}

// indexKeys returns every index entry of ev.
func indexKeys(ev *nostr.Event, id [32]byte) [][]byte {
	var suffix [suffixLen]byte
	binary.BigEndian.PutUint64(suffix[:8], tsEnc(int64(ev.CreatedAt)))
	copy(suffix[8:], id[:])
	keys := make([][]byte, 0, 4+len(ev.Tags))
	add := func(p []byte) { keys = append(keys, append(p, suffix[:]...)) }
	add([]byte{nAll})
	add(prefix(nKind, kindEnc(ev.Kind), true))
	add(prefix(nAuthor, authorHash(ev.PubKey), true))
	add(prefix(nAuthorKind, authorKindHash(ev.PubKey, ev.Kind), true))
	seen := make(map[uint64]bool, len(ev.Tags))
	for _, t := range ev.Tags {
		if len(t) < 2 {
			continue
		}
		h := tagHash(t[0], t[1])
		if seen[h] {
			continue
		}
		seen[h] = true
		add(prefix(nTag, h, true))
	}
	return keys
}

// --- querying ---

// QueryEvents returns the newest events matching f (at most f.Limit, and at
// most maxLimit, or MaxNegentropy for a NIP-77 session; no limit means that
// cap), newest first, on a buffered channel that is already closed.
func (s *nativeStore) QueryEvents(ctx context.Context, f nostr.Filter) (chan *nostr.Event, error) {
	var evs []*nostr.Event
	limit, most := f.Limit, s.maxLimit
	if eventstore.IsNegentropySession(ctx) {
		most = MaxNegentropy // NIP-77 reconciles the whole set, not a page
	}
	if limit <= 0 || limit > most {
		limit = most
	}
	err := s.find(f, limit, func(ev *nostr.Event) { evs = append(evs, ev) })
	if err != nil {
		return nil, err
	}
	ch := make(chan *nostr.Event, len(evs))
	for _, ev := range evs {
		ch <- ev
	}
	close(ch)
	return ch, nil
}

// CountEvents counts every stored event matching f (no limit applies).
func (s *nativeStore) CountEvents(_ context.Context, f nostr.Filter) (int64, error) {
	var n int64
	err := s.find(f, math.MaxInt, func(*nostr.Event) { n++ })
	return n, err
}

// matcher is NIP-01 filter matching, with relaybench's verifier semantics:
// an empty ids, authors or kinds list does not constrain; a tag condition
// with no values matches nothing.
type matcher struct {
	ids     map[string]struct{}
	authors map[string]struct{}
	kinds   map[int]struct{}
	tags    []tagCond
	since   int64
	until   int64
	search  []string // NIP-50 terms (search.go); nil: no search
}

type tagCond struct {
	name   string
	values map[string]struct{}
}

func newMatcher(f *nostr.Filter) *matcher {
	m := &matcher{since: math.MinInt64, until: math.MaxInt64}
	if len(f.IDs) > 0 {
		m.ids = set(f.IDs)
	}
	if len(f.Authors) > 0 {
		m.authors = set(f.Authors)
	}
	if len(f.Kinds) > 0 {
		m.kinds = make(map[int]struct{}, len(f.Kinds))
		for _, k := range f.Kinds {
			m.kinds[k] = struct{}{}
		}
	}
	names := make([]string, 0, len(f.Tags))
	for name := range f.Tags {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		m.tags = append(m.tags, tagCond{name: name, values: set(f.Tags[name])})
	}
	if f.Since != nil {
		m.since = int64(*f.Since)
	}
	if f.Until != nil {
		m.until = int64(*f.Until)
	}
	if f.Search != "" {
		m.search = searchTerms(f.Search)
	}
	return m
}

func set(vs []string) map[string]struct{} {
	m := make(map[string]struct{}, len(vs))
	for _, v := range vs {
		m[v] = struct{}{}
	}
	return m
}

// empty reports whether no event can match.
func (m *matcher) empty() bool {
	if m.since > m.until {
		return true
	}
	for _, t := range m.tags {
		if len(t.values) == 0 {
			return true
		}
	}
	return false
}

func (m *matcher) matches(ev *nostr.Event) bool {
	ts := int64(ev.CreatedAt)
	if ts < m.since || ts > m.until {
		return false
	}
	if m.ids != nil {
		if _, ok := m.ids[ev.ID]; !ok {
			return false
		}
	}
	if m.authors != nil {
		if _, ok := m.authors[ev.PubKey]; !ok {
			return false
		}
	}
	if m.kinds != nil {
		if _, ok := m.kinds[ev.Kind]; !ok {
			return false
		}
	}
	for _, c := range m.tags {
		found := false
		for _, t := range ev.Tags {
			if len(t) >= 2 && t[0] == c.name {
				if _, ok := c.values[t[1]]; ok {
					found = true
					break
				}
			}
		}
		if !found {
			return false
		}
	}
	return m.search == nil || contentMatches(m.search, ev.Content)
}

// find calls emit with the first `limit` events matching f, newest first
// (ties: lowest id first), read from one snapshot of the database.
func (s *nativeStore) find(f nostr.Filter, limit int, emit func(*nostr.Event)) error {
	if f.LimitZero {
		return nil // limit 0 asks for no stored events
	}
	m := newMatcher(&f)
	if m.empty() {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed || s.db == nil {
		return errStoreClosed
	}
	return s.db.View(func(txn *badgerdb.Txn) error {
		if len(f.IDs) > 0 {
			return findByID(txn, f.IDs, m, limit, emit)
		}
		it := txn.NewIterator(badgerdb.IteratorOptions{PrefetchValues: false})
		defer it.Close()
		prefixes := choosePrefixes(it, &f, m)
		return walk(txn, it, prefixes, m, limit, emit)
	})
}

func findByID(txn *badgerdb.Txn, ids []string, m *matcher, limit int, emit func(*nostr.Event)) error {
	var found []*nostr.Event
	seen := make(map[[32]byte]bool, len(ids))
	for _, s := range ids {
		id, ok := parseID(s)
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		ev, err := loadTxn(txn, id)
		if errors.Is(err, badgerdb.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if m.matches(ev) {
			found = append(found, ev)
		}
	}
	sort.Slice(found, func(i, j int) bool { return newer(found[i], found[j]) })
	for i, ev := range found {
		if i == limit {
			break
		}
		emit(ev)
	}
	return nil
}

// choosePrefixes returns the index prefixes to walk for f: those of the
// candidate index with the fewest entries in the time window.
func choosePrefixes(it *badgerdb.Iterator, f *nostr.Filter, m *matcher) [][]byte {
	var options [][][]byte
	switch {
	case len(f.Authors) > 0 && len(f.Kinds) > 0:
		var ps [][]byte
		for _, a := range uniq(f.Authors) {
			for _, k := range uniq(f.Kinds) {
				ps = append(ps, prefix(nAuthorKind, authorKindHash(a, k), true))
			}
		}
		options = append(options, ps)
	case len(f.Authors) > 0:
		var ps [][]byte
		for _, a := range uniq(f.Authors) {
			ps = append(ps, prefix(nAuthor, authorHash(a), true))
		}
		options = append(options, ps)
	case len(f.Kinds) > 0:
		var ps [][]byte
		for _, k := range uniq(f.Kinds) {
			ps = append(ps, prefix(nKind, kindEnc(k), true))
		}
		options = append(options, ps)
	}
	for _, c := range m.tags {
		var ps [][]byte
		for v := range c.values {
			ps = append(ps, prefix(nTag, tagHash(c.name, v), true))
		}
		options = append(options, ps)
	}
	switch len(options) {
	case 0:
		return [][]byte{{nAll}}
	case 1:
		return options[0]
	}
	best, bestN := 0, math.MaxInt
	for i, ps := range options {
		n := probeBudget + len(ps) // too many prefixes to probe: assume large
		if len(ps) <= 64 {
			n = count(it, ps, m, probeBudget)
		}
		if n < bestN {
			best, bestN = i, n
		}
		if n == 0 {
			break
		}
	}
	return options[best]
}

// uniq is vs without repeats, in order of first appearance.
func uniq[T comparable](vs []T) []T {
	out := make([]T, 0, len(vs))
	seen := make(map[T]bool, len(vs))
	for _, v := range vs {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// window returns the first key to seek to under p and the largest encoded
// created_at still inside the window.
func window(p []byte, m *matcher) (start []byte, maxEnc uint64) {
	start = make([]byte, len(p)+8, len(p)+suffixLen)
	copy(start, p)
	binary.BigEndian.PutUint64(start[len(p):], tsEnc(m.until))
	return start, tsEnc(m.since)
}

// count counts index entries in the time window under prefixes, stopping at
// budget.
func count(it *badgerdb.Iterator, prefixes [][]byte, m *matcher, budget int) int {
	n := 0
	for _, p := range prefixes {
		start, maxEnc := window(p, m)
		for it.Seek(start); it.ValidForPrefix(p); it.Next() {
			k := it.Item().Key()
			if len(k) != len(p)+suffixLen || binary.BigEndian.Uint64(k[len(p):]) > maxEnc {
				break
			}
			n++
			if n >= budget {
				return n
			}
		}
	}
	return n
}

// cursor reads one index prefix in chunks through a shared iterator.
type cursor struct {
	prefix []byte
	seek   []byte // next key to read from
	maxEnc uint64
	buf    [][suffixLen]byte
	pos    int
	chunk  int
	done   bool // nothing left after buf
}

func (c *cursor) fill(it *badgerdb.Iterator) {
	c.buf, c.pos = c.buf[:0], 0
	if c.done {
		return
	}
	p := len(c.prefix)
	for it.Seek(c.seek); it.ValidForPrefix(c.prefix); it.Next() {
		k := it.Item().Key()
		if len(k) != p+suffixLen {
			continue
		}
		if binary.BigEndian.Uint64(k[p:]) > c.maxEnc {
			break
		}
		var sfx [suffixLen]byte
		copy(sfx[:], k[p:])
		c.buf = append(c.buf, sfx)
		if len(c.buf) == c.chunk {
			c.seek = append(append(c.seek[:0], k...), 0) // just after k
			if c.chunk < 256 {
				c.chunk *= 2
			}
			return
		}
	}
	c.done = true
}

type cursorHeap []*cursor

func (h cursorHeap) Len() int { return len(h) }
func (h cursorHeap) Less(i, j int) bool {
	return bytes.Compare(h[i].buf[h[i].pos][:], h[j].buf[h[j].pos][:]) < 0
}
func (h cursorHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)   { *h = append(*h, x.(*cursor)) }
func (h *cursorHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// walk merges the prefixes newest first, loads each distinct candidate,
// emits those matching m and stops after limit.
func walk(txn *badgerdb.Txn, it *badgerdb.Iterator, prefixes [][]byte, m *matcher, limit int, emit func(*nostr.Event)) error {
	if limit <= 0 {
		return nil
	}
	chunk := min(limit, 16)
	h := make(cursorHeap, 0, len(prefixes))
	for _, p := range prefixes {
		start, maxEnc := window(p, m)
		c := &cursor{prefix: p, seek: start, maxEnc: maxEnc, chunk: chunk}
		c.fill(it)
		if len(c.buf) > 0 {
			h = append(h, c)
		}
	}
	heap.Init(&h)
	var last [suffixLen]byte
	first, emitted := true, 0
	for len(h) > 0 {
		c := h[0]
		sfx := c.buf[c.pos]
		c.pos++
		if c.pos == len(c.buf) {
			c.fill(it)
		}
		if len(c.buf) == 0 {
			heap.Pop(&h)
		} else {
			heap.Fix(&h, 0)
		}
		if !first && sfx == last {
			continue // the same event under two prefixes (two tag values)
		}
		first, last = false, sfx
		var id [32]byte
		copy(id[:], sfx[8:])
		ev, err := loadTxn(txn, id)
		if errors.Is(err, badgerdb.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if !m.matches(ev) {
			continue
		}
		emit(ev)
		if emitted++; emitted >= limit {
			return nil
		}
	}
	return nil
}
