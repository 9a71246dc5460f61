package corpus

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/relaybench/relaybench/nostr"
)

// Version 1 cache file layout (read only, to convert it; see store.go for
// the current one; all integers little-endian):
//
//	"relaybench-corpus v<FormatVersion> <key> <signer>\n"
//	u32 authors, then per author: secret[32], pubkey hex[64]
//	u32 events, u64 total tags, u64 total tag values
//	per event: u32 author, i64 created_at, u32 kind, id hex[64], sig hex[128],
//	           u32 tags, per tag: u32 values, per value: u32 len, bytes;
//	           u32 content len, content bytes
//	u32 CRC-32C of everything before it
//
// The wire JSON is rebuilt on load with nostr.Event.AppendJSON, which is
// cheaper than parsing JSON. The checksum
// makes a truncated or corrupted file detectable; it is then regenerated.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// DefaultCacheDir is where corpora are cached when Options.CacheDir is "".
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("corpus: no cache directory: %w", err)
	}
	return filepath.Join(d, "relaybench", "corpus"), nil
}

// CachePath is the file that caches the corpus with the given key in dir
// (layout CacheVersion).
func CachePath(dir, key string) string { return filepath.Join(dir, "corpus-"+key+".wire") }

// Load returns the corpus for p (defaults applied): from the cache when an
// intact file for its key exists, else generated, signed on all cores and
// written to the cache as it is signed (a temporary file renamed at the
// end). A corrupt cache file is regenerated, not trusted. Cache problems
// never fail Load; they are reported in Corpus.CacheNote. A corpus of more
// than o.StreamAbove events is streamed from its file (Corpus.Streamed).
func Load(ctx context.Context, p Params, o Options) (*Corpus, error) {
	p = p.WithDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir := o.CacheDir
	if dir == "off" {
		return Generate(ctx, p, o)
	}
	if dir == "" {
		d, err := DefaultCacheDir()
		if err != nil {
			c, gerr := Generate(ctx, p, o)
			if c != nil {
				c.CacheNote = err.Error()
			}
			return c, gerr
		}
		dir = d
	}
	key := p.Key()
	path := CachePath(dir, key)
	note := ""
	c, err := openCache(path, p, key, o, true)
	if errors.Is(err, os.ErrNotExist) {
		c, err = convertLegacy(dir, path, p, key, o)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			note = fmt.Sprintf("cache file %s unusable (%v); regenerated", legacyCachePath(dir, key), err)
			err = os.ErrNotExist
		}
	}
	switch {
	case err == nil:
		if o.Progress != nil {
			o.Progress(c.Len(), c.Len())
		}
		return c, nil
	case errors.Is(err, os.ErrNotExist):
	default:
		note = fmt.Sprintf("cache file %s unusable (%v); regenerated", path, err)
	}
	c, err = generate(ctx, p, o, dir, path)
	if err != nil {
		return nil, err
	}
	if note != "" && c.CacheNote != "" {
		note += "; "
	}
	c.CacheNote = note + c.CacheNote
	return c, nil
}

// openCache opens the corpus file at path: streamed, or with Events and Raw
// filled when it is small enough.
func openCache(path string, p Params, key string, o Options, check bool) (*Corpus, error) {
	s, authors, signer, err := openStore(path, p, key, check)
	if err != nil {
		return nil, err
	}
	c := &Corpus{Params: p, Key: key, Signer: signer, Cached: true, Authors: authors, store: s}
	c.indexAuthors()
	c.Bytes = int64(s.off(s.n) - s.off(0) - s.n)
	if !o.streams(s.n) {
		if err := c.Materialize(); err != nil {
			return nil, fmt.Errorf("%w: %v", errCorrupt, err)
		}
		s.dropAll() // parsing touched every page
	}
	return c, nil
}

// convertLegacy rewrites a version 1 cache file of key, if there is one, in
// the current layout (the events, ids and signatures are the same) and
// opens that.
func convertLegacy(dir, path string, p Params, key string, o Options) (*Corpus, error) {
	old := legacyCachePath(dir, key)
	c, err := readCache(old, p, key, workers(o.Workers))
	if err != nil {
		return nil, err
	}
	if err := writeCorpusFile(dir, path, c); err != nil {
		return nil, err
	}
	os.Remove(old)
	return openCache(path, p, key, o, false)
}

// writeCorpusFile writes c to path through a temporary file and a rename.
func writeCorpusFile(dir, path string, c *Corpus) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("corpus: cannot write cache: %w", err)
	}
	fw, err := newFileWriter(dir, "."+filepath.Base(path)+".tmp-", c.Key, c.Signer, c.Authors, c.Len())
	if err != nil {
		return fmt.Errorf("corpus: cannot write cache: %w", err)
	}
	for i := range c.Len() {
		fw.add(c.RawAt(i))
	}
	name := fw.f.Name()
	err = fw.finish()
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
		return fmt.Errorf("corpus: cannot write cache %s: %w", path, err)
	}
	return nil
}

// header is the first line of a version 1 cache file.
func header(key, signer string) string {
	return fmt.Sprintf("relaybench-corpus v%d %s %s\n", FormatVersion, key, signer)
}

// errCorrupt marks a cache file that exists but cannot be trusted.
var errCorrupt = errors.New("corrupt")

// reader decodes the binary body; every read is bounds-checked.
type reader struct {
	b   []byte // the file
	s   string // the same bytes as a string: strings are sliced from it
	off int
	err error
}

func (r *reader) need(n int) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || n > len(r.b)-r.off {
		r.err = fmt.Errorf("%w: truncated at byte %d", errCorrupt, r.off)
		return false
	}
	return true
}

// take returns the next n bytes, or n zero bytes once the body is short.
func (r *reader) take(n int) []byte {
	if !r.need(n) {
		return make([]byte, n)
	}
	r.off += n
	return r.b[r.off-n : r.off]
}

func (r *reader) u32() int { return int(binary.LittleEndian.Uint32(r.take(4))) }

func (r *reader) u64() int64 { return int64(binary.LittleEndian.Uint64(r.take(8))) }

func (r *reader) str(n int) string {
	if !r.need(n) {
		return ""
	}
	s := r.s[r.off : r.off+n]
	r.off += n
	return s
}

// readCache loads and checks a cache file. It returns an error wrapping
// os.ErrNotExist when there is none.
func readCache(path string, p Params, key string, nw int) (*Corpus, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) < 4 {
		return nil, fmt.Errorf("%w: file too short", errCorrupt)
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", errCorrupt)
	}
	nl := strings.IndexByte(string(body[:min(len(body), 256)]), '\n')
	if nl < 0 {
		return nil, fmt.Errorf("%w: no header", errCorrupt)
	}
	fields := strings.Fields(string(body[:nl]))
	if len(fields) != 4 || header(key, fields[3]) != string(body[:nl+1]) {
		return nil, fmt.Errorf("%w: header is not for key %s, format v%d", errCorrupt, key, FormatVersion)
	}
	c := &Corpus{Params: p, Key: key, Signer: fields[3], Cached: true}
	r := &reader{b: body, s: string(body), off: nl + 1}

	na := r.u32()
	if na != p.Authors {
		return nil, fmt.Errorf("%w: %d authors, want %d", errCorrupt, na, p.Authors)
	}
	c.Authors = make([]Author, na)
	for i := range c.Authors {
		if !r.need(32 + 64) {
			return nil, r.err
		}
		copy(c.Authors[i].Secret[:], body[r.off:])
		r.off += 32
		c.Authors[i].PubKey = r.str(64)
	}
	n, ntags, nvals := r.u32(), r.u64(), r.u64()
	if r.err != nil {
		return nil, r.err
	}
	if n != p.Events || ntags < 0 || nvals < 0 || ntags > int64(len(body)) || nvals > int64(len(body)) {
		return nil, fmt.Errorf("%w: %d events, want %d", errCorrupt, n, p.Events)
	}
	slab := make([]nostr.Event, n)
	tagSlab := make([]nostr.Tag, ntags)
	valSlab := make([]string, nvals)
	c.Events = make([]*nostr.Event, n)
	for i := range slab {
		e := &slab[i]
		c.Events[i] = e
		ai := r.u32()
		if ai >= na {
			return nil, fmt.Errorf("%w: event %d has author %d", errCorrupt, i, ai)
		}
		e.PubKey = c.Authors[ai].PubKey
		e.CreatedAt = r.u64()
		e.Kind = r.u32()
		e.ID = r.str(64)
		e.Sig = r.str(128)
		nt := r.u32()
		if nt > len(tagSlab) {
			return nil, fmt.Errorf("%w: event %d has %d tags", errCorrupt, i, nt)
		}
		if nt > 0 {
			e.Tags, tagSlab = tagSlab[:nt:nt], tagSlab[nt:]
		}
		for t := range e.Tags {
			nv := r.u32()
			if nv > len(valSlab) {
				return nil, fmt.Errorf("%w: event %d tag %d has %d values", errCorrupt, i, t, nv)
			}
			vals := valSlab[:nv:nv]
			valSlab = valSlab[nv:]
			for k := range vals {
				vals[k] = r.str(r.u32())
			}
			e.Tags[t] = vals
		}
		e.Content = r.str(r.u32())
		if r.err != nil {
			return nil, r.err
		}
	}
	if r.off != len(body) || len(tagSlab) != 0 || len(valSlab) != 0 {
		return nil, fmt.Errorf("%w: trailing data or wrong tag counts", errCorrupt)
	}
	c.Raw = buildRaw(c.Events, nw)
	for _, b := range c.Raw {
		c.Bytes += int64(len(b))
	}
	return c, nil
}

// buildRaw renders the wire JSON of every event, in nw parallel chunks.
func buildRaw(evs []*nostr.Event, nw int) [][]byte {
	raw := make([][]byte, len(evs))
	chunk := (len(evs) + nw - 1) / nw
	var wg sync.WaitGroup
	for lo := 0; lo < len(evs); lo += chunk {
		hi := min(len(evs), lo+chunk)
		wg.Go(func() {
			size := 0
			for _, e := range evs[lo:hi] {
				size += 400 + len(e.Content)*11/10 + 80*len(e.Tags)
			}
			buf := make([]byte, 0, size)
			offs := make([]int, hi-lo+1)
			for i, e := range evs[lo:hi] {
				buf = e.AppendJSON(buf)
				offs[i+1] = len(buf)
			}
			for i := range offs[1:] {
				raw[lo+i] = buf[offs[i]:offs[i+1]:offs[i+1]]
			}
		})
	}
	wg.Wait()
	return raw
}
