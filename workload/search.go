package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/relaybench/relaybench/internal/mono"
	"github.com/relaybench/relaybench/metrics"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/outcome"
	"github.com/relaybench/relaybench/results"
	"github.com/relaybench/relaybench/verify"
	"github.com/relaybench/relaybench/wire"
)

// SearchShapes are the NIP-50 search filters, in the order they rotate:
// a term alone (kind 1), a term by one author, a term within two hours.
var SearchShapes = []string{"search", "search-author", "search-time"}

func init() {
	Register(Decl{Name: "search", Input: NeedsCorpus, NIP: 50, What: "search",
		Summary: "NIP-50 search: publish the corpus, then search for words of its content; latency, results per search, recall, every result checked.",
		New:     func() Config { return newDefaults[SearchOptions]() }})
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
	o.fromEnv(env, fmt.Sprintf("Searching (NIP-50) on %s", env.URL), int64(o.Queries))
	if o.RelayCap == 0 {
		o.RelayCap = env.relayCap()
	}
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
	setup := mono.Now()
	cn, err := wire.Dial(ctx, url, o.Dial)
	if err != nil {
		return results.Phase{}, err
	}
	conns := []*wire.Conn{cn}
	defer func() { closeAll(conns) }()
	pctx, wd := outcome.NewWatchdog(ctx, 3, "searches ended without EOSE (timed out or connection lost)")
	defer wd.Stop()
	q := &queryRun{user: ctx, url: url, o: QueryOptions{Base: Base{Timeout: o.Timeout}}, wd: wd, whole: true,
		led: outcome.New(results.OpQuery, int64(o.Queries))}
	var connErrs []string

	smp := startSampling(o.Begin)
	cpu0 := CPUTime()
	start := mono.Now()
	q.series = metrics.NewSeries(start)
	redials := 0
	for i, r := range recs {
		if pctx.Err() != nil {
			break
		}
		if cn.Err() != nil {
			if redials == maxRedials {
				break
			}
			redials++
			nc, err := wire.Dial(pctx, url, o.Dial)
			if err != nil {
				connErrs = verify.AppendUnique(connErrs, "redial after a lost connection failed: "+err.Error())
				break
			}
			cn = nc
			conns = append(conns, nc)
		}
		qctx, cancel := context.WithTimeout(pctx, o.Timeout)
		qr, err := cn.Query(qctx, "s"+strconv.Itoa(i), []nostr.Filter{r.filter})
		cancel()
		wd.Book(q.book(&r.queryRecord, qr, err))
		if o.Progress != nil && (i+1)%10 == 0 {
			o.Progress(int64(i + 1))
		}
	}
	end := mono.Now()
	cpu := CPUTime() - cpu0
	smp.stop()
	if o.Progress != nil {
		o.Progress(int64(len(recs)))
	}
	wd.Settle(q.led, outcome.WhyConnGone)

	terms := map[string]bool{}
	for _, r := range recs {
		terms[r.term] = true
	}
	ph := results.Phase{
		Name:     "search",
		Workload: "search",
		Params: map[string]any{
			"queries": len(recs), "limit": o.Limit, "timeout": o.Timeout.String(), "shapes": SearchShapes,
			"nip": 50, "terms": len(terms),
		},
		Start:     mono.Time(start),
		Duration:  end - start,
		SetupSecs: setupSince(setup, start),
		Counts:    map[string]int64{results.CountSearches: 0, results.CountFailed: 0, results.CountTimedOut: 0, results.CountEventsReturned: 0},
		Aborted:   wd.Aborted(),
		Latency:   map[string]*results.Histogram{},
		Series:    q.series.Result(end),
		Resources: &results.Resources{ClientCPUSecs: cpu.Seconds()},
	}
	addConnStats(ctx, &ph, conns)
	ph.Errors = verify.AppendUnique(ph.Errors, connErrs...)
	a := q.led.Result()
	ph.Accounts = append(ph.Accounts, a)
	ph.Counts[results.CountRefused], ph.Counts["not_run"], ph.Counts["cancelled"] = a.Refused, a.NotRun, a.Cancelled
	smp.into(&ph)
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
	type shapeAcc struct {
		g         *results.Group
		eose      *metrics.Histogram
		busy      int64
		got, want int64
		verif     *results.Verification
	}
	allEOSE, allFirst := metrics.NewHistogram(), metrics.NewHistogram()
	groups := map[string]*shapeAcc{}
	sigs := verify.NewChecker()
	var got, want int64
	var overLimit int64
	var unrelated, outsideEx []string
	storedUnknown := map[string]bool{} // unknown events returned: stored after all
	for _, r := range recs {
		if r.ended == "" && r.err == "" {
			continue
		}
		s := groups[r.shape]
		if s == nil {
			s = &shapeAcc{g: &results.Group{Name: r.shape, Counts: map[string]int64{results.CountSearches: 0, results.CountFailed: 0, results.CountEventsReturned: 0},
				Latency: map[string]*results.Histogram{}}, eose: metrics.NewHistogram(),
				verif: &results.Verification{Verified: model != nil}}
			groups[r.shape] = s
		}
		s.g.Counts[results.CountEventsReturned] += r.returned
		ph.Counts[results.CountEventsReturned] += r.returned
		if r.ended != "eose" {
			s.g.Counts[results.CountFailed]++
			ph.Counts[results.CountFailed]++
			if r.ended == string(wire.EndTimeout) {
				ph.Counts[results.CountTimedOut]++
			}
			ph.Errors = verify.AppendUnique(ph.Errors, r.shape+" search: "+r.err)
			continue
		}
		s.g.Counts[results.CountSearches]++
		ph.Counts[results.CountSearches]++
		s.eose.Record(r.latency)
		allEOSE.Record(r.latency)
		s.busy += r.latency
		if r.first > 0 {
			allFirst.Record(r.first)
		}
		v := s.verif
		v.Checked++
		seen := map[string]bool{}
		var inE int64
		expected := x.containing(r.term, &r.filter)
		inExpected := make(map[string]bool, len(expected))
		for _, e := range expected {
			inExpected[e.ID] = true
		}
		for _, raw := range r.raws {
			v.Returned++
			e, ok := sigs.Check(raw)
			if !ok {
				v.Invalid++
				continue
			}
			if seen[e.ID] {
				v.Duplicated++
				continue
			}
			seen[e.ID] = true
			if !r.filter.Matches(e) {
				v.NotMatching++
				v.Notes = verify.AppendUnique(v.Notes, "results outside the filter's "+outside(&r.filter, e)+" (the search term's filter conditions apply too: NIP-50)")
				if len(outsideEx) < 3 {
					outsideEx = append(outsideEx, fmt.Sprintf("%s returned %s (kind %d, created_at %d)", r.filter.AppendJSON(nil), e.ID, e.Kind, e.CreatedAt))
				}
				continue
			}
			if model != nil {
				// An event published without a decisive answer may be
				// stored: neither owed nor forbidden.
				if model.IsUnknown(e.ID) {
					storedUnknown[e.ID] = true
				} else if acc, _ := model.Accepted(e.ID); !acc {
					v.Extra++
					v.Notes = verify.AppendUnique(v.Notes, "returned events relaybench never published or that the relay refused")
					continue
				}
			}
			switch matchTerm(e, r.term) {
			case matchWord:
				ph.Counts["results_word"]++
			case matchSubstring:
				ph.Counts["results_substring"]++
			case matchLoose:
				ph.Counts["results_loose"]++
			case matchNone:
				ph.Counts["results_unrelated"]++
				v.NotMatching++
				if len(unrelated) < 3 {
					unrelated = append(unrelated, fmt.Sprintf("%q returned event %s", r.term, e.ID))
				}
			}
			if inExpected[e.ID] {
				inE++
			}
		}
		if n := int64(len(r.raws)); n > int64(o.Limit) {
			overLimit++
		}
		if model == nil {
			continue
		}
		w := int64(len(expected))
		w = min(w, int64(o.Limit))
		if o.RelayCap > 0 {
			w = min(w, int64(o.RelayCap))
		}
		v.Expected += w
		s.got += min(inE, w)
		s.want += w
		got += min(inE, w)
		want += w
	}
	ph.Latency[results.LatencyEOSE] = allEOSE.Result()
	if allFirst.Count() > 0 {
		ph.Latency[results.LatencyFirstEvent] = allFirst.Result()
	}
	ph.Rates = map[string]float64{}
	if ph.Duration > 0 {
		ph.Rates[results.RateSearches] = results.PerSecond(ph.Counts[results.CountSearches], ph.Duration)
	}
	if n := ph.Counts[results.CountSearches]; n > 0 {
		ph.Rates["results_per_search"] = float64(ph.Counts[results.CountEventsReturned]) / float64(n)
	}
	if want > 0 {
		ph.Rates["recall"] = float64(got) / float64(want)
	}
	total := &results.Verification{Verified: model != nil}
	for _, name := range SearchShapes {
		s := groups[name]
		if s == nil {
			continue
		}
		s.g.Latency[results.LatencyEOSE] = s.eose.Result()
		s.g.Rates = map[string]float64{}
		if s.busy > 0 {
			s.g.Rates[results.RateSearches] = results.PerSecond(s.g.Counts[results.CountSearches], s.busy)
		}
		if n := s.g.Counts[results.CountSearches]; n > 0 {
			s.g.Rates["results_per_search"] = float64(s.g.Counts[results.CountEventsReturned]) / float64(n)
		}
		if s.want > 0 {
			s.g.Rates["recall"] = float64(s.got) / float64(s.want)
		}
		verify.Add(total, s.verif)
		verify.Finish(s.verif)
		s.g.Verification = s.verif
		ph.Groups = append(ph.Groups, *s.g)
	}
	if n := ph.Counts["results_substring"]; n > 0 {
		total.Notes = verify.AppendUnique(total.Notes, fmt.Sprintf("%d results hold the term only inside a longer word (substring matching): named, not failed", n))
	}
	if n := ph.Counts["results_loose"]; n > 0 {
		total.Notes = verify.AppendUnique(total.Notes, fmt.Sprintf("%d results match the term loosely (accents folded, a word sharing its stem, or a tag): named, not failed (NIP-50: relays interpret the query as best they can)", n))
	}
	for _, x := range outsideEx {
		total.Notes = verify.AppendUnique(total.Notes, "result outside the filter: "+x)
	}
	for _, u := range unrelated {
		total.Notes = verify.AppendUnique(total.Notes, "result holding nothing of the term: "+u)
	}
	if overLimit > 0 {
		total.Notes = verify.AppendUnique(total.Notes, fmt.Sprintf("%d searches returned more results than their limit %d", overLimit, o.Limit))
	}
	if want > 0 {
		total.Notes = verify.AppendUnique(total.Notes, fmt.Sprintf("recall %.1f%%: %d results hold the term as a word, of %d possible (events holding it, up to the limit); a lower recall is reported, not failed (NIP-50 results are the relay's best effort)",
			100*float64(got)/float64(want), got, want))
	}
	if model == nil {
		total.Notes = append(total.Notes, "nothing was published in this run, so extra results and recall cannot be known: validity, filter and term were checked")
	} else if len(model.Unknown) > 0 {
		total.StoredUnknown = int64(len(storedUnknown))
		total.Notes = verify.AppendUnique(total.Notes, verify.UnknownNote(len(storedUnknown), len(model.Unknown)))
	}
	if n := ph.Counts[results.CountFailed]; n > 0 {
		total.Notes = append(total.Notes, fmt.Sprintf("%d searches did not end with EOSE (CLOSED, timeout or connection loss): not verified; the outcomes line says which", n))
	}
	verify.Finish(total)
	ph.Verification = total
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
