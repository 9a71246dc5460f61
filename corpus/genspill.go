package corpus

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// Records per chunk of the tables that generation keeps for every event or
// note (spillTable), and how many of their newest chunks stay in memory: a
// few MB whatever the corpus size. Variables so that tests can make them
// small enough to spill.
var (
	noteChunk  = 1 << 14 // noteRec records (48 B): 768 KB a chunk
	offsChunk  = 1 << 16 // file offsets (8 B): 512 KB a chunk
	spillKeep  = 4       // chunks in memory, the one being filled included
	spillLimit = 0       // tests: a spill file that refuses writes past this many bytes (0: none)
)

// spillTable is an append-only table of fixed-size records that holds only
// its newest chunks in memory; older chunks are written to a temporary file
// (unlinked as soon as it is created, so that nothing is left behind) and
// read back one record at a time. Those reads hit the page cache, which is
// not the process's resident memory, so a table of any length costs a few
// MB of heap. One goroutine appends; any goroutine may read a record whose
// append happened before (synchronized by the caller).
type spillTable struct {
	rec, per, keep int    // record size, records per chunk, chunks in memory
	dir            string // where the file is created ("": os.TempDir())

	mu   sync.Mutex
	f    *os.File
	mem  [][]byte // chunks base, base+1, … in memory; the last one is being filled
	base int      // chunks written to f
	n    int      // records appended (the appending goroutine's)
	err  error
}

func newSpillTable(rec, per, keep int, dir string) *spillTable {
	return &spillTable{rec: rec, per: max(1, per), keep: max(2, keep), dir: dir}
}

// next returns the space of the next record, to be filled by the caller
// before it publishes the record's index to readers.
func (s *spillTable) next() ([]byte, error) {
	k := s.n % s.per
	if k == 0 {
		if err := s.rotate(); err != nil {
			return nil, err
		}
	}
	s.n++
	c := s.mem[len(s.mem)-1]
	return c[k*s.rec : (k+1)*s.rec : (k+1)*s.rec], nil
}

// rotate starts a new chunk, writing the oldest one out when keep chunks
// are in memory.
func (s *spillTable) rotate() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	var buf []byte
	if len(s.mem) == s.keep {
		if s.f == nil {
			f, err := os.CreateTemp(s.dir, "relaybench-spill-*.tmp")
			if err != nil {
				s.err = fmt.Errorf("corpus: a temporary file for generation tables: %w", err)
				return s.err
			}
			os.Remove(f.Name()) // open: its space is freed when it is closed
			s.f = f
		}
		off := int64(s.base) * int64(s.per) * int64(s.rec)
		if spillLimit > 0 && off+int64(len(s.mem[0])) > int64(spillLimit) {
			s.err = fmt.Errorf("corpus: writing generation tables: %w", io.ErrShortWrite)
			return s.err
		}
		if _, err := s.f.WriteAt(s.mem[0], off); err != nil {
			s.err = fmt.Errorf("corpus: writing generation tables: %w", err)
			return s.err
		}
		buf = s.mem[0]
		s.mem[0] = nil
		s.mem = append(s.mem[:0], s.mem[1:]...)
		s.base++
	} else {
		buf = make([]byte, s.per*s.rec)
	}
	s.mem = append(s.mem, buf)
	return nil
}

// read copies record i into dst.
func (s *spillTable) read(i int, dst []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := i / s.per
	switch {
	case i < 0 || c >= s.base+len(s.mem):
		if s.err != nil {
			return s.err
		}
		return fmt.Errorf("corpus: generation table: no record %d", i)
	case c >= s.base:
		k := i % s.per
		copy(dst, s.mem[c-s.base][k*s.rec:(k+1)*s.rec])
		return nil
	}
	_, err := s.f.ReadAt(dst[:s.rec], int64(i)*int64(s.rec))
	return err
}

// writeTo writes the records [0, n) in order to w through buf (the
// appending goroutine, once it is done appending).
func (s *spillTable) writeTo(w func([]byte), n int, buf []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	spilled := min(int64(n)*int64(s.rec), int64(s.base)*int64(s.per)*int64(s.rec))
	for off := int64(0); off < spilled; {
		m, err := s.f.ReadAt(buf[:min(int64(len(buf)), spilled-off)], off)
		if m > 0 {
			w(buf[:m])
			off += int64(m)
		}
		if err != nil && (err != io.EOF || m == 0) {
			return fmt.Errorf("corpus: reading generation tables back: %w", err)
		}
	}
	for c := s.base; c*s.per < n; c++ {
		m := min(s.per, n-c*s.per)
		w(s.mem[c-s.base][:m*s.rec])
	}
	return nil
}

// close drops the table and its file.
func (s *spillTable) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	s.mem, s.base = nil, 0
	if s.err == nil {
		s.err = fmt.Errorf("corpus: generation table used after close")
	}
}
