package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/relaybench/relaybench/corpus"
)

// TestCorpusPubkeysSignNothing: corpus --pubkeys prints the keys of the
// corpus --seed and --authors describe, in order, without signing (or
// caching) the corpus: no Signing line, nothing in the cache.
func TestCorpusPubkeysSignNothing(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache")
	code, stdout, stderr := runHere(t, "corpus", "--pubkeys", "--seed", "7", "--authors", "5", "--events", "50000", "--cache-dir", cache)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	c, err := corpus.Generate(context.Background(), corpus.Params{Seed: 7, Authors: 5, Events: 10}, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, a := range c.Authors {
		want = append(want, a.PubKey)
	}
	if got := strings.TrimSpace(stdout); got != strings.Join(want, "\n") {
		t.Fatalf("printed\n%s\nwant the corpus's authors\n%s", got, strings.Join(want, "\n"))
	}
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Fatalf("the cache %s was written (%v): the corpus was made", cache, err)
	}
}

// TestCorpusSizeBinaryUnit: corpus gives the wire JSON in binary units,
// as the summaries give sizes (KiB, MiB), not "MB".
func TestCorpusSizeBinaryUnit(t *testing.T) {
	code, stdout, stderr := runHere(t, "corpus", "--events", "300", "--cache-dir", "off", "--no-progress")
	if code != 0 || !regexp.MustCompile(`\d+(\.\d+)? KiB of wire JSON`).MatchString(stdout) || strings.Contains(stdout, " MB") {
		t.Fatalf("exit %d, want the wire JSON in KiB\n%s%s", code, stdout, stderr)
	}
}

// TestCorpusExportAuthorsAsLoaded: a small corpus's events (Zipf-weighted
// over the --authors keys) are signed by fewer authors than keys; corpus
// says how many signed, the figure its dump gives when loaded, not the keys;
// and the created_at span its events have, the one the dump reads back as,
// with the window they were drawn from named as such (it gave the window
// only, which the dump contradicted).
func TestCorpusExportAuthorsAsLoaded(t *testing.T) {
	dir := t.TempDir()
	dump := filepath.Join(dir, "dump.ndjson")
	authors := regexp.MustCompile(`Events: +300 by (\d+) authors`)
	code, stdout, stderr := runHere(t, "corpus", "--events", "300", "--cache-dir", "off", "--no-progress", "--export", dump)
	m := authors.FindStringSubmatch(stdout)
	if code != 0 || m == nil || !strings.Contains(stdout, m[1]+" authors (of 200 keys") {
		t.Fatalf("export: exit %d, want 300 events by fewer authors than the 200 keys, saying so\n%s%s", code, stdout, stderr)
	}
	code, loaded, stderr := runHere(t, "corpus", "--corpus", dump, "--cache-dir", "off", "--no-progress")
	if l := authors.FindStringSubmatch(loaded); code != 0 || l == nil || l[1] != m[1] {
		t.Fatalf("the dump loaded: exit %d, want 300 by %s authors as exported\n%s%s", code, m[1], loaded, stderr)
	}
	span := regexp.MustCompile(`created_at (\S+ … \S+) \((drawn from the window|the oldest and newest event's)`)
	if e, l := span.FindStringSubmatch(stdout), span.FindStringSubmatch(loaded); e == nil || l == nil || e[1] != l[1] ||
		e[2] != "drawn from the window" || l[2] != "the oldest and newest event's" {
		t.Errorf("created_at span exported %q, read back %q: want the same span, each saying what it is", e, l)
	}
	code, stdout, stderr = runHere(t, "corpus", "--events", "300", "--authors", "3", "--cache-dir", "off", "--no-progress")
	if code != 0 || !strings.Contains(stdout, "300 by 3 authors, seed") {
		t.Fatalf("every key signing: exit %d, want plain '300 by 3 authors'\n%s%s", code, stdout, stderr)
	}
}

// TestCorpusFingerprintAsItsDump: a generated corpus and its own --export
// dump show one figure under one name, so the two can be compared: the
// generated one was headed by its cache key ("Corpus 0261728b…", a hash of
// the parameters) and the dump by "Fingerprint: 26657d6d…".
func TestCorpusFingerprintAsItsDump(t *testing.T) {
	dump := filepath.Join(t.TempDir(), "dump.ndjson")
	fp := regexp.MustCompile(`(?m)^  Fingerprint: ([0-9a-f]{64}) \(`)
	avg := regexp.MustCompile(`(?i)content:? +([0-9,]+) B average|content ([0-9,]+) B average`)
	code, made, stderr := runHere(t, "corpus", "--events", "300", "--seed", "5", "--cache-dir", "off", "--no-progress", "--export", dump)
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	code, loaded, stderr := runHere(t, "corpus", "--corpus", dump, "--cache-dir", "off", "--no-progress")
	if code != 0 {
		t.Fatalf("the dump loaded: exit %d\n%s", code, stderr)
	}
	m, l := fp.FindStringSubmatch(made), fp.FindStringSubmatch(loaded)
	if m == nil || l == nil || m[1] != l[1] {
		t.Errorf("fingerprints: generated %q, its dump %q: want one figure under one name\n%s\n%s", m, l, made, loaded)
	}
	if !strings.HasPrefix(made, "Corpus generated from seed 5 (cache key ") {
		t.Errorf("the cache key is not named as such:\n%s", made)
	}
	// The same events' average content, the same figure.
	if a, b := avg.FindStringSubmatch(made), avg.FindStringSubmatch(loaded); a == nil || b == nil || a[1]+a[2] != b[1]+b[2] {
		t.Errorf("average content: generated %q, its dump %q", a, b)
	}
}

// TestDumpProgressOnlyWhenVerifying: loading a dump shows "Verifying …"
// only while its events are verified: not when it comes from the cache
// (nothing verified), never with --no-progress.
func TestDumpProgressOnlyWhenVerifying(t *testing.T) {
	dir := t.TempDir()
	path, _, _ := writeSample(t, dir, "sample.ndjson", 300)
	cache := filepath.Join(dir, "cache")
	code, _, stderr := runHere(t, "corpus", "--corpus", path, "--cache-dir", cache, "--no-progress")
	if code != 0 || strings.Contains(stderr, "Verif") {
		t.Fatalf("--no-progress: exit %d, progress shown:\n%s", code, stderr)
	}
	if err := os.RemoveAll(cache); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runHere(t, "corpus", "--corpus", path, "--cache-dir", cache)
	if code != 0 || !strings.Contains(stderr, "Verifying 307 events of sample.ndjson...") || !strings.Contains(stderr, "Verified 30 of 307 events...") {
		t.Fatalf("first load: exit %d, no verifying progress:\n%s", code, stderr)
	}
	code, stdout, stderr := runHere(t, "corpus", "--corpus", path, "--cache-dir", cache)
	if code != 0 || strings.Contains(stderr, "Verif") || !strings.Contains(stdout, "Loaded from the cache") {
		t.Fatalf("from the cache: exit %d, progress shown (nothing is verified):\n%s%s", code, stdout, stderr)
	}
}
