package corpus

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"testing"
)

// smallSpill makes the generation tables spill after a few records, for
// the length of a test.
func smallSpill(t *testing.T) {
	nc, oc, k := noteChunk, offsChunk, spillKeep
	noteChunk, offsChunk, spillKeep = 8, 16, 2
	t.Cleanup(func() { noteChunk, offsChunk, spillKeep, spillLimit = nc, oc, k, 0 })
}

// With tables that spill to their file almost at once, generation gives the
// same events (the pinned hashes) and the same files.
func TestGenerationSpilled(t *testing.T) {
	smallSpill(t)
	TestGenerationPinned(t)
	TestStreamedSameAsInMemory(t)
	TestSignStreamedSameAsSignEvents(t)
}

// A spillTable reads back every record it was given, from memory or from
// its file, and writes them all out in order.
func TestSpillTable(t *testing.T) {
	for _, c := range []struct{ per, keep, n int }{{1, 2, 0}, {1, 2, 7}, {4, 2, 9}, {4, 3, 12}, {5, 2, 100}, {64, 4, 50}} {
		s := newSpillTable(8, c.per, c.keep, t.TempDir())
		var o [8]byte
		for i := range c.n {
			b, err := s.next()
			if err != nil {
				t.Fatal(err)
			}
			binary.LittleEndian.PutUint64(b, uint64(i*i+1))
			for j := 0; j <= i; j += 1 + j/3 {
				if err := s.read(j, o[:]); err != nil || binary.LittleEndian.Uint64(o[:]) != uint64(j*j+1) {
					t.Fatalf("%+v: record %d after %d: %d (%v)", c, j, i, binary.LittleEndian.Uint64(o[:]), err)
				}
			}
		}
		var all []byte
		if err := s.writeTo(func(b []byte) { all = append(all, b...) }, c.n, make([]byte, 24)); err != nil {
			t.Fatal(err)
		}
		if len(all) != 8*c.n {
			t.Fatalf("%+v: %d bytes written", c, len(all))
		}
		for i := range c.n {
			if v := binary.LittleEndian.Uint64(all[8*i:]); v != uint64(i*i+1) {
				t.Fatalf("%+v: record %d written as %d", c, i, v)
			}
		}
		if spilled := c.n > c.per*c.keep; spilled != (s.f != nil) {
			t.Fatalf("%+v: file %v", c, s.f != nil)
		}
		s.close()
		if err := s.read(0, o[:]); err == nil && c.n > c.per*c.keep {
			t.Fatalf("%+v: read after close", c)
		}
	}
}

// A table that cannot be written fails generation cleanly, leaving nothing
// in the cache directory.
func TestGenerationSpillError(t *testing.T) {
	smallSpill(t)
	spillLimit = 4 << 10
	dir := t.TempDir()
	_, err := Load(context.Background(), testParams(3000), Options{CacheDir: dir, StreamAbove: -1})
	if !errors.Is(err, io.ErrShortWrite) {
		t.Fatalf("error %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left %d files", len(ents))
	}
}
