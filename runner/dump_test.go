package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
)

func TestDumpNotes(t *testing.T) {
	now := time.Now().Unix()
	evs := []*nostr.Event{
		{Kind: 1, CreatedAt: now, Content: "short"},
		{Kind: 1, CreatedAt: now, Content: strings.Repeat("é", 50)},
		{Kind: 3, CreatedAt: now, Tags: []nostr.Tag{{"p", "a"}, {"p", "b"}, {"p", "c"}}},
	}
	raw := make([][]byte, len(evs))
	for i, e := range evs {
		raw[i] = e.AppendJSON(nil)
	}
	c := &corpus.Corpus{Events: evs, Raw: raw, Manifest: &corpus.Manifest{Source: "d.ndjson", Fingerprint: "ff", Authors: 2, Read: 4,
		Dropped: map[string]int{corpus.DropBadSig: 1}, Kinds: map[int]int{1: 2, 3: 1}}}
	var run results.Run
	describeDump(&run, c)
	if run.Corpus.Source != "d.ndjson" || run.Corpus.Fingerprint != "ff" || run.Corpus.Authors != 2 || run.Corpus.Dropped[corpus.DropBadSig] != 1 {
		t.Fatalf("corpus %+v", run.Corpus)
	}
	limitNotes(&run, c, &nip11.Info{Limitation: nip11.Limitation{MaxContentLength: 40, MaxEventTags: 2}})
	if len(run.Notes) != 1 || !strings.Contains(run.Notes[0], "2 events (kind 1: 1, kind 3: 1) exceed") {
		t.Fatalf("notes %q", run.Notes)
	}
	// A generated corpus gets neither.
	var plain results.Run
	describeDump(&plain, &corpus.Corpus{Events: evs, Raw: raw})
	limitNotes(&plain, &corpus.Corpus{Events: evs, Raw: raw}, &nip11.Info{Limitation: nip11.Limitation{MaxEventTags: 1}})
	if plain.Corpus.Source != "" || len(plain.Notes) != 0 {
		t.Fatalf("generated corpus: %+v %q", plain.Corpus, plain.Notes)
	}
}
