package corpus

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/relaybench/relaybench/internal/owntemp"
	"github.com/relaybench/relaybench/nostr"
)

// A corpus file (cache format v2) holds the wire JSON itself, so that a
// corpus of any size is streamed from it instead of held in memory. All
// integers are little-endian:
//
//	"relaybench-corpus-wire v<CacheVersion> <key> <signer>\n"
//	u32 authors, then per author: secret[32], pubkey hex[64]
//	u64 events
//	per event: its compact wire JSON (nostr.Event.AppendJSON), then '\n'
//	(events+1) × u64: the file offset of each event's JSON, then the end
//	u32 CRC-32C of everything before it
//
// The file is mapped read-only: an event's Raw is a slice of the mapping
// (no copy, no heap), its id is bytes 7–71 of its JSON, and the Event
// struct is parsed from the JSON only when a caller needs its fields.
// Pages already sent can be given back (Corpus.ReleaseBefore), so that a
// run's resident memory does not grow with the corpus. Mappings are never
// unmapped: a Raw slice stays valid for the life of the process.

// CacheVersion is the layout of the corpus file. It is not part of the
// corpus key (FormatVersion is): the same Params give the same events and
// key in either layout. Version 1 files (corpus-KEY.bin: binary fields, the
// JSON rebuilt on load) are converted once when found.
const CacheVersion = 2

// DefaultStreamAbove is the corpus size above which a corpus is streamed
// from its file rather than held in memory (Options.StreamAbove).
const DefaultStreamAbove = 50_000

// readAhead is how far past the released events the kernel is asked to
// read ahead.
const readAhead = 32 << 20

// store is a mapped corpus file.
type store struct {
	data  []byte // the whole file, mapped read-only
	index []byte // (n+1) u64 offsets, inside data
	n     int
	path  string

	mu sync.Mutex // serializes releases

	strs stringSpill // decoded contents of parsed events, off the heap (lean.go)
}

func (s *store) off(i int) int { return int(binary.LittleEndian.Uint64(s.index[8*i:])) }

// raw is the wire JSON of event i, a slice of the mapping.
func (s *store) raw(i int) []byte {
	a, b := s.off(i), s.off(i+1)-1
	return s.data[a:b:b]
}

func (s *store) size(i int) int { return s.off(i+1) - s.off(i) - 1 }

// id is the hex id of event i: AppendJSON writes it first.
func (s *store) id(i int) []byte {
	r := s.raw(i)
	if len(r) > 72 && string(r[:7]) == `{"id":"` && r[71] == '"' {
		return r[7:71]
	}
	return nil
}

// releaseBefore gives back the resident pages of the events before i (the
// kernel reads them again from the page cache if they are touched later).
// It gives back everything before i each time, not only what the last call
// left: a sender that touches an event late (it waited for a window slot
// while others went on) maps its pages again, and the kernel maps the
// cached pages around a faulting one too (fault-around). Walking the
// already empty part of the mapping is cheap.
func (s *store) releaseBefore(i int) {
	i = min(i, s.n)
	s.mu.Lock()
	defer s.mu.Unlock()
	page := os.Getpagesize()
	drop := func(lo, hi int) {
		lo, hi = lo/page*page, hi/page*page // the page holding hi stays
		if hi > lo {
			_ = syscall.Madvise(s.data[lo:hi], syscall.MADV_DONTNEED)
		}
	}
	hi := s.off(i)
	drop(0, hi)
	ix := len(s.data) - 4 - len(s.index) // the index's offset in the file
	drop(ix, ix+8*i)
	// and read ahead what comes next (the file may not be in the page
	// cache: a fault on the sending path would stall the sender)
	if end := min(s.off(s.n), hi+readAhead); end > hi {
		_ = syscall.Madvise(s.data[hi/page*page:end], syscall.MADV_WILLNEED)
	}
}

// Len is the number of events.
func (c *Corpus) Len() int {
	if c.store != nil {
		return c.store.n
	}
	return len(c.Events)
}

// Streamed reports whether the corpus is streamed from its file: Events and
// Raw are then nil (call Materialize to fill them); RawAt, IDAt, SizeAt and
// EventAt work for every corpus.
func (c *Corpus) Streamed() bool { return c.store != nil && c.Events == nil }

// RawAt is the wire JSON of event i (Raw[i]).
func (c *Corpus) RawAt(i int) []byte {
	if c.Raw != nil {
		return c.Raw[i]
	}
	return c.store.raw(i)
}

// SizeAt is len(RawAt(i)), read from the index without touching the event.
func (c *Corpus) SizeAt(i int) int {
	if c.store != nil {
		return c.store.size(i)
	}
	return len(c.Raw[i])
}

// IDAt is the id of event i.
func (c *Corpus) IDAt(i int) string {
	if c.Events != nil {
		return c.Events[i].ID
	}
	if id := c.store.id(i); id != nil {
		return string(id)
	}
	e, err := c.EventAt(i)
	if err != nil {
		return ""
	}
	return e.ID
}

// EventAt is event i: Events[i], or parsed from its JSON when streamed (a
// new struct each call: do not keep many).
func (c *Corpus) EventAt(i int) (*nostr.Event, error) {
	if c.Events != nil {
		return c.Events[i], nil
	}
	return c.parseMapped(c.store.raw(i))
}

// Scan calls fn with every event in order (parsed one at a time when the
// corpus is streamed, its pages given back as it goes, so that a scan of
// any corpus keeps the resident memory flat). It stops at fn's first error.
func (c *Corpus) Scan(fn func(i int, e *nostr.Event) error) error {
	for i := range c.Len() {
		e, err := c.EventAt(i)
		if err == nil {
			err = fn(i, e)
		}
		if err != nil {
			return err
		}
		if i%4096 == 4095 {
			c.ReleaseBefore(i)
		}
	}
	c.ReleaseBefore(c.Len())
	return nil
}

// ReleaseBefore tells the corpus that events before i have been sent: their
// pages of a streamed (or mapped) corpus stop counting in the process's
// resident memory. Reading them again later is correct, only slower. Safe
// for concurrent use; a no-op for a corpus held in memory.
func (c *Corpus) ReleaseBefore(i int) {
	if c.store != nil {
		c.store.releaseBefore(i)
	}
}

// Materialize fills Events and Raw of a streamed corpus (Raw slices the
// mapping; Events are parsed, their content and sig left in the mapping:
// a few hundred bytes of heap per event, see parseMapped), for
// callers that index them directly. A no-op when they are filled.
func (c *Corpus) Materialize() error {
	if c.Events != nil || c.store == nil {
		return nil
	}
	n := c.store.n
	raw := make([][]byte, n)
	evs := make([]*nostr.Event, n)
	for i := range raw {
		raw[i] = c.store.raw(i)
	}
	nw := workers(0)
	chunk := max(1, (n+nw-1)/nw)
	errs := make([]error, nw)
	var wg sync.WaitGroup
	for w, lo := 0, 0; lo < n; w, lo = w+1, lo+chunk {
		hi := min(n, lo+chunk)
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				e, err := c.parseMapped(raw[i])
				if err != nil {
					errs[w] = fmt.Errorf("event %d: %w", i, err)
					return
				}
				evs[i] = e
				if i%4096 == 4095 || i == hi-1 {
					c.store.releaseRange(max(lo, i/4096*4096), i+1) // lean.go
				}
			}
		})
	}
	wg.Wait()
	c.ReleaseBefore(n)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	c.Events, c.Raw = evs, raw
	return nil
}

func (c *Corpus) indexAuthors() {
	c.pubkeys = make(map[string]string, len(c.Authors))
	for _, a := range c.Authors {
		c.pubkeys[a.PubKey] = a.PubKey
	}
}

func header2(key, signer string) string {
	return fmt.Sprintf("relaybench-corpus-wire v%d %s %s\n", CacheVersion, key, signer)
}

// fileWriter writes a corpus file event by event (one goroutine).
type fileWriter struct {
	f     *os.File
	crc   hash.Hash32
	w     *bufio.Writer
	pos   int64
	offs  *spillTable // file offset (u64) of each event written so far (count)
	count int
	n     int
	err   error
}

// newFileWriter creates a temporary file in dir and writes the header.
func newFileWriter(dir, prefix, key, signer string, authors []Author, n int) (*fileWriter, error) {
	f, err := owntemp.File(dir, prefix)
	if err != nil {
		return nil, err
	}
	fw := &fileWriter{f: f, crc: crc32.New(castagnoli), n: n, offs: newSpillTable(8, offsChunk, spillKeep, dir)}
	fw.w = bufio.NewWriterSize(io.MultiWriter(f, fw.crc), 1<<20)
	var b []byte
	b = append(b, header2(key, signer)...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(authors)))
	for _, a := range authors {
		b = append(b, a.Secret[:]...)
		b = append(b, a.PubKey...)
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(n))
	fw.write(b)
	return fw, fw.err
}

func (fw *fileWriter) write(b []byte) {
	if fw.err != nil {
		return
	}
	_, fw.err = fw.w.Write(b)
	fw.pos += int64(len(b))
}

// add writes the next event's wire JSON.
func (fw *fileWriter) add(raw []byte) {
	if fw.count == fw.n {
		fw.err = fmt.Errorf("corpus file: more than the %d events announced", fw.n)
		return
	}
	if fw.err != nil {
		return
	}
	o, err := fw.offs.next()
	if err != nil {
		fw.err = err
		return
	}
	binary.LittleEndian.PutUint64(o, uint64(fw.pos))
	fw.count++
	fw.write(raw)
	fw.write([]byte{'\n'})
}

// flush makes everything added readable with readRaw.
func (fw *fileWriter) flush() error {
	if fw.err == nil {
		fw.err = fw.w.Flush()
	}
	return fw.err
}

// readRaw reads back event i (flushed: count and pos are a snapshot taken
// after it, under the lock that published them) from the file.
func (fw *fileWriter) readRaw(i, count int, pos int64) ([]byte, error) {
	var o [8]byte
	if err := fw.offs.read(i, o[:]); err != nil {
		return nil, err
	}
	start := int64(binary.LittleEndian.Uint64(o[:]))
	end := pos
	if i+1 < count {
		if err := fw.offs.read(i+1, o[:]); err != nil {
			return nil, err
		}
		end = int64(binary.LittleEndian.Uint64(o[:]))
	}
	if end <= start || end > pos {
		return nil, fmt.Errorf("corpus file: bad offsets %d, %d for event %d", start, end, i)
	}
	b := make([]byte, end-start-1)
	_, err := fw.f.ReadAt(b, start)
	return b, err
}

// finish writes the index and the checksum and closes the file.
func (fw *fileWriter) finish() error {
	if fw.count != fw.n && fw.err == nil {
		fw.err = fmt.Errorf("corpus file: %d events written, %d announced", fw.count, fw.n)
	}
	end := uint64(fw.pos)
	if err := fw.offs.writeTo(fw.write, fw.count, make([]byte, 256<<10)); err != nil && fw.err == nil {
		fw.err = err
	}
	fw.write(binary.LittleEndian.AppendUint64(nil, end))
	fw.offs.close()
	if err := fw.flush(); err != nil {
		fw.f.Close()
		return err
	}
	if _, err := fw.f.Write(binary.LittleEndian.AppendUint32(nil, fw.crc.Sum32())); err != nil {
		fw.f.Close()
		return err
	}
	return fw.f.Close()
}

// discard closes and removes an unfinished file.
func (fw *fileWriter) discard() {
	fw.offs.close()
	fw.f.Close()
	os.Remove(fw.f.Name())
}

// openStore maps a corpus file and checks its layout (and, when check is
// set, its checksum, read through a small buffer so that nothing of the
// file stays resident). It returns the store and the header's signer.
func openStore(path string, p Params, key string, check bool) (*store, []Author, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, "", err
	}
	size := st.Size()
	if size < 64 {
		return nil, nil, "", fmt.Errorf("%w: file too short", errCorrupt)
	}
	if int64(int(size)) != size {
		return nil, nil, "", fmt.Errorf("%w: file too large for this platform", errCorrupt)
	}
	if check {
		crc := crc32.New(castagnoli)
		if _, err := io.CopyBuffer(crc, io.NewSectionReader(f, 0, size-4), make([]byte, 1<<20)); err != nil {
			return nil, nil, "", err
		}
		var tail [4]byte
		if _, err := f.ReadAt(tail[:], size-4); err != nil {
			return nil, nil, "", err
		}
		if crc.Sum32() != binary.LittleEndian.Uint32(tail[:]) {
			return nil, nil, "", fmt.Errorf("%w: checksum mismatch", errCorrupt)
		}
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, "", fmt.Errorf("corpus: cannot map %s: %w", path, err)
	}
	_ = syscall.Madvise(data, syscall.MADV_SEQUENTIAL)
	s, authors, signer, err := parseStore(data, p, key)
	if err != nil {
		syscall.Munmap(data)
		return nil, nil, "", err
	}
	s.path, s.strs.dir = path, spillDir(path)
	// The header and index were read: give their pages back too.
	_ = syscall.Madvise(data, syscall.MADV_DONTNEED)
	return s, authors, signer, nil
}

func parseStore(data []byte, p Params, key string) (*store, []Author, string, error) {
	body := data[:len(data)-4]
	nl := strings.IndexByte(string(body[:min(len(body), 256)]), '\n')
	if nl < 0 {
		return nil, nil, "", fmt.Errorf("%w: no header", errCorrupt)
	}
	fields := strings.Fields(string(body[:nl]))
	if len(fields) != 4 || header2(key, fields[3]) != string(body[:nl+1]) {
		return nil, nil, "", fmt.Errorf("%w: header is not for key %s, layout v%d", errCorrupt, key, CacheVersion)
	}
	r := &reader{b: body, off: nl + 1}
	na := r.u32()
	if r.err != nil || na != p.Authors || !r.need(na*96) {
		return nil, nil, "", fmt.Errorf("%w: %d authors, want %d", errCorrupt, na, p.Authors)
	}
	authors := make([]Author, na)
	for i := range authors {
		copy(authors[i].Secret[:], body[r.off:])
		authors[i].PubKey = string(body[r.off+32 : r.off+96])
		r.off += 96
	}
	n := int(r.u64())
	if r.err != nil || n != p.Events {
		return nil, nil, "", fmt.Errorf("%w: %d events, want %d", errCorrupt, n, p.Events)
	}
	ix := len(body) - 8*(n+1)
	if ix < r.off {
		return nil, nil, "", fmt.Errorf("%w: truncated index", errCorrupt)
	}
	s := &store{data: data, index: body[ix:], n: n}
	// offsets must rise from the first event to the index (the records
	// themselves are not read: that would make the whole file resident)
	prev := r.off
	for i := 0; i <= n; i++ {
		o := s.off(i)
		if o < prev || o > ix || (i > 0 && o == prev) || (i == 0 && o != r.off) {
			return nil, nil, "", fmt.Errorf("%w: bad offset for event %d", errCorrupt, i)
		}
		prev = o
	}
	if prev != ix {
		return nil, nil, "", fmt.Errorf("%w: trailing data", errCorrupt)
	}
	return s, authors, fields[3], nil
}

// legacyCachePath is the version 1 cache file of key.
func legacyCachePath(dir, key string) string { return filepath.Join(dir, "corpus-"+key+".bin") }

// dropAll gives back every resident page of the mapping.
func (s *store) dropAll() { _ = syscall.Madvise(s.data, syscall.MADV_DONTNEED) }
