package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"unsafe"

	"github.com/relaybench/relaybench/nostr"
)

// parseMapped decodes an event whose JSON lies in the corpus's mapping
// (never unmapped, never written): its content and signature stay in the
// mapping rather than copied onto the heap (nostr.ParseEventShared), which
// cuts a parsed event of 1 KB of content from about 2 KB of heap to a few
// hundred bytes. What filter matching and the verification model read (id,
// pubkey, kind, created_at, tags) stays on the heap, so that queries never
// bring the corpus's pages back into memory; reading Content or Sig later is
// correct, the page is read again from the page cache. A content with
// escape sequences (most have a newline) cannot be a slice of the JSON: its
// decoded text goes to the store's string spill, also a mapped file.
func (c *Corpus) parseMapped(raw []byte) (*nostr.Event, error) {
	e, err := nostr.ParseEventShared(raw, c.pubkeys, c.store.strs.keep)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	if len(e.Tags) == 0 {
		e.Tags = nil // as generated
	}
	return e, nil
}

// releaseRange gives back the resident pages that lie wholly inside events
// lo to hi-1 (a worker of Materialize done with its events; the pages it
// shares with its neighbours stay).
func (s *store) releaseRange(lo, hi int) {
	lo, hi = max(0, lo), min(hi, s.n)
	if hi <= lo {
		return
	}
	page := os.Getpagesize()
	a, b := (s.off(lo)+page-1)/page*page, s.off(hi)/page*page
	if b > a {
		_ = syscall.Madvise(s.data[a:b], syscall.MADV_DONTNEED)
	}
}

// stringSpill holds decoded strings (the contents of a mapped corpus that
// had escapes) off the heap: in an unlinked file next to the corpus file,
// written with pwrite and read through a read-only shared mapping, so that
// they cost disk, not resident memory, until read (then they are page
// cache, given back to the kernel as any clean file page). The mappings are
// never unmapped, like the corpus's. The zero value is ready; safe for
// concurrent use. On any error strings stay on the heap.
type stringSpill struct {
	dir  string // where to create the file ("": the temporary directory)
	mu   sync.Mutex
	f    *os.File
	seg  []byte // the current segment's mapping
	off  int64  // the file offset of seg
	used int    // bytes of seg reserved
	err  error
}

// spillSegment is the size of one mapped segment of a string spill.
const spillSegment = 64 << 20

// keep returns a copy of b: in the spill, or on the heap (short strings, or
// after an error).
func (sp *stringSpill) keep(b []byte) string {
	if sp == nil || len(b) < 64 || len(b) > spillSegment/64 {
		return string(b)
	}
	sp.mu.Lock()
	if sp.err == nil && (sp.f == nil || sp.used+len(b) > len(sp.seg)) {
		sp.err = sp.grow()
	}
	if sp.err != nil {
		sp.mu.Unlock()
		return string(b)
	}
	seg, at, off := sp.seg, sp.used, sp.off+int64(sp.used)
	sp.used += len(b)
	f := sp.f
	sp.mu.Unlock()
	if _, err := f.WriteAt(b, off); err != nil {
		return string(b)
	}
	return unsafe.String(&seg[at], len(b))
}

// grow maps the next segment (the file is created on first use).
func (sp *stringSpill) grow() error {
	if sp.f == nil {
		f, err := os.CreateTemp(sp.dir, ".relaybench-strings-*")
		if err != nil && sp.dir != "" {
			f, err = os.CreateTemp("", ".relaybench-strings-*")
		}
		if err != nil {
			return err
		}
		os.Remove(f.Name()) // unlinked: nothing is left behind, whatever happens
		sp.f, sp.off = f, -spillSegment
	}
	off := sp.off + spillSegment
	if err := sp.f.Truncate(off + spillSegment); err != nil {
		return err
	}
	seg, err := syscall.Mmap(int(sp.f.Fd()), off, spillSegment, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return err
	}
	sp.seg, sp.off, sp.used = seg, off, 0
	return nil
}

// spillDir is where a store's string spill goes: next to its file.
func spillDir(path string) string {
	if path == "" {
		return ""
	}
	return filepath.Dir(path)
}
