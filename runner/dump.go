package runner

import (
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/nip11"
	"github.com/relaybench/relaybench/results"
)

// describeDump adds what a corpus read from a dump says about itself to
// the run: its manifest in run.Corpus and, per kind, the events relays
// refusing old or future-dated events will reject (their refusals are
// counted by reason in the publish phase). Nothing for a generated corpus.
func describeDump(run *results.Run, c *corpus.Corpus) {
	m := c.Manifest
	if m == nil {
		return
	}
	rc := &run.Corpus
	rc.Source = m.Source
	rc.Fingerprint = m.Fingerprint
	rc.Authors = m.Authors // the dump's; c.Authors are synthetic keys
	rc.Read = m.Read
	rc.Dropped = m.Dropped
	rc.Kinds = m.Kinds
	rc.SizeP50, rc.SizeP99, rc.SizeMax = m.Sizes.P50, m.Sizes.P99, m.Sizes.Max
	rc.FirstCreatedAt, rc.LastCreatedAt = m.First, m.Last
	run.Notes = append(run.Notes, corpus.AgeNotes(c.Events, time.Now())...)
}

// limitNotes says, for a dump corpus, how many events exceed the limits the
// relay announces in its NIP-11 document (max_message_length,
// max_content_length in characters, max_event_tags). They are published as
// they are: the relay's refusals are counted by reason in the publish phase,
// and every run of the same corpus publishes the same events.
func limitNotes(run *results.Run, c *corpus.Corpus, info *nip11.Info) {
	if c.Manifest == nil || info == nil {
		return
	}
	l := info.Limitation
	if l.MaxMessageLength <= 0 && l.MaxContentLength <= 0 && l.MaxEventTags <= 0 {
		return
	}
	over := map[int]int{}
	n := 0
	for i, e := range c.Events {
		msg := len(`["EVENT",]`) + len(c.Raw[i])
		if (l.MaxMessageLength > 0 && msg > l.MaxMessageLength) ||
			(l.MaxContentLength > 0 && utf8.RuneCountInString(e.Content) > l.MaxContentLength) ||
			(l.MaxEventTags > 0 && len(e.Tags) > l.MaxEventTags) {
			over[e.Kind]++
			n++
		}
	}
	if n == 0 {
		return
	}
	kinds := make([]int, 0, len(over))
	for k := range over {
		kinds = append(kinds, k)
	}
	sort.Ints(kinds)
	var b strings.Builder
	for i, k := range kinds {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "kind %d: %d", k, over[k])
	}
	run.Notes = append(run.Notes, fmt.Sprintf("corpus: %d events (%s) exceed the relay's announced NIP-11 limits (max_message_length %d, max_content_length %d, max_event_tags %d; 0 = none): they are published anyway and their refusals counted under refused",
		n, b.String(), l.MaxMessageLength, l.MaxContentLength, l.MaxEventTags))
}
