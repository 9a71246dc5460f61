package main

import (
	"cmp"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
)

// writeSample writes the project's own sample dump (see corpus.SampleDump)
// to dir and returns its path and the drops it holds.
func writeSample(t *testing.T, dir, name string, events int) (string, map[string]int, *corpus.Corpus) {
	t.Helper()
	at, _ := time.Parse(time.RFC3339, testAnchor)
	p := corpus.Params{Seed: 5, Events: events, Authors: 30, AvgSize: 512, Spread: corpus.DefaultSpread, Window: 6 * time.Hour, Anchor: at.Unix()}
	lines, drops, gen, err := corpus.SampleDump(context.Background(), p, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := corpus.WriteLines(path, lines); err != nil {
		t.Fatal(err)
	}
	return path, drops, gen
}

func TestRunCorpusDumpEndToEnd(t *testing.T) {
	out := t.TempDir()
	cache := t.TempDir()
	path, drops, gen := writeSample(t, out, "sample.ndjson.gz", 300)
	res := runCLI(t, "run", "--corpus", path, "-queries", "12", "-concurrency", "4",
		"--out", out, "--cache-dir", cache, "--no-progress", "--json", filepath.Join(out, "r.json"))
	if res.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	f, err := results.Read(filepath.Join(out, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := f.Runs[0]
	c := r.Corpus
	if c.Source != "sample.ndjson.gz" || len(c.Fingerprint) != 64 || c.Events != 300 || c.Read != 300+7 || c.Authors != 30 {
		t.Fatalf("corpus %+v", c)
	}
	if c.Fingerprint != corpus.Fingerprint(sortedByTime(gen)) {
		t.Errorf("fingerprint %s is not the sample's", c.Fingerprint)
	}
	for k, v := range drops {
		if c.Dropped[k] != v {
			t.Errorf("dropped %s = %d, want %d", k, c.Dropped[k], v)
		}
	}
	if pub := r.Phase("publish"); pub == nil || pub.Counts["accepted"] != 300 {
		t.Fatalf("publish phase %+v", pub)
	}
	if q := r.Phase("query"); q == nil || !q.Verification.Passed {
		t.Fatalf("query phase %+v", q)
	}
	if !strings.Contains(res.stdout, "fingerprint "+c.Fingerprint) || !strings.Contains(res.stdout, "from sample.ndjson.gz") {
		t.Errorf("summary does not show the dump and its fingerprint:\n%s", res.stdout)
	}
	if strings.Contains(res.stderr, "Verif") {
		t.Errorf("--no-progress, yet the dump's verification progress was shown:\n%s", res.stderr)
	}

	// The corpus command describes the (now cached) dump; a JSON array of
	// the same events has the same fingerprint.
	res = runCLI(t, "corpus", "--corpus", path, "--cache-dir", cache, "--no-progress")
	if res.code != 0 || !strings.Contains(res.stdout, "Fingerprint: "+c.Fingerprint) ||
		!strings.Contains(res.stdout, "1 malformed, 1 bad_id, 1 bad_sig, 1 duplicate, 1 ephemeral, 1 deletion, 1 expiring") ||
		!strings.Contains(res.stdout, "Loaded from the cache") {
		t.Errorf("corpus --corpus: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	arr := filepath.Join(out, "export.json")
	res = runCLI(t, "corpus", "--corpus", path, "--cache-dir", cache, "--no-progress", "--export", arr)
	if res.code != 0 {
		t.Fatalf("export: exit %d: %s", res.code, res.stderr)
	}
	res = runCLI(t, "corpus", "--corpus", arr, "--cache-dir", "off", "--no-progress")
	if res.code != 0 || !strings.Contains(res.stdout, "Fingerprint: "+c.Fingerprint) || !strings.Contains(res.stdout, "nothing dropped") {
		t.Errorf("exported array: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}

	res = runCLI(t, "run", "--corpus", filepath.Join(out, "missing.ndjson"), "--out", out, "--no-progress")
	if res.code != 2 || !strings.Contains(res.stderr, "missing.ndjson") {
		t.Errorf("missing dump: exit %d: %s", res.code, res.stderr)
	}
}

// sortedByTime is the generated events in the order a dump is published:
// by created_at, ties by id.
func sortedByTime(c *corpus.Corpus) []*nostr.Event {
	evs := slices.Clone(c.Events)
	slices.SortFunc(evs, func(a, b *nostr.Event) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return evs
}
