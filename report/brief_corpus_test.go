package report

import (
	"strings"
	"testing"

	"github.com/relaybench/relaybench/results"
)

// A run that published fresh events has a note saying so ("corpus: the
// 240 fresh events published …"); the brief summary gives it once, as the
// header's Corpus line, not a Corpus line and then the note in other
// words. The full summary keeps both.
func TestBriefCorpusNoteOnce(t *testing.T) {
	note := "corpus: the 240 fresh events published (content 1024 bytes, signed for this run by 50 keys before the clock); the key corpus (200 keys, seed 1) only provided the signing keys"
	f := oneRun("burst", nil, burstPhase())
	f.Runs[0].Notes = []string{note, "relay data directory on tmpfs"}
	brief := summaryText(t, f, SummaryOptions{Brief: true})
	if !strings.Contains(brief, "\n  Corpus:   the 240 fresh events published (content 1024 bytes,") || strings.Count(brief, "fresh events published") != 1 ||
		!strings.Contains(brief, "\nNote: relay data directory on tmpfs\n") {
		t.Errorf("brief: want the corpus note as the Corpus line, once, the other note kept:\n%s", brief)
	}
	full := summaryText(t, f, SummaryOptions{})
	if !strings.Contains(full, "\n  Corpus:   200 events") || !strings.Contains(full, "\nNote: "+note+"\n") {
		t.Errorf("full: want the corpus line and the note:\n%s", full)
	}
}

// A run that published fresh events only (conformance --under-load: an
// Events line, no Corpus line) with a corpus note gives the note once, as
// its Events line, not the Events line and then the note.
func TestBriefFreshEventsNoteOnce(t *testing.T) {
	note := "corpus: the 6,000 fresh events published (content 256 B, signed for this run by 50 keys before the clock); the key corpus (200 keys, seed 1) only provided the signing keys"
	p := loadPhase()
	p.Params = map[string]any{"kind": "publish", "size": 256}
	f := oneRun("conformance", nil, p)
	f.Runs[0].Notes = []string{"conformance checks run under a background load", note}
	brief := summaryText(t, f, SummaryOptions{Brief: true})
	if !strings.Contains(brief, "\n  Events:   the 6,000 fresh events published (content 256 B,") || strings.Count(brief, "fresh events") != 1 ||
		!strings.Contains(brief, "\nNote: conformance checks run under a background load\n") {
		t.Errorf("brief: want the corpus note as the Events line, once, the other note kept:\n%s", brief)
	}
}

// The Markdown and HTML reports' Corpus line says what the terminal's
// says for a run that published fresh events (sweep, subscribe, burst,
// lifecycle): the corpus note, not "200 events, … average content …",
// and not again among the notes.
func TestReportCorpusLineIsTheTerminals(t *testing.T) {
	note := "corpus: the 600 fresh events published (content 256 B and 4,096 B, signed for this run by 50 keys before the clock); the key corpus (200 keys, seed 1) only provided the signing keys"
	f := oneRun("burst", nil, burstPhase())
	f.Runs[0].Notes = []string{note}
	want := "the 600 fresh events published (content 256 B and 4,096 B,"
	var md, h strings.Builder
	if err := Markdown(&md, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&h, []*results.File{f}, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "- **Corpus**: "+want) || strings.Contains(md.String(), "average content") || strings.Count(md.String(), want) != 1 {
		t.Errorf("markdown: want the Corpus line %q, once, no average:\n%s", want, md.String())
	}
	if !strings.Contains(h.String(), want) || strings.Contains(h.String(), "average content") || strings.Count(h.String(), want) != 1 {
		t.Errorf("html: want the Corpus line %q, once, no average", want)
	}
}
