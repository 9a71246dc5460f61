package corpus

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/relaybench/relaybench/nostr"
)

// within reports whether s's bytes lie inside b.
func within(s string, b []byte) bool {
	if s == "" || len(b) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(&b[0]))
	return p >= lo && p+uintptr(len(s)) <= lo+uintptr(len(b))
}

// heapParse is what a streamed corpus parse gave before the lean parse.
func heapParse(t *testing.T, c *Corpus, raw []byte) *nostr.Event {
	t.Helper()
	e, err := nostr.ParseEvent(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Tags) == 0 {
		e.Tags = nil
	}
	return e
}

// Every event of a streamed corpus parses (EventAt, Scan, Materialize) to
// what the heap parse gives; content without escapes and sigs stay in the
// mapping, contents with escapes go to the string spill, and what filters
// read is on the heap.
func TestMappedParseSameAsHeapParse(t *testing.T) {
	dir := t.TempDir()
	c, err := Load(t.Context(), testParams(1200), Options{CacheDir: dir, StreamAbove: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Streamed() {
		t.Fatal("not streamed")
	}
	var plain, escaped int
	check := func(i int, e *nostr.Event) {
		raw := c.RawAt(i)
		if want := heapParse(t, c, raw); !reflect.DeepEqual(e, want) {
			t.Fatalf("event %d: %+v, want %+v", i, e, want)
		}
		if !within(e.Sig, c.store.data) || within(e.ID, c.store.data) || within(e.PubKey, c.store.data) {
			t.Fatalf("event %d: sig not in the mapping, or id/pubkey in it", i)
		}
		for _, tg := range e.Tags {
			for _, v := range tg {
				if within(v, c.store.data) {
					t.Fatalf("event %d: tag value in the mapping", i)
				}
			}
		}
		if bytes.Contains(raw, []byte(`"content":"`+e.Content+`","sig"`)) {
			plain++
			if e.Content != "" && !within(e.Content, c.store.data) {
				t.Fatalf("event %d: escape-free content copied", i)
			}
		} else if len(e.Content) >= 64 {
			escaped++
			if within(e.Content, c.store.data) || !within(e.Content, c.store.strs.seg) {
				t.Fatalf("event %d: decoded content not in the spill", i)
			}
		}
	}
	if err := c.Scan(func(i int, e *nostr.Event) error { check(i, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if plain == 0 || escaped == 0 {
		t.Fatalf("%d events with plain content, %d with escapes: want both", plain, escaped)
	}
	if err := c.Materialize(); err != nil {
		t.Fatal(err)
	}
	for i, e := range c.Events {
		check(i, e)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("cache dir holds %v (the spill must be unlinked)", ents)
	}
}

// Hand-made events with and without escapes in content and tags, parsed
// from a read-only file mapping, equal the heap parse.
func TestMappedParseEscapes(t *testing.T) {
	pk := strings.Repeat("b", 64)
	id := strings.Repeat("a", 64)
	evs := []nostr.Event{
		{Tags: []nostr.Tag{{"e", id, "", "root"}, {"p", pk}}, Content: "no escapes at all, long enough to be worth sharing with the mapping"},
		{Tags: []nostr.Tag{{"t", "a\"quoted\" tag"}, {"emoji", "x", "line\nbreak"}}, Content: "escapes:\n\"quoted\" and back\\slash and a tab\t, long enough to spill"},
		{Tags: []nostr.Tag{{"p", pk, "wss://r.example"}}, Content: "short\n"},
		{Content: "tagless, ünïcödé ✓ and \U0001F600"},
	}
	var file []byte
	var at []int
	for i := range evs {
		e := &evs[i]
		e.ID, e.PubKey, e.Sig, e.CreatedAt, e.Kind = id, pk, strings.Repeat("c", 128), int64(1700000000+i), 1
		at = append(at, len(file))
		file = e.AppendJSON(file)
		file = append(file, '\n')
	}
	at = append(at, len(file))
	path := filepath.Join(t.TempDir(), "events")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := syscall.Mmap(int(f.Fd()), 0, len(file), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	// never unmapped: the events point into it for the rest of the test binary
	c := &Corpus{store: &store{data: data}, pubkeys: map[string]string{pk: pk}}
	c.store.strs.dir = t.TempDir()
	for i := range evs {
		raw := data[at[i] : at[i+1]-1]
		e, err := c.parseMapped(raw)
		if err != nil {
			t.Fatal(err)
		}
		if want := heapParse(t, c, raw); !reflect.DeepEqual(e, want) {
			t.Fatalf("event %d: %+v, want %+v", i, e, want)
		}
		if unsafe.StringData(e.PubKey) != unsafe.StringData(pk) {
			t.Fatalf("event %d: pubkey not shared with the authors'", i)
		}
		if !within(e.Sig, data) || (i != 1 && i != 2 && !within(e.Content, data)) {
			t.Fatalf("event %d: not shared as expected", i)
		}
	}
}
