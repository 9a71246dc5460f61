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
	if code != 0 || !regexp.MustCompile(`\d\.\d\d KiB of wire JSON`).MatchString(stdout) || strings.Contains(stdout, " MB") {
		t.Fatalf("exit %d, want the wire JSON in KiB\n%s%s", code, stdout, stderr)
	}
}
