package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/relaybench/relaybench/flagcheck"
	"github.com/relaybench/relaybench/internal/numfmt"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/wire"
)

// SearchShapes are the NIP-50 search filters, in the order they rotate:
// a term alone (kind 1), a term by one author, a term within two hours.
var SearchShapes = []string{"search", "search-author", "search-time"}

func init() {
	Declare[SearchOptions](Decl{Name: "search", Brief: "NIP-50, 100", Input: NeedsCorpus, JudgesSet: true, NIP: 50, What: "search",
		Summary: "NIP-50 search: publish the corpus, then search for words of its content; latency, results per search, recall, every result checked."})
}

// SearchOptions configure the NIP-50 search workload. Base's Timeout bounds
// the wait for a search's EOSE.
type SearchOptions struct {
	Base    `kong:"-" set:"timeout=10s"`
	Queries int `name:"queries" default:"100" help:"Searches (NIP-50), rotating through: a term alone, a term by one author, a term within two hours (kind 1)."`
	Limit   int `name:"query-limit" default:"20" help:"Limit of each search filter."`
	// Terms are the words searched for (nil: drawn from the content of the
	// source's kind-1 events, so that every search has results).
	Terms    []string `name:"terms" sep:"," placeholder:"LIST" help:"Words to search for (default: words drawn from the corpus's kind-1 content, so that every search has results)."`
	RelayCap int      `kong:"-"` // NIP-11 limitation.max_limit (0: env's)
	Force
}

// Run searches on env's relay, checking every answer against what it
// accepted in the publish phase.
func (o SearchOptions) Run(ctx context.Context, env Env) ([]results.Phase, error) {
	applyDefaults(&o)
	serialEnv(&o.Base, &o.RelayCap, env, "Searching (NIP-50)", "search query", "search queries", o.Queries)
	return onePhase(Search(ctx, env.URL, env.Model, env.source(), o))
}

// searchIndex is the source's kind-1 events by the words of their content
// (lower case, letters only, 4 to 24 letters, scripts written with spaces).
type searchIndex struct {
	postings map[string][]*nostr.Event // word → events containing it as a word, source order
	terms    []string                  // words in at least two events, sorted
}

const (
	minTermRunes = 4
	maxTermRunes = 24
)

// words returns the distinct words of s, lower case: runs of letters of
// minTermRunes to maxTermRunes letters, none of them in a script written
// without spaces (Han, kana, Hangul), where a word cannot be cut out.
func words(s string) map[string]struct{} {
	out := map[string]struct{}{}
	s = strings.ToLower(s)
	start, n, skip := -1, 0, false
	flush := func(end int) {
		if start >= 0 && !skip && n >= minTermRunes && n <= maxTermRunes {
			out[s[start:end]] = struct{}{}
		}
		start, n, skip = -1, 0, false
	}
	for i, r := range s {
		if !unicode.IsLetter(r) && !unicode.Is(unicode.Mn, r) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
		}
		n++
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			skip = true
		}
	}
	flush(len(s))
	return out
}

func newSearchIndex(evs []*nostr.Event) *searchIndex {
	x := &searchIndex{postings: map[string][]*nostr.Event{}}
	for _, e := range evs {
		if e.Kind != 1 {
			continue
		}
		for w := range words(e.Content) {
			x.postings[w] = append(x.postings[w], e)
		}
	}
	for w, p := range x.postings {
		if len(p) >= 2 {
			x.terms = append(x.terms, w)
		}
	}
	sort.Strings(x.terms)
	return x
}

// containing returns the indexed events that contain term as a word and
// match f's other conditions.
func (x *searchIndex) containing(term string, f *nostr.Filter) []*nostr.Event {
	var out []*nostr.Event
	for _, e := range x.postings[strings.ToLower(term)] {
		if f.Matches(e) {
			out = append(out, e)
		}
	}
	return out
}

// searchRecord is one search, kept for verification after the timed window.
type searchRecord struct {
	queryRecord
	term string
}

// buildSearches draws every search before the clock starts.
func buildSearches(x *searchIndex, o SearchOptions) ([]*searchRecord, error) {
	terms := o.Terms
	if len(terms) == 0 {
		terms = x.terms
	}
	if len(terms) == 0 {
		return nil, fmt.Errorf("no search term: the kind-1 events hold no word (%d to %d letters) found in two events", minTermRunes, maxTermRunes)
	}
	rng := rand.New(rand.NewPCG(uint64(o.Seed), 0x5ea5c4))
	recs := make([]*searchRecord, 0, o.Queries)
	for i := 0; len(recs) < o.Queries; i++ {
		term := terms[rng.IntN(len(terms))]
		shape := SearchShapes[i%len(SearchShapes)]
		f := nostr.Filter{Kinds: []int{1}, Limit: o.Limit, Search: term}
		if post := x.postings[strings.ToLower(term)]; len(post) > 0 {
			e := post[rng.IntN(len(post))]
			switch shape {
			case "search-author":
				f.Authors = []string{e.PubKey}
			case "search-time":
				since := e.CreatedAt - int64(rng.IntN(7200))
				f.Since, f.Until = nostr.Int64(since), nostr.Int64(since+7200)
			}
		} else if shape != "search" {
			shape = "search" // a given term no event holds: the plain shape only
		}
		recs = append(recs, &searchRecord{queryRecord: queryRecord{shape: shape, filter: f}, term: term})
	}
	return recs, nil
}

// Search runs the NIP-50 search workload on one connection, one search at a
// time: a term from the content of the kind-1 events in source, alone, by
// one author or within two hours. Every result is checked: valid id and
// signature, matches the filter's other conditions, returned once, and
// holds the term. A relay may match more loosely than a substring of the
// content (word stems, accents folded, other fields): such results are
// named, not failed; a result that holds nothing of the term anywhere is
// not matching. With a model (what the relay accepted in this run), results
// relaybench never published are extra, and the recall is reported: results
// holding the term as a word over the events that do (up to the limit).
func Search(ctx context.Context, url string, model *verify.Model, source []*nostr.Event, o SearchOptions) (results.Phase, error) {
	applyDefaults(&o)
	x := newSearchIndex(source)
	recs, err := buildSearches(x, o)
	if err != nil {
		return results.Phase{}, err
	}
	terms := map[string]bool{}
	for _, r := range recs {
		terms[r.term] = true
	}
	ph, err := runSerial(ctx, url, o.Base, serialPhase{
		name: "search", op: results.OpQuery, silent: "searches ended without EOSE (timed out or connection lost)",
		requested: o.Queries, drawn: len(recs), whole: true,
		counters: []string{results.CountSearches, results.CountFailed, results.CountTimedOut, results.CountEventsReturned},
		params: map[string]any{
			"queries": len(recs), "limit": o.Limit, "timeout": o.Timeout.String(), "shapes": SearchShapes,
			"nip": 50, "terms": len(terms),
		},
		step: func(ctx context.Context, s *serialRun, cn *wire.Conn, i int) {
			s.query(ctx, cn, "s"+strconv.Itoa(i), &recs[i].queryRecord)
		},
	})
	if err != nil {
		return results.Phase{}, err
	}
	searchGroups(&ph, recs, x, model, o)
	return ph, ctx.Err()
}

// termMatch says how a result holds the term searched for.
type termMatch int

const (
	matchWord      termMatch = iota // the term is a word of the content (case-insensitive)
	matchSubstring                  // the content holds the term inside a longer word
	matchLoose                      // accents folded, a word sharing the term's stem, or another field holds it
	matchNone                       // nothing of the term anywhere in the event
)

// matchTerm classifies how e holds term.
func matchTerm(e *nostr.Event, term string) termMatch {
	t := strings.ToLower(term)
	c := strings.ToLower(e.Content)
	if _, ok := words(c)[t]; ok {
		return matchWord
	}
	if strings.Contains(c, t) {
		return matchSubstring
	}
	ft := fold(t)
	if strings.Contains(fold(c), ft) {
		return matchLoose
	}
	stem := ft
	if utf8.RuneCountInString(stem) > minTermRunes {
		stem = string([]rune(stem)[:minTermRunes])
	}
	for w := range words(fold(c)) {
		if strings.HasPrefix(w, stem) || strings.HasPrefix(ft, w) {
			return matchLoose
		}
	}
	for _, tag := range e.Tags {
		for _, v := range tag {
			if strings.Contains(fold(strings.ToLower(v)), ft) {
				return matchLoose
			}
		}
	}
	return matchNone
}

// fold removes the accents of the Latin letters the corpus uses.
func fold(s string) string {
	return strings.NewReplacer(
		"á", "a", "à", "a", "â", "a", "ã", "a", "ä", "a", "å", "a", "æ", "ae",
		"é", "e", "è", "e", "ê", "e", "ë", "e", "í", "i", "ì", "i", "î", "i", "ï", "i",
		"ó", "o", "ò", "o", "ô", "o", "õ", "o", "ö", "o", "ø", "o",
		"ú", "u", "ù", "u", "û", "u", "ü", "u", "ç", "c", "ñ", "n", "ß", "ss",
	).Replace(s)
}

// searchGroups verifies every search that ended with EOSE and fills the
// phase's counts, latencies, rates, per-shape groups and verification.
func searchGroups(ph *results.Phase, recs []*searchRecord, x *searchIndex, model *verify.Model, o SearchOptions) {
	t := newShapeTally(ph, results.CountSearches, results.LatencyEOSE, "search", results.CountEventsReturned)
	j := &searchJudge{x: x, model: model, o: o, ph: ph, sigs: verify.NewChecker(), storedUnknown: map[string]bool{}, recall: map[string]*[2]int64{}}
	for _, r := range recs {
		if r.ended == "" && r.err == "" {
			continue
		}
		s := t.of(r.shape, model != nil)
		t.add(s, results.CountEventsReturned, r.returned)
		if r.ended != "eose" {
			t.failed(s, wire.QueryEnd(r.ended), r.err)
			continue
		}
		t.answered(s, r.latency, 0)
		if r.first > 0 {
			t.first.Record(r.first)
		}
		j.judge(s, r)
	}
	total := &results.Verification{Verified: model != nil}
	t.finish(SearchShapes, results.RateSearches, "", total)
	searchRates(ph.Rates, ph.Counts, j.got, j.want)
	for i := range ph.Groups {
		g := &ph.Groups[i]
		var rc [2]int64
		if p := j.recall[g.Name]; p != nil {
			rc = *p
		}
		searchRates(g.Rates, g.Counts, rc[0], rc[1])
	}
	j.notes(total)
	verify.Finish(total)
	ph.Verification = total
}

// searchJudge checks search answers: each event through the one
// verifier (valid, matches the filter, once), then against what the relay
// accepted and for the term; and the recall, by shape.
type searchJudge struct {
	x                    *searchIndex
	model                *verify.Model
	o                    SearchOptions
	ph                   *results.Phase
	sigs                 *verify.Checker
	got, want, overLimit int64
	unrelated, outsideEx []string
	storedUnknown        map[string]bool      // unknown events returned: stored after all
	heldBefore           int                  // returned events the run never published, from a relay that held some before it
	recall               map[string]*[2]int64 // by shape: results holding the term as a word, possible ones
}

// judge checks the answer of r into s's verification.
func (j *searchJudge) judge(s *shapeAcc, r *searchRecord) {
	v := s.ver
	v.Checked++
	expected := j.x.containing(r.term, &r.filter)
	inExpected := make(map[string]bool, len(expected))
	for _, e := range expected {
		inExpected[e.ID] = true
	}
	stream := j.sigs.NewStream(&r.filter)
	var inE int64
	for _, raw := range r.raws {
		e, fault := stream.Event(raw, nil, nil)
		verify.Book(v, fault)
		if fault == verify.NotMatching {
			v.Notes = verify.AppendUnique(v.Notes, "results outside the filter's "+outside(&r.filter, e)+" (the search term's filter conditions apply too: NIP-50)")
			if len(j.outsideEx) < 3 {
				j.outsideEx = append(j.outsideEx, fmt.Sprintf("%s returned %s (kind %d, created_at %d)", r.filter.AppendJSON(nil), e.ID, e.Kind, e.CreatedAt))
			}
		}
		if fault != verify.Valid || !j.published(v, e) {
			continue
		}
		j.term(v, e, r.term)
		if inExpected[e.ID] {
			inE++
		}
	}
	if int64(len(r.raws)) > int64(j.o.Limit) {
		j.overLimit++
	}
	if j.model == nil {
		return
	}
	w := min(int64(len(expected)), int64(j.o.Limit))
	if j.o.RelayCap > 0 {
		w = min(w, int64(j.o.RelayCap))
	}
	v.Expected += w
	rc := j.recall[r.shape]
	if rc == nil {
		rc = &[2]int64{}
		j.recall[r.shape] = rc
	}
	rc[0], rc[1] = rc[0]+min(inE, w), rc[1]+w
	j.got, j.want = j.got+min(inE, w), j.want+w
}

// published says whether e may be in an answer: relaybench published it
// and the relay accepted it, or its OK never came (neither owed nor
// forbidden); anything else is extra.
func (j *searchJudge) published(v *results.Verification, e *nostr.Event) bool {
	if j.model == nil {
		return true
	}
	if j.model.IsUnknown(e.ID) {
		j.storedUnknown[e.ID] = true
		return true
	}
	if j.model.Foreign(e.ID) {
		j.heldBefore++ // the relay's earlier data: may be in any answer
		return true
	}
	if acc, _ := j.model.Accepted(e.ID); !acc {
		v.Extra++
		v.Notes = verify.AppendUnique(v.Notes, "returned events relaybench never published or that the relay refused")
		return false
	}
	return true
}

// term counts how e holds the term searched for.
func (j *searchJudge) term(v *results.Verification, e *nostr.Event, term string) {
	switch matchTerm(e, term) {
	case matchWord:
		j.ph.Counts["results_word"]++
	case matchSubstring:
		j.ph.Counts["results_substring"]++
	case matchLoose:
		j.ph.Counts["results_loose"]++
	case matchNone:
		j.ph.Counts["results_unrelated"]++
		v.NotMatching++
		if len(j.unrelated) < 3 {
			j.unrelated = append(j.unrelated, fmt.Sprintf("%q returned event %s", term, e.ID))
		}
	}
}

// searchRates sets the results per search and the recall (got of want)
// into rates.
func searchRates(rates map[string]float64, counts map[string]int64, got, want int64) {
	if n := counts[results.CountSearches]; n > 0 {
		rates["results_per_search"] = float64(counts[results.CountEventsReturned]) / float64(n)
	}
	if want > 0 {
		rates["recall"] = float64(got) / float64(want)
	}
}

// notes names in total what the searches showed that is not a count.
func (j *searchJudge) notes(total *results.Verification) {
	ph, model := j.ph, j.model
	add := func(s string) { total.Notes = verify.AppendUnique(total.Notes, s) }
	if n := ph.Counts["results_substring"]; n > 0 {
		add(fmt.Sprintf("%d results hold the term only inside a longer word (substring matching): named, not failed", n))
	}
	if n := ph.Counts["results_loose"]; n > 0 {
		add(fmt.Sprintf("%d results match the term loosely (accents folded, a word sharing its stem, or a tag): named, not failed (NIP-50: relays interpret the query as best they can)", n))
	}
	for _, x := range j.outsideEx {
		add("result outside the filter: " + x)
	}
	for _, u := range j.unrelated {
		add("result holding nothing of the term: " + u)
	}
	if j.overLimit > 0 {
		add(fmt.Sprintf("%d searches returned more results than their limit %d", j.overLimit, j.o.Limit))
	}
	if j.want > 0 {
		add(fmt.Sprintf("recall %.2f%%: %s results hold the term as a word, of %s possible (events holding it, up to the limit); a lower recall is reported, not failed (NIP-50 results are the relay's best effort)",
			100*float64(j.got)/float64(j.want), numfmt.Group(j.got), numfmt.Group(j.want)))
	}
	if model == nil {
		total.Notes = append(total.Notes, "nothing was published in this run, so extra results and recall cannot be known: validity, filter and term were checked")
	} else if len(model.Unknown) > 0 {
		total.StoredUnknown = int64(len(j.storedUnknown))
		add(verify.UnknownNote(len(j.storedUnknown), len(model.Unknown)))
	}
	if n := j.heldBefore; n > 0 {
		total.HeldBefore = int64(n)
		add(verify.PriorNote(n))
	}
	if n := ph.Counts[results.CountFailed]; n > 0 {
		total.Notes = append(total.Notes, fmt.Sprintf("%d searches did not end with EOSE (CLOSED, timeout or connection loss): not verified; the outcomes line says which", n))
	}
}

// outside names the condition of f (other than search) that e fails.
func outside(f *nostr.Filter, e *nostr.Event) string {
	g := nostr.Filter{Kinds: f.Kinds}
	if !g.Matches(e) {
		return "kinds"
	}
	g = nostr.Filter{Authors: f.Authors}
	if !g.Matches(e) {
		return "authors"
	}
	g = nostr.Filter{Since: f.Since, Until: f.Until}
	if !g.Matches(e) {
		return "since/until"
	}
	return "conditions"
}

// Check checks the options as the CLI's flags set them (Checked): the
// searches, what their answers from in's corpus cost, and the terms.
func (o SearchOptions) Check(r *flagcheck.Ranges, in CheckInput) {
	r.Queries(o.Queries, o.Limit, in.Events, in.Size)
	if slices.Contains(o.Terms, "") {
		r.Bad("terms", `""`, "a term must not be empty")
	}
}
