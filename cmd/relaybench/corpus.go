package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/internal/progress"
	"github.com/relaybench/relaybench/nostr"
)

type corpusCmd struct {
	corpusFlags
	NoProgress bool   `name:"no-progress" help:"No progress display."`
	Export     string `name:"export" placeholder:"FILE" help:"Also write the corpus's events as a dump: NDJSON, a JSON array when FILE ends in .json, gzip when it ends in .gz (readable by --corpus)."`
	Pubkeys    bool   `name:"pubkeys" help:"Print only the corpus's public keys, hex, one a line, to whitelist on a relay that requires NIP-42 AUTH: the keys that sign its events, fresh events and AUTH (for a dump: its synthetic keys, then its events' authors). Use the same corpus flags as the run (--seed, --authors, --corpus): the synthetic keys are derived from --seed and --authors, nothing is signed."`
}

func init() {
	register("corpus", "Sign (or load from the cache) the corpus for these parameters, or prepare the dump --corpus names, and describe it: kinds, sizes, signing rate, what preparation dropped.", &corpusCmd{})
}

// checkFlags checks the corpus flags before anything is signed (see check.go).
func (c *corpusCmd) checkFlags() error {
	if c.Pubkeys && c.Export != "" {
		return fmt.Errorf("--pubkeys prints only the keys: give --export in another call")
	}
	return c.corpusFlags.validate()
}

func (c *corpusCmd) Run(g *Globals) error {
	if c.Pubkeys && c.Corpus == "" {
		// The synthetic keys come from --seed and --authors alone: derived,
		// not a corpus signed (or loaded) to read them from.
		pks, err := corpus.AuthorPubkeys(c.params(), corpus.Options{})
		if err != nil {
			return fmt.Errorf("corpus: %w", err)
		}
		for _, pk := range pks {
			fmt.Println(pk)
		}
		return nil
	}
	prog := progress.New(os.Stderr, !c.NoProgress)
	start := time.Now()
	crp, err := loadCorpus(g.Ctx, c.corpusFlags, prog)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	if c.Pubkeys {
		for _, pk := range corpusPubkeys(crp) {
			fmt.Println(pk)
		}
		return nil
	}
	if crp.Manifest != nil {
		return describeDumpCorpus(crp, elapsed, c.Export)
	}
	st, err := scanCorpus(crp)
	if err != nil {
		return err
	}
	if st.fingerprint == "" && c.Export != "" {
		// Over fingerprintMax events: the export holds them all anyway.
		if err := crp.Materialize(); err != nil {
			return fmt.Errorf("--export: %w", err)
		}
		st.fingerprint = dumpFingerprint(crp.Events)
	}
	describeGenerated(crp, st, elapsed)
	if crp.Len() > 0 && !utf8.ValidString(st.first) {
		return fmt.Errorf("corpus content is not valid UTF-8")
	}
	return exportCorpus(crp, c.Export)
}

// corpusStats is what the corpus command says of a generated corpus's
// events, read in one pass.
type corpusStats struct {
	kinds          map[int]int
	signers        int
	content, tags  int
	first          string // the first event's content
	oldest, newest int64  // the span of the events' created_at
	fingerprint    string // the fingerprint a dump of the events has ("" over fingerprintMax events)
}

// fingerprintMax is the most events whose dump fingerprint the corpus
// command works out while it reads them (40 bytes an event in memory).
const fingerprintMax = 2_000_000

// idAt is an event's created_at and id, the order a dump publishes in.
type idAt struct {
	at int64
	id [32]byte
}

// dumpFingerprint is the fingerprint of a dump of evs (corpus.Fingerprint
// of the events in the order --corpus publishes them: created_at, then id).
func dumpFingerprint(evs []*nostr.Event) string {
	keys := make([]idAt, 0, len(evs))
	for _, e := range evs {
		keys = append(keys, keyOf(e))
	}
	return fingerprintOf(keys)
}

func keyOf(e *nostr.Event) idAt {
	k := idAt{at: e.CreatedAt}
	hex.Decode(k.id[:], []byte(e.ID[:min(len(e.ID), 64)])) // a generated event's id: 64 hex digits
	return k
}

// fingerprintOf sorts keys as a dump is published and hashes their ids as
// corpus.Fingerprint does (sha256 over the 32-byte ids).
func fingerprintOf(keys []idAt) string {
	slices.SortFunc(keys, func(a, b idAt) int {
		return cmp.Or(cmp.Compare(a.at, b.at), bytes.Compare(a.id[:], b.id[:]))
	})
	h := sha256.New()
	for _, k := range keys {
		h.Write(k.id[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// scanCorpus reads crp's events once, streamed: one event at a time.
func scanCorpus(crp *corpus.Corpus) (corpusStats, error) {
	st := corpusStats{kinds: map[int]int{}}
	signers := map[string]struct{}{} // at most len(crp.Authors) keys
	var keys []idAt
	if crp.Len() <= fingerprintMax {
		keys = make([]idAt, 0, crp.Len())
	}
	err := crp.Scan(func(i int, e *nostr.Event) error {
		if i == 0 {
			st.first, st.oldest, st.newest = e.Content, e.CreatedAt, e.CreatedAt
		}
		st.oldest, st.newest = min(st.oldest, e.CreatedAt), max(st.newest, e.CreatedAt)
		st.kinds[e.Kind]++
		signers[e.PubKey] = struct{}{}
		st.content += len(e.Content)
		st.tags += len(e.Tags)
		if keys != nil {
			keys = append(keys, keyOf(e))
		}
		return nil
	})
	st.signers = len(signers)
	if keys != nil && err == nil {
		st.fingerprint = fingerprintOf(keys)
	}
	return st, err
}

// describeGenerated prints what scanCorpus read of a generated corpus. Its
// fingerprint is the figure (and the name) a dump of it shows, where the
// cache key that headed it (a hash of the parameters) could not be
// compared with the dump's.
func describeGenerated(crp *corpus.Corpus, st corpusStats, elapsed time.Duration) {
	n := crp.Len()
	fmt.Printf("Corpus generated from seed %d (cache key %s, a hash of its parameters)\n", crp.Params.Seed, crp.Key)
	if st.fingerprint != "" {
		fmt.Printf("  Fingerprint: %s (its ids in created_at order, as a dump of it (--export) publishes them)\n", st.fingerprint)
	} else {
		fmt.Printf("  Fingerprint: not worked out for over %s events (--export gives it)\n", num(fingerprintMax))
	}
	// The span the events have (what a dump of them reads back as), and the
	// window their created_at are drawn from (--window, --anchor): both
	// named, where the window alone read as the events' span.
	fmt.Printf("  Events:   %s by %s, seed %d, created_at %s … %s (drawn from the window %s … %s)\n", num(n),
		authorsUsed(st.signers, len(crp.Authors)), crp.Params.Seed, rfc3339(st.oldest), rfc3339(st.newest),
		rfc3339(crp.Params.Anchor-int64(crp.Params.Window/time.Second)), rfc3339(crp.Params.Anchor))
	fmt.Printf("  Content:  %s B average (asked %s), %s tags in all, %s of wire JSON\n",
		num(avgContent(st.content, n)), num(crp.Params.AvgSize), num(st.tags), numfmt.Bytes(float64(crp.Bytes)))
	printKinds(st.kinds, n)
	if crp.Cached {
		fmt.Printf("  Loaded from the cache in %s: nothing signed\n", numfmt.Dur(elapsed))
	} else {
		secs := crp.SignDuration.Seconds()
		fmt.Printf("  Signed with %s in %s: %s events/s (generation, ids and signatures, all cores)\n", crp.Signer, numfmt.Dur(crp.SignDuration), num(int(math.Round(float64(n)/secs))))
	}
	if crp.CacheNote != "" {
		fmt.Printf("  Cache: %s\n", crp.CacheNote)
	}
}

// avgContent is the average content length of n events of content bytes
// in all, rounded down as a dump's manifest gives it (the same events, the
// same figure).
func avgContent(content, n int) int {
	if n == 0 {
		return 0
	}
	return content / n
}

// printKinds prints the Kinds line: each kind's count and share of n.
func printKinds(kinds map[int]int, n int) {
	ks := make([]int, 0, len(kinds))
	for k := range kinds {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	fmt.Print("  Kinds:   ")
	for _, k := range ks {
		fmt.Printf(" %d: %s (%.1f%%)", k, num(kinds[k]), 100*float64(kinds[k])/float64(n))
	}
	fmt.Println()
}

// rfc3339 is Unix time u in UTC, as created_at is shown.
func rfc3339(u int64) string { return time.Unix(u, 0).UTC().Format(time.RFC3339) }

// authorsUsed says how many authors signed a generated corpus's events: the
// count a dump of it reports when loaded, with the keys --authors gave when
// the events (Zipf-weighted over the keys) did not reach them all.
func authorsUsed(signed, keys int) string {
	if signed == keys {
		return num(signed) + " authors"
	}
	return fmt.Sprintf("%s authors (of %s keys: the events pick them Zipf-weighted)", num(signed), num(keys))
}

// exportCorpus writes the corpus as a dump when --export is given.
func exportCorpus(crp *corpus.Corpus, path string) error {
	if path == "" {
		return nil
	}
	if err := crp.Materialize(); err != nil {
		return fmt.Errorf("--export: %w", err)
	}
	if err := corpus.WriteDump(path, crp.Events); err != nil {
		return fmt.Errorf("--export: %w", err)
	}
	fmt.Printf("  Exported %s events to %s\n", num(len(crp.Events)), path)
	return nil
}

// describeDumpCorpus prints the manifest of a corpus read from a dump.
func describeDumpCorpus(crp *corpus.Corpus, elapsed time.Duration, export string) error {
	m := crp.Manifest
	fmt.Printf("Corpus from %s (%s%s)\n", m.Source, m.Format, map[bool]string{true: ", gzip"}[m.Gzip])
	fmt.Printf("  Fingerprint: %s (its ids in publish order: created_at, then id)\n", m.Fingerprint)
	fmt.Printf("  Read:     %s, kept %s; dropped: %s\n", num(m.Read), num(m.Events), m.DroppedSummary())
	fmt.Printf("  Events:   %s by %s authors, created_at %s … %s (the oldest and newest event's)\n", num(m.Events), num(m.Authors),
		rfc3339(m.First), rfc3339(m.Last))
	fmt.Printf("  Sizes:    %s of wire JSON; per event min %s, p50 %s, p90 %s, p99 %s, max %s B; content %s B average\n",
		numfmt.Bytes(float64(m.Bytes)), num(m.Sizes.Min), num(m.Sizes.P50), num(m.Sizes.P90), num(m.Sizes.P99), num(m.Sizes.Max), num(m.AvgContent))
	printKinds(m.Kinds, m.Events)
	for _, n := range corpus.AgeNotes(crp.Events, time.Now()) {
		fmt.Printf("  Note:     %s\n", n)
	}
	if crp.Cached {
		fmt.Printf("  Loaded from the cache in %s: nothing verified\n", numfmt.Dur(elapsed))
	} else {
		fmt.Printf("  Prepared in %s (ids and signatures verified on all cores)\n", numfmt.Dur(crp.SignDuration))
	}
	if crp.CacheNote != "" {
		fmt.Printf("  Cache: %s\n", crp.CacheNote)
	}
	return exportCorpus(crp, export)
}

// loadDump prepares the dump --corpus names (or loads it from the cache).
func loadDump(ctx context.Context, f corpusFlags, prog *progress.Reporter) (*corpus.Corpus, error) {
	var update func(int64)
	var stop func()
	c, err := corpus.LoadDump(ctx, f.Corpus, corpus.DumpOptions{
		Options: corpus.Options{CacheDir: f.CacheDir, Progress: func(done, total int) {
			if update == nil {
				update, stop = prog.Phase(fmt.Sprintf("Verifying %s of %s", numfmt.Count(total, "event"), filepath.Base(f.Corpus)), progress.CountFmt("Verified", "event", "events", int64(total)), int64(total))
			}
			update(int64(done))
		}},
		KeySeed:    f.Seed,
		KeyAuthors: f.Authors,
	})
	if stop != nil {
		stop()
	}
	if err != nil {
		return nil, fmt.Errorf("--corpus: %w", err)
	}
	return c, nil
}

// num is n with thousands separators, as the summary prints counts ("2,000").
func num[T ~int | ~int64](n T) string { return numfmt.Group(int64(n)) }
