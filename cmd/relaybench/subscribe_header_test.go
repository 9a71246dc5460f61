package main

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/results"
)

// TestLiveHeaderDescribesPublishedEvents: the run's corpus of a live
// command is the fresh events published, not the key corpus.
func TestLiveHeaderDescribesPublishedEvents(t *testing.T) {
	keys := &corpus.Corpus{Params: corpus.Params{Seed: 9, Events: 10000}, Authors: make([]corpus.Author, 200)}
	run := &results.Run{Corpus: results.Corpus{Events: 10000, Authors: 200, AvgSize: 64}, Phases: []results.Phase{
		{Name: "sweep/256", Size: 256, Params: map[string]any{"authors": 50}, Counts: map[string]int64{"sent": 300, "bytes_sent": 300 * 700}},
		{Name: "sweep/1024", Size: 1024, Params: map[string]any{"authors": 50}, Counts: map[string]int64{"sent": 100, "bytes_sent": 100 * 1500}},
	}}
	s := &liveSession{run: run}
	s.setFresh(keys)
	c := run.Corpus
	if c.Events != 400 || c.Authors != 50 || c.AvgSize != (300*256+100*1024)/400 || c.Bytes != 360000 || c.Seed != 9 || c.Key != "" || c.Cached {
		t.Errorf("corpus %+v", c)
	}
	if len(run.Notes) != 1 || !strings.Contains(run.Notes[0], "400 fresh events published (content 256 B and 1,024 B,") || !strings.Contains(run.Notes[0], "only provided the signing keys") {
		t.Errorf("notes %q", run.Notes)
	}

	// The sizes in the form of the header's Corpus line ("average content
	// 1,024 B"), each once: not "content 1024, 1024 bytes".
	same := &results.Run{Phases: []results.Phase{
		{Name: "publish/alone", Size: 1024, Counts: map[string]int64{"sent": 1500}},
		{Name: "publish/together", Size: 1024, Counts: map[string]int64{"sent": 1000}},
	}}
	(&liveSession{run: same}).setFresh(keys)
	if len(same.Notes) != 1 || !strings.Contains(same.Notes[0], "the 2,500 fresh events published (content 1,024 B, signed") {
		t.Errorf("one size: notes %q", same.Notes)
	}

	empty := &results.Run{}
	s = &liveSession{run: empty}
	s.setFresh(keys)
	if empty.Corpus.Events != 0 || !strings.Contains(empty.Notes[0], "no fresh events were published") {
		t.Errorf("nothing published: %+v %q", empty.Corpus, empty.Notes)
	}
}
