package corpus

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/internal/secp"
	"github.com/relaybench/relaybench/nostr"
)

// The streamed corpus (generated to a file, or opened from the cache) is
// byte-for-byte the in-memory one: same Raw, ids, sizes, events, key.
func TestStreamedSameAsInMemory(t *testing.T) {
	p := testParams(1500)
	mem := gen(t, p, Options{StreamAbove: 1 << 30})
	if mem.Streamed() || mem.Events == nil {
		t.Fatal("a small corpus is held in memory")
	}
	dir := t.TempDir()
	streamed := gen(t, p, Options{StreamAbove: -1})
	cached, err := Load(context.Background(), p, Options{CacheDir: dir, StreamAbove: -1}) // generated into the cache
	if err != nil {
		t.Fatal(err)
	}
	reopened, err := Load(context.Background(), p, Options{CacheDir: dir, StreamAbove: -1}) // read back
	if err != nil {
		t.Fatal(err)
	}
	small, err := Load(context.Background(), p, Options{CacheDir: dir}) // read back, held in memory
	if err != nil {
		t.Fatal(err)
	}
	if cached.Cached || !reopened.Cached || !small.Cached || small.Streamed() {
		t.Fatalf("cached %v %v %v, small streamed %v", cached.Cached, reopened.Cached, small.Cached, small.Streamed())
	}
	if !reflect.DeepEqual(small.Events, mem.Events) || !reflect.DeepEqual(small.Raw, mem.Raw) {
		t.Fatal("a corpus read from its file differs from the generated one")
	}
	for name, c := range map[string]*Corpus{"generated": streamed, "cache written": cached, "cache read": reopened} {
		if !c.Streamed() || c.Events != nil || c.Raw != nil {
			t.Fatalf("%s: not streamed", name)
		}
		if c.Len() != mem.Len() || c.Key != mem.Key || c.Bytes != mem.Bytes || !reflect.DeepEqual(c.Authors, mem.Authors) {
			t.Fatalf("%s: len %d key %s bytes %d", name, c.Len(), c.Key, c.Bytes)
		}
		for i := range c.Len() {
			if string(c.RawAt(i)) != string(mem.Raw[i]) || c.IDAt(i) != mem.Events[i].ID || c.SizeAt(i) != len(mem.Raw[i]) {
				t.Fatalf("%s: event %d differs", name, i)
			}
			if i%97 == 0 {
				e, err := c.EventAt(i)
				if err != nil || !reflect.DeepEqual(e, mem.Events[i]) {
					t.Fatalf("%s: event %d parses to %+v (%v)", name, i, e, err)
				}
			}
			if i%300 == 299 {
				c.ReleaseBefore(i) // giving pages back never changes what is read
			}
		}
		if !reflect.DeepEqual(c.Replaced(), mem.Replaced()) {
			t.Fatalf("%s: Replaced differs", name)
		}
	}
	// Released pages are read again correctly, from the start.
	reopened.ReleaseBefore(reopened.Len())
	if string(reopened.RawAt(0)) != string(mem.Raw[0]) {
		t.Fatal("event 0 after release")
	}
	if err := reopened.Materialize(); err != nil {
		t.Fatal(err)
	}
	if reopened.Streamed() || !reflect.DeepEqual(reopened.Events, mem.Events) || !reflect.DeepEqual(reopened.Raw, mem.Raw) {
		t.Fatal("materialized corpus differs")
	}
	// Only the corpus file is left in the cache (no temporary files).
	if ents, _ := os.ReadDir(dir); len(ents) != 1 || ents[0].Name() != filepath.Base(CachePath(dir, p.Key())) {
		t.Fatalf("cache dir holds %v", ents)
	}
}

// The generated events do not depend on the layout change: these hashes of
// the wire JSON were taken with the in-memory generator before corpora were
// streamed (same keys, so caches and results stay comparable).
func TestGenerationPinned(t *testing.T) {
	for _, tc := range []struct {
		p    Params
		hash string
	}{
		{Params{Seed: 2, Events: 1000, AvgSize: 64, Spread: 0, Anchor: 1700000000}, "048f4ac5eaa79ed4dae8f68cfc467d7e51f76403bd58ee1cc15421764165fca1"},
		{Params{Seed: 7, Events: 3000, Authors: 5, AvgSize: 300, Spread: 1.2, Anchor: 1700000000}, "f7976b14a70eecd90c9ad958a3790aa4aabb55347a6ee854a09323bb3e5c0605"},
	} {
		for _, stream := range []int{0, -1} {
			c := gen(t, tc.p, Options{StreamAbove: stream})
			h := sha256.New()
			for i := range c.Len() {
				h.Write(c.RawAt(i))
				h.Write([]byte{'\n'})
			}
			if got := hex.EncodeToString(h.Sum(nil)); got != tc.hash {
				t.Errorf("seed %d streamed %v: hash %s, want %s", tc.p.Seed, c.Streamed(), got, tc.hash)
			}
		}
	}
}

// A version 1 cache file is converted once: nothing is signed, the events
// are the same, and the old file is replaced by the new one.
func TestLegacyCacheConverted(t *testing.T) {
	dir := t.TempDir()
	p := testParams(400)
	mem := gen(t, p, Options{})
	old := legacyCachePath(dir, mem.Key)
	if err := writeCacheV1(dir, old, mem); err != nil {
		t.Fatal(err)
	}
	cnt := &counting{Signer: secp.Default()}
	for _, stream := range []int{-1, 0} {
		c, err := Load(context.Background(), p, Options{CacheDir: dir, Signer: cnt, StreamAbove: stream})
		if err != nil {
			t.Fatal(err)
		}
		if !c.Cached || cnt.n.Load() != 0 || c.CacheNote != "" || c.Signer != mem.Signer {
			t.Fatalf("cached %v, %d signed, note %q", c.Cached, cnt.n.Load(), c.CacheNote)
		}
		for i := range c.Len() {
			if string(c.RawAt(i)) != string(mem.Raw[i]) {
				t.Fatalf("event %d differs after conversion", i)
			}
		}
	}
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("old cache file left: %v", err)
	}
}

// A streamed corpus whose file cannot be written in the cache directory
// falls back to a temporary file; a cancelled generation leaves no file.
func TestStreamedCancelLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err := Load(ctx, testParams(3000), Options{CacheDir: dir, StreamAbove: -1, Progress: func(done, total int) {
		if n++; n == 3 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("cancelled generation left %v", ents)
	}
	ro := filepath.Join(dir, "file")
	os.WriteFile(ro, nil, 0o644)
	c, err := Load(context.Background(), testParams(300), Options{CacheDir: ro, StreamAbove: -1})
	if err != nil || !c.Streamed() || !strings.Contains(c.CacheNote, "cannot write cache") {
		t.Fatalf("unwritable cache: %v, note %q", err, c.CacheNote)
	}
	if c.Len() != 300 || c.IDAt(299) == "" {
		t.Fatal("fallback corpus unreadable")
	}
}

// writeCacheV1 writes c in the version 1 layout (the writer of that
// version, kept here to test the conversion).
func writeCacheV1(dir, path string, c *Corpus) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("corpus: cannot write cache: %w", err)
	}
	var body bytes.Buffer
	w := bufio.NewWriterSize(&body, 1<<20)
	if err := encodeV1(w, c); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	data := binary.LittleEndian.AppendUint32(body.Bytes(), crc32.Checksum(body.Bytes(), castagnoli))
	if err := writeAtomic(dir, path, data); err != nil {
		return fmt.Errorf("corpus: cannot write cache %s: %w", path, err)
	}
	return nil
}

func encodeV1(w *bufio.Writer, c *Corpus) error {
	var b [8]byte
	u32 := func(v int) { binary.LittleEndian.PutUint32(b[:4], uint32(v)); w.Write(b[:4]) }
	u64 := func(v int64) { binary.LittleEndian.PutUint64(b[:], uint64(v)); w.Write(b[:]) }
	str := func(s string) { u32(len(s)); w.WriteString(s) }

	w.WriteString(header(c.Key, c.Signer))
	u32(len(c.Authors))
	authorIdx := make(map[string]int, len(c.Authors))
	for i, a := range c.Authors {
		w.Write(a.Secret[:])
		w.WriteString(a.PubKey)
		authorIdx[a.PubKey] = i
	}
	var ntags, nvals int64
	for _, e := range c.Events {
		ntags += int64(len(e.Tags))
		for _, t := range e.Tags {
			nvals += int64(len(t))
		}
	}
	u32(len(c.Events))
	u64(ntags)
	u64(nvals)
	for _, e := range c.Events {
		ai, ok := authorIdx[e.PubKey]
		if !ok || len(e.ID) != 64 || len(e.Sig) != 128 {
			return errors.New("event not from a corpus author or not signed")
		}
		u32(ai)
		u64(e.CreatedAt)
		u32(e.Kind)
		w.WriteString(e.ID)
		w.WriteString(e.Sig)
		u32(len(e.Tags))
		for _, t := range e.Tags {
			u32(len(t))
			for _, v := range t {
				str(v)
			}
		}
		str(e.Content)
	}
	return nil // write errors stick in w and surface at Flush
}

// SignStreamed signs exactly what SignEvents signs, streamed from a file.
func TestSignStreamedSameAsSignEvents(t *testing.T) {
	keysOf := gen(t, testParams(50), Options{})
	const n = 1000
	build := func(i int, e *nostr.Event) *Author {
		e.CreatedAt, e.Kind = 1700000000+int64(i), 1
		e.Tags = []nostr.Tag{{"rb", "test"}}
		e.Content = fmt.Sprintf("event %d \"quoted\"\n", i)
		return keysOf.Author(i % 7)
	}
	evs := make([]*nostr.Event, n)
	keys := make([]*Author, n)
	for i := range evs {
		evs[i] = &nostr.Event{}
		keys[i] = build(i, evs[i])
	}
	if err := SignEvents(context.Background(), evs, keys, Options{}); err != nil {
		t.Fatal(err)
	}
	c, err := SignStreamed(context.Background(), n, build, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Streamed() || c.Len() != n {
		t.Fatalf("streamed %v, %d events", c.Streamed(), c.Len())
	}
	for i, e := range evs {
		if string(c.RawAt(i)) != string(e.AppendJSON(nil)) || c.IDAt(i) != e.ID {
			t.Fatalf("event %d: %s", i, c.RawAt(i))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := SignStreamed(ctx, n, build, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
