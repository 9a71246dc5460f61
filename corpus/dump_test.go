package corpus

import (
	"bytes"
	"cmp"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/nostr"
)

// sample returns the lines of a small sample dump, the drops it must
// produce and the events preparation must keep, in publish order.
func sample(t *testing.T) ([][]byte, map[string]int, []*nostr.Event) {
	t.Helper()
	lines, drops, gen, err := SampleDump(context.Background(), testParams(300), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(gen.Events)
	slices.SortFunc(want, func(a, b *nostr.Event) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return lines, drops, want
}

// sampleFile writes the sample dump's lines as dump.ndjson in a new
// folder dir, and returns both with the lines and the events preparation
// must keep.
func sampleFile(t *testing.T) (dir, path string, lines [][]byte, want []*nostr.Event) {
	t.Helper()
	lines, _, want = sample(t)
	dir = t.TempDir()
	path = filepath.Join(dir, "dump.ndjson")
	if err := WriteLines(path, lines); err != nil {
		t.Fatal(err)
	}
	return dir, path, lines, want
}

func loadDump(t *testing.T, path, cacheDir string) *Corpus {
	t.Helper()
	c, err := LoadDump(context.Background(), path, DumpOptions{Options: Options{CacheDir: cacheDir}, KeySeed: 3, KeyAuthors: 5})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLoadDumpFormsDropsAndFingerprint(t *testing.T) {
	lines, drops, want := sample(t)
	dir := t.TempDir()
	wantFP := Fingerprint(want)
	// NDJSON also gets blank lines and a line that is not JSON at all.
	nd := append(slices.Clone(lines), []byte(""), []byte(`{"id": "trunc`))
	ndDrops := map[string]int{}
	for k, v := range drops {
		ndDrops[k] = v
	}
	ndDrops[DropMalformed]++
	for _, tc := range []struct {
		name  string
		lines [][]byte
		drops map[string]int
		form  string
		gz    bool
	}{
		{"sample.ndjson", nd, ndDrops, "ndjson", false},
		{"sample.ndjson.gz", nd, ndDrops, "ndjson", true},
		{"sample.json", lines, drops, "json-array", false},
		{"sample.json.gz", lines, drops, "json-array", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if err := WriteLines(path, tc.lines); err != nil {
				t.Fatal(err)
			}
			c := loadDump(t, path, "off")
			m := c.Manifest
			if m.Format != tc.form || m.Gzip != tc.gz || m.Source != tc.name {
				t.Errorf("format %q gzip %v source %q, want %q %v %q", m.Format, m.Gzip, m.Source, tc.form, tc.gz, tc.name)
			}
			if len(m.Dropped) != len(tc.drops) {
				t.Errorf("dropped %v, want %v", m.Dropped, tc.drops)
			}
			for k, v := range tc.drops {
				if m.Dropped[k] != v {
					t.Errorf("dropped %s = %d, want %d (all: %v)", k, m.Dropped[k], v, m.Dropped)
				}
			}
			nonBlank := 0
			for _, l := range tc.lines {
				if len(bytes.TrimSpace(l)) > 0 {
					nonBlank++
				}
			}
			if m.Read != nonBlank || m.Events != len(want) || len(c.Events) != len(want) {
				t.Fatalf("read %d kept %d (%d events), want %d and %d", m.Read, m.Events, len(c.Events), nonBlank, len(want))
			}
			for i, e := range c.Events {
				if e.ID != want[i].ID {
					t.Fatalf("event %d is %s, want %s: not in created_at order", i, e.ID, want[i].ID)
				}
				if !bytes.Equal(c.Raw[i], want[i].AppendJSON(nil)) {
					t.Fatalf("raw %d differs from the event's wire JSON", i)
				}
			}
			if m.Fingerprint != wantFP {
				t.Errorf("fingerprint %s, want %s", m.Fingerprint, wantFP)
			}
			kinds := 0
			for _, n := range m.Kinds {
				kinds += n
			}
			if kinds != len(want) || m.First != want[0].CreatedAt || m.Last != want[len(want)-1].CreatedAt {
				t.Errorf("kinds sum %d, span %d…%d, want %d, %d…%d", kinds, m.First, m.Last, len(want), want[0].CreatedAt, want[len(want)-1].CreatedAt)
			}
			if s := m.Sizes; !(s.Min <= s.P50 && s.P50 <= s.P90 && s.P90 <= s.P99 && s.P99 <= s.Max) || s.Min <= 0 || m.Bytes != c.Bytes {
				t.Errorf("sizes %+v, bytes %d/%d", s, m.Bytes, c.Bytes)
			}
			// The synthetic keys sign fresh events; they are not the dump's.
			if len(c.Authors) != 5 || c.Params.Seed != 3 || c.Params.Events != len(want) {
				t.Errorf("authors %d seed %d events %d", len(c.Authors), c.Params.Seed, c.Params.Events)
			}
		})
	}
}

// A known fingerprint (sha256 of 32 zero bytes then 32 0xab bytes, checked
// with Python's hashlib): it must not change unless
// the fingerprint's definition changes on purpose.
func TestFingerprintStable(t *testing.T) {
	evs := []*nostr.Event{{ID: strings.Repeat("00", 32)}, {ID: strings.Repeat("ab", 32)}}
	const want = "debb3e7acfff6dd18d501042273629f0b79cb206bb8c24f59f62ddb80849403b"
	got := Fingerprint(evs)
	if got2 := Fingerprint([]*nostr.Event{evs[1], evs[0]}); got2 == got {
		t.Error("fingerprint ignores the order")
	}
	if got != want {
		t.Errorf("fingerprint %s, want %s", got, want)
	}
}

func TestLoadDumpCache(t *testing.T) {
	dir, path, _, want := sampleFile(t)
	cache := filepath.Join(dir, "cache")
	first := loadDump(t, path, cache)
	if first.Cached || first.CacheNote != "" {
		t.Fatalf("first load: cached %v note %q", first.Cached, first.CacheNote)
	}
	second := loadDump(t, path, cache)
	if !second.Cached || second.Manifest.Fingerprint != first.Manifest.Fingerprint || len(second.Events) != len(want) {
		t.Fatalf("second load: cached %v, fingerprint %s vs %s, %d events", second.Cached, second.Manifest.Fingerprint, first.Manifest.Fingerprint, len(second.Events))
	}
	if second.Manifest.Dropped[DropBadSig] != 1 || second.Manifest.Read != first.Manifest.Read || second.Bytes != first.Bytes {
		t.Errorf("cached manifest %+v, want %+v", second.Manifest, first.Manifest)
	}
	for i := range second.Raw {
		if !bytes.Equal(second.Raw[i], first.Raw[i]) {
			t.Fatalf("cached raw %d differs", i)
		}
	}
	// A damaged cache is prepared again, and says so.
	ev, _ := filepath.Glob(filepath.Join(cache, "*.ndjson"))
	if len(ev) != 1 {
		t.Fatalf("cache files %v", ev)
	}
	data, _ := os.ReadFile(ev[0])
	data = bytes.Replace(data, []byte(`"content":"`), []byte(`"content":"x`), 1)
	if err := os.WriteFile(ev[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	third := loadDump(t, path, cache)
	if third.Cached || !strings.Contains(third.CacheNote, "unusable") || third.Manifest.Fingerprint != first.Manifest.Fingerprint {
		t.Errorf("damaged cache: cached %v note %q", third.Cached, third.CacheNote)
	}
	if fourth := loadDump(t, path, cache); !fourth.Cached {
		t.Error("cache not rewritten after damage")
	}
}

func TestLoadDumpErrors(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"empty.ndjson":  "",
		"bad.ndjson":    "not json\n{}\n",
		"broken.json":   `[{"id":1},`,
		"notarray.json": `[1, 2]`,
	} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(body), 0o644)
		if _, err := LoadDump(context.Background(), path, DumpOptions{Options: Options{CacheDir: "off"}}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := LoadDump(context.Background(), filepath.Join(dir, "missing"), DumpOptions{}); err == nil {
		t.Error("missing file: no error")
	}
}

func TestAgeNotes(t *testing.T) {
	now := time.Unix(2_000_000_000, 0)
	evs := []*nostr.Event{
		{Kind: 1, CreatedAt: now.Add(-4 * 365 * 24 * time.Hour).Unix()},
		{Kind: 1, CreatedAt: now.Add(-4 * 365 * 24 * time.Hour).Unix()},
		{Kind: 30023, CreatedAt: now.Add(-4 * 365 * 24 * time.Hour).Unix()},
		{Kind: 1, CreatedAt: now.Add(-time.Hour).Unix()},
		{Kind: 7, CreatedAt: now.Add(time.Hour).Unix()},
	}
	notes := AgeNotes(evs, now)
	if len(notes) != 2 || !strings.Contains(notes[0], "3 events (kind 1: 2, kind 30023: 1) are older than 3 years") ||
		!strings.Contains(notes[1], "1 events (kind 7: 1) are dated more than 15 minutes in the future") {
		t.Errorf("notes %q", notes)
	}
	if AgeNotes(evs[3:4], now) != nil {
		t.Error("notes for a recent event")
	}
}

// The sample dump is deterministic: its fingerprint only changes when
// generation (FormatVersion) or SampleDump changes on purpose.
func TestSampleFingerprintPinned(t *testing.T) {
	_, _, want := sample(t)
	const pinned = "6e2e7b0dc5230d8846d9f5a7b4cca3143643e6df41b78763a05dd693dde01e6e"
	if got := Fingerprint(want); got != pinned {
		t.Errorf("sample fingerprint %s, pinned %s", got, pinned)
	}
}

// TestLoadDumpProgressCountsVerified: Progress counts verified events, so
// a load from the cache (nothing verified) never calls it.
func TestLoadDumpProgressCountsVerified(t *testing.T) {
	dir, path, lines, _ := sampleFile(t)
	o := DumpOptions{Options: Options{CacheDir: filepath.Join(dir, "cache")}}
	calls, last := 0, 0
	o.Progress = func(done, total int) { calls, last = calls+1, done }
	for _, cached := range []bool{false, true} {
		calls, last = 0, 0
		c, err := LoadDump(context.Background(), path, o)
		if err != nil {
			t.Fatal(err)
		}
		if c.Cached != cached {
			t.Fatalf("cached %v, want %v", c.Cached, cached)
		}
		if cached && calls != 0 {
			t.Errorf("from the cache: progress called %d times (up to %d)", calls, last)
		}
		if !cached && (calls == 0 || last != len(lines)) {
			t.Errorf("verifying: progress called %d times, last at %d of %d lines", calls, last, len(lines))
		}
	}
}
