package corpus

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relaybench/relaybench/internal/owntemp"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/verify"
)

// DumpFormatVersion changes whenever dump preparation or its cache changes.
const DumpFormatVersion = 1

// MaxDumpLine is the longest NDJSON line (one event) a dump may hold.
const MaxDumpLine = 64 << 20

// OldAge is the age beyond which some relays refuse events (strfry's
// default rejectEventsOlderThanSeconds is about three years), and
// FutureSkew how far in the future they accept created_at (15 minutes).
const (
	OldAge     = 3 * 365 * 24 * time.Hour
	FutureSkew = 15 * time.Minute
)

// Manifest describes a corpus prepared from a dump: where it came from, what
// preparation dropped and why, and the shape of what is left. It is cached
// next to the prepared events.
type Manifest struct {
	// Source is the dump's file name (base name only).
	Source string `json:"source"`
	// SourceSHA256 is the hex sha256 of the dump file's bytes: the cache key.
	SourceSHA256 string `json:"source_sha256"`
	// Format is "ndjson" or "json-array"; Gzip says the file was compressed.
	Format string `json:"format"`
	Gzip   bool   `json:"gzip,omitempty"`
	// Read is the number of non-blank lines (or array elements) read.
	Read int `json:"read"`
	// Dropped counts what preparation dropped, by reason: "malformed" (not
	// an event), "bad_id", "bad_sig", "duplicate" (same id as an earlier
	// valid event), "ephemeral" (kinds 20000–29999), "deletion" (kind 5,
	// and kind 62 requests to vanish), "expiring" (a NIP-40 expiration tag).
	Dropped map[string]int `json:"dropped,omitempty"`
	// Events is the number of events kept; Authors the distinct pubkeys.
	Events  int `json:"events"`
	Authors int `json:"authors"`
	// Fingerprint is the hex sha256 over the kept ids (32 bytes each) in
	// publish order: two corpora with the same fingerprint publish the same
	// events in the same order.
	Fingerprint string `json:"fingerprint"`
	// Kinds is the histogram of kept events by kind.
	Kinds map[int]int `json:"kinds"`
	// Bytes is the total wire JSON size; Sizes its distribution per event.
	Bytes int64    `json:"bytes"`
	Sizes SizeDist `json:"sizes"`
	// AvgContent is the average content length in bytes.
	AvgContent int `json:"avg_content"`
	// First and Last are the oldest and newest created_at (unix seconds).
	First int64 `json:"first_created_at"`
	Last  int64 `json:"last_created_at"`
}

// SizeDist is a distribution of event sizes in bytes (wire JSON).
type SizeDist struct {
	Min  int `json:"min"`
	P50  int `json:"p50"`
	P90  int `json:"p90"`
	P99  int `json:"p99"`
	Max  int `json:"max"`
	Mean int `json:"mean"`
}

// Drop reasons counted in Manifest.Dropped.
const (
	DropMalformed = "malformed"
	DropBadID     = "bad_id"
	DropBadSig    = "bad_sig"
	DropDuplicate = "duplicate"
	DropEphemeral = "ephemeral"
	DropDeletion  = "deletion"
	DropExpiring  = "expiring"
)

// DropReasons lists the drop reasons in the order reports show them.
var DropReasons = []string{DropMalformed, DropBadID, DropBadSig, DropDuplicate, DropEphemeral, DropDeletion, DropExpiring}

// DroppedSummary is the one-line account of what preparation dropped, e.g.
// "2 bad_sig, 1 duplicate" ("nothing dropped" when none).
func (m *Manifest) DroppedSummary() string {
	var b []byte
	for _, r := range DropReasons {
		if n := m.Dropped[r]; n > 0 {
			if len(b) > 0 {
				b = append(b, ", "...)
			}
			b = strconv.AppendInt(b, int64(n), 10)
			b = append(b, ' ')
			b = append(b, r...)
		}
	}
	if len(b) == 0 {
		return "nothing dropped"
	}
	return string(b)
}

// DumpOptions control LoadDump.
type DumpOptions struct {
	// CacheDir, Workers and Progress are as in Options (Progress counts
	// verified events; a load from the cache, which verifies none, never
	// calls it).
	Options
	// KeySeed and KeyAuthors select the synthetic keys the corpus carries
	// in Authors for workloads that sign fresh events (a dump has no
	// private keys); KeyAuthors 0 means DefaultAuthors.
	KeySeed    int64
	KeyAuthors int
}

// LoadDump reads a dump of signed events (NDJSON, one event per line, or a
// JSON array of events; plain or gzip, sniffed) and prepares it: every id
// and signature is verified on all cores, and bad events, duplicates,
// ephemeral events, deletions and expiring events are dropped and counted;
// the rest is ordered by created_at (ties by id). The prepared corpus and
// its Manifest are cached under the sha256 of the file, so a second load
// verifies nothing. The returned corpus carries synthetic keys (see
// DumpOptions) in Authors; its events are by the dump's own authors.
func LoadDump(ctx context.Context, path string, o DumpOptions) (*Corpus, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	sum := sha256.Sum256(data)
	key := fmt.Sprintf("dump%d-%s", DumpFormatVersion, hex.EncodeToString(sum[:16]))
	keyAuthors := cmp.Or(o.KeyAuthors, DefaultAuthors)
	signer, err := o.signer()
	if err != nil {
		return nil, err
	}
	authors, _, err := makeAuthors(o.KeySeed, keyAuthors, signer)
	if err != nil {
		return nil, err
	}

	dir, note := o.CacheDir, ""
	if dir == "" {
		if dir, err = DefaultCacheDir(); err != nil {
			dir, note = "off", err.Error()
		}
	}
	if dir != "off" {
		c, err := readDumpCache(dir, key, workers(o.Workers))
		switch {
		case err == nil:
			c.Authors = authors
			c.Params = dumpParams(c.Manifest, o.KeySeed, keyAuthors)
			c.Manifest.Source = filepath.Base(path)
			return c, nil // nothing verified: no progress
		case errors.Is(err, os.ErrNotExist):
		default:
			note = fmt.Sprintf("dump cache %s unusable (%v); prepared again", dumpCachePath(dir, key), err)
		}
	}

	start := time.Now()
	c, err := prepareDump(ctx, data, o.Options)
	if err != nil {
		return nil, fmt.Errorf("corpus: %s: %w", filepath.Base(path), err)
	}
	c.Manifest.Source = filepath.Base(path)
	c.Manifest.SourceSHA256 = hex.EncodeToString(sum[:])
	c.Key = key
	c.Authors = authors
	c.Params = dumpParams(c.Manifest, o.KeySeed, keyAuthors)
	c.Signer = "dump"
	c.SignDuration = time.Since(start)
	if dir != "off" {
		if err := writeDumpCache(dir, key, c); err != nil {
			note = joinNote(note, err.Error())
		}
	}
	c.CacheNote = note
	return c, nil
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// dumpParams are the Params a dump corpus reports: Seed and Authors select
// the synthetic keys, Events, AvgSize and the window describe the dump.
func dumpParams(m *Manifest, seed int64, authors int) Params {
	return Params{Seed: seed, Events: m.Events, Authors: authors, AvgSize: m.AvgContent,
		Window: time.Duration(m.Last-m.First) * time.Second, Anchor: m.Last}
}

// decompress returns the dump's bytes, gunzipped when they start with the
// gzip magic, and whether they were.
func decompress(data []byte) ([]byte, bool, error) {
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		return data, false, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, true, fmt.Errorf("gzip: %w", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil, true, fmt.Errorf("gzip: %w", err)
	}
	return out, true, nil
}

// splitDump returns the dump's event texts and its format. A dump whose
// first non-blank byte is '[' is a JSON array; otherwise it is NDJSON and
// every non-blank line is one element (a malformed one is kept, to be
// counted).
func splitDump(data []byte) ([][]byte, string, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		if _, err := dec.Token(); err != nil {
			return nil, "", fmt.Errorf("json array: %w", err)
		}
		var out [][]byte
		for dec.More() {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, "", fmt.Errorf("json array, element %d: %w", len(out)+1, err)
			}
			out = append(out, raw)
		}
		if _, err := dec.Token(); err != nil {
			return nil, "", fmt.Errorf("json array: %w", err)
		}
		return out, "json-array", nil
	}
	var out [][]byte
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if len(line) > MaxDumpLine {
			return nil, "", fmt.Errorf("line %d is longer than %d bytes", len(out)+1, MaxDumpLine)
		}
		out = append(out, line)
	}
	return out, "ndjson", nil
}

// verdict of one dump element.
const (
	okEvent = iota
	badMalformed
	badID
	badSig
)

// prepareDump parses, verifies, filters and orders a dump's events.
func prepareDump(ctx context.Context, data []byte, o Options) (*Corpus, error) {
	data, gz, err := decompress(data)
	if err != nil {
		return nil, err
	}
	elems, format, err := splitDump(data)
	if err != nil {
		return nil, err
	}
	if len(elems) > MaxEvents {
		return nil, fmt.Errorf("%d events, more than the limit of %d", len(elems), MaxEvents)
	}
	evs := make([]*nostr.Event, len(elems))
	verdict := make([]uint8, len(elems))
	err = inChunks(ctx, len(elems), 256, o, func() func(lo, hi int) error {
		return func(lo, hi int) error {
			for i := lo; i < hi; i++ {
				e, err := nostr.ParseEvent(elems[i])
				switch {
				case err != nil:
					verdict[i] = badMalformed
				case !e.CheckID():
					verdict[i] = badID
				case !verify.ValidSignature(e):
					verdict[i] = badSig
				default:
					evs[i] = e
				}
			}
			return nil
		}
	})
	if err != nil {
		return nil, err
	}

	m := &Manifest{Format: format, Gzip: gz, Read: len(elems), Dropped: map[string]int{}}
	seen := make(map[string]struct{}, len(elems))
	kept := make([]*nostr.Event, 0, len(elems))
	for i, e := range evs {
		switch verdict[i] {
		case badMalformed:
			m.Dropped[DropMalformed]++
			continue
		case badID:
			m.Dropped[DropBadID]++
			continue
		case badSig:
			m.Dropped[DropBadSig]++
			continue
		}
		if _, dup := seen[e.ID]; dup {
			m.Dropped[DropDuplicate]++
			continue
		}
		seen[e.ID] = struct{}{}
		if r := dropReason(e); r != "" {
			m.Dropped[r]++
			continue
		}
		kept = append(kept, e)
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("no usable event among %d read (%s)", len(elems), m.DroppedSummary())
	}
	slices.SortFunc(kept, func(a, b *nostr.Event) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	c := &Corpus{Events: kept, Raw: buildRaw(kept, workers(o.Workers)), Manifest: m}
	describe(c)
	return c, nil
}

// dropReason says why a verified event is left out of the corpus ("" to
// keep it): what relays treat differently for reasons that have nothing to
// do with speed.
func dropReason(e *nostr.Event) string {
	switch {
	case e.Kind >= 20000 && e.Kind < 30000:
		return DropEphemeral // not stored: queries could never find them
	case e.Kind == 5 || e.Kind == 62:
		return DropDeletion // deletes other events, or may be refused
	}
	for _, t := range e.Tags {
		if len(t) >= 2 && t[0] == "expiration" {
			return DropExpiring // dropped by NIP-40 relays, kept by others
		}
	}
	return ""
}

// describe fills c.Bytes and the Manifest's shape fields from c.Events/Raw.
func describe(c *Corpus) {
	m := c.Manifest
	m.Events = len(c.Events)
	m.Kinds = map[int]int{}
	authors := map[string]struct{}{}
	sizes := make([]int, len(c.Raw))
	var content int64
	c.Bytes = 0
	for i, e := range c.Events {
		m.Kinds[e.Kind]++
		authors[e.PubKey] = struct{}{}
		content += int64(len(e.Content))
		sizes[i] = len(c.Raw[i])
		c.Bytes += int64(sizes[i])
	}
	m.Authors = len(authors)
	m.Bytes = c.Bytes
	m.Fingerprint = Fingerprint(c.Events)
	if n := len(c.Events); n > 0 {
		m.AvgContent = int(content / int64(n))
		m.First, m.Last = c.Events[0].CreatedAt, c.Events[n-1].CreatedAt
		sort.Ints(sizes)
		q := func(p float64) int { return sizes[min(n-1, int(p*float64(n)))] }
		m.Sizes = SizeDist{Min: sizes[0], P50: q(0.5), P90: q(0.9), P99: q(0.99), Max: sizes[n-1], Mean: int(c.Bytes / int64(n))}
	}
}

// Fingerprint is the hex sha256 over the events' ids (32 bytes each, in the
// given order).
func Fingerprint(evs []*nostr.Event) string {
	h := sha256.New()
	var id [32]byte
	for _, e := range evs {
		if _, err := hex.Decode(id[:], []byte(e.ID)); err != nil {
			h.Write([]byte(e.ID)) // not hex: still deterministic
			continue
		}
		h.Write(id[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// AgeNotes says, per kind, how many events relays that refuse old events
// (strfry: older than about three years) or events dated in the future
// (more than 15 minutes ahead) will refuse when published at now. Their
// refusals show in the publish phase's refusals by reason; these notes say
// which events they are. Nil when there are none.
func AgeNotes(evs []*nostr.Event, now time.Time) []string {
	old, future := map[int]int{}, map[int]int{}
	oldBefore := now.Add(-OldAge).Unix()
	futureAfter := now.Add(FutureSkew).Unix()
	for _, e := range evs {
		switch {
		case e.CreatedAt < oldBefore:
			old[e.Kind]++
		case e.CreatedAt > futureAfter:
			future[e.Kind]++
		}
	}
	var notes []string
	if len(old) > 0 {
		notes = append(notes, fmt.Sprintf("corpus: %s are older than 3 years: relays that refuse old events (strfry by default) reject them, counted under refused", byKind(old)))
	}
	if len(future) > 0 {
		notes = append(notes, fmt.Sprintf("corpus: %s are dated more than 15 minutes in the future: most relays reject them, counted under refused", byKind(future)))
	}
	return notes
}

// byKind formats a per-kind count: "12 events (kind 1: 10, kind 7: 2)".
func byKind(n map[int]int) string {
	ks := make([]int, 0, len(n))
	total := 0
	for k, v := range n {
		ks = append(ks, k)
		total += v
	}
	sort.Ints(ks)
	b := fmt.Appendf(nil, "%d events (", total)
	for i, k := range ks {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = fmt.Appendf(b, "kind %d: %d", k, n[k])
	}
	return string(append(b, ')'))
}

// Dump cache: "dump-<key>.ndjson" holds the prepared events, one compact
// JSON per line in publish order, and "dump-<key>.json" the Manifest. On
// load every id is recomputed and the fingerprint compared with the
// manifest's, so a damaged file is prepared again, not trusted; signatures
// are not checked again (that is what the cache saves).

func dumpCachePath(dir, key string) string { return filepath.Join(dir, key+".ndjson") }
func dumpManifestPath(dir, key string) string {
	return filepath.Join(dir, key+".manifest.json")
}

func writeDumpCache(dir, key string, c *Corpus) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("corpus: cannot write dump cache: %w", err)
	}
	mj, err := json.MarshalIndent(c.Manifest, "", "  ")
	if err != nil {
		return err
	}
	var body bytes.Buffer
	for _, r := range c.Raw {
		body.Write(r)
		body.WriteByte('\n')
	}
	for _, f := range []struct {
		path string
		data []byte
	}{{dumpCachePath(dir, key), body.Bytes()}, {dumpManifestPath(dir, key), append(mj, '\n')}} {
		if err := writeAtomic(dir, f.path, f.data); err != nil {
			return fmt.Errorf("corpus: cannot write dump cache %s: %w", f.path, err)
		}
	}
	return nil
}

func writeAtomic(dir, path string, data []byte) error {
	f, err := owntemp.File(dir, "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

func readDumpCache(dir, key string, nw int) (*Corpus, error) {
	mj, err := os.ReadFile(dumpManifestPath(dir, key))
	if err != nil {
		return nil, err
	}
	body, err := os.ReadFile(dumpCachePath(dir, key))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(mj, &m); err != nil {
		return nil, fmt.Errorf("%w: manifest: %v", errCorrupt, err)
	}
	lines, _, err := splitDump(body)
	if err != nil || len(lines) != m.Events {
		return nil, fmt.Errorf("%w: %d events, manifest says %d", errCorrupt, len(lines), m.Events)
	}
	evs := make([]*nostr.Event, len(lines))
	var bad atomic.Bool
	var wg sync.WaitGroup
	chunk := (len(lines) + nw - 1) / nw
	for lo := 0; lo < len(lines); lo += chunk {
		hi := min(len(lines), lo+chunk)
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				e, err := nostr.ParseEvent(lines[i])
				if err != nil || !e.CheckID() {
					bad.Store(true)
					return
				}
				evs[i] = e
			}
		})
	}
	wg.Wait()
	if bad.Load() || Fingerprint(evs) != m.Fingerprint {
		return nil, fmt.Errorf("%w: events do not match the manifest's fingerprint", errCorrupt)
	}
	c := &Corpus{Key: key, Events: evs, Raw: buildRaw(evs, nw), Manifest: &m, Cached: true, Signer: "dump"}
	for _, r := range c.Raw {
		c.Bytes += int64(len(r))
	}
	return c, nil
}

// WriteDump writes evs as an NDJSON dump (one compact event per line),
// gzip-compressed when the name ends in ".gz", or as a JSON array when it
// ends in ".json" (or ".json.gz").
func WriteDump(path string, evs []*nostr.Event) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	var w io.Writer = f
	var zw *gzip.Writer
	name := path
	if filepath.Ext(name) == ".gz" {
		zw = gzip.NewWriter(f)
		w = zw
		name = name[:len(name)-3]
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	array := filepath.Ext(name) == ".json"
	buf := make([]byte, 0, 4096)
	if array {
		bw.WriteString("[\n")
	}
	for i, e := range evs {
		buf = e.AppendJSON(buf[:0])
		if array && i < len(evs)-1 {
			buf = append(buf, ',')
		}
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	if array {
		bw.WriteString("]\n")
	}
	err = bw.Flush()
	if zw != nil {
		if cerr := zw.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
