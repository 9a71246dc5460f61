package conformance

import (
	"errors"
	"fmt"
	"slices"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/nostr"
	"github.com/relaybench/relaybench/wire"
)

// NIP-45 and NIP-50 sentences, quoted exactly. NIP-45's form of the
// answer and its union of filters carry no RFC keyword; relaybench reads
// them as the protocol's definition (a MUST), as it reads NIP-01's "are to
// be returned". A count that differs from what is stored is named, not
// failed, when the relay says it is approximate: "Relays may use
// probabilistic counts to reduce compute requirements."
const (
	sent45Form    = "Counts are returned using a `COUNT` response in the form `{\"count\": <integer>}`."
	sent45Union   = "Multiple filters are OR'd together and aggregated into a single count result."
	sent45Closed  = "Whenever the relay decides to refuse to fulfill the `COUNT` request, it MUST return a `CLOSED` message."
	sent50Match   = "Relays SHOULD interpret the query to the best of their ability and return events that match it."
	sent50Content = "Relays SHOULD perform matching against `content` event field"
	sent50Ext     = "A query string may contain `key:value` pairs (two words separated by colon), these are extensions, relays SHOULD ignore extensions they don't support."
)

// countAnswer is the relay's answer to one COUNT.
type countAnswer struct {
	n           int64
	approximate bool
	bad         string // why the object is not {"count": n} ("" if it is)
	bare        bool   // the answer was a bare integer, n (a form NIP-45 does not give)
	closed      bool
	reason      string
}

// count sends ["COUNT",sub,filters...] on a new connection and waits for
// its COUNT or CLOSED.
func (t *checkRun) count(sub string, filters ...nostr.Filter) (countAnswer, error) {
	p, err := t.conn()
	if err != nil {
		return countAnswer{}, err
	}
	b := append([]byte(`["COUNT",`), nostr.AppendJSONString(nil, sub)...)
	for i := range filters {
		b = filters[i].AppendJSON(append(b, ','))
	}
	if err := p.sendRaw(t.ctx, append(b, ']')); err != nil {
		return countAnswer{}, err
	}
	var a countAnswer
	err = t.frames(p, fmt.Sprintf("the COUNT of %q", sub), func(f frame) (bool, error) {
		if f.str(0) != sub {
			return false, nil
		}
		switch f.label {
		case "CLOSED":
			a = countAnswer{closed: true, reason: f.str(1)}
			return true, nil
		case "COUNT":
			a = countOf(f)
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return countAnswer{}, err
	}
	return a, nil
}

// countOf is the answer a COUNT frame gives.
func countOf(f frame) countAnswer {
	var a countAnswer
	if len(f.parts) < 2 {
		a.bad = "the COUNT answer has no count object"
		return a
	}
	n, approx, _, err := wire.ParseCountObject(f.parts[1])
	a.n, a.approximate = n, approx
	var bare *wire.BareCountError
	a.bare = errors.As(err, &bare)
	if err != nil {
		a.bad = err.Error()
	}
	return a
}

// countEvents stores A (#t x), B (#t x), C (#t x and y), D (#t y), E (#t z)
// and returns the tags x and y: {#t:[x]} counts 3, [{#t:[x]},{#t:[y]}] 4.
func (t *checkRun) countEvents() (x, y string, err error) {
	x, y = t.tag("x"), t.tag("y")
	z := t.tag("z")
	tags := [][]nostr.Tag{{tTag(x)}, {tTag(x)}, {tTag(x), tTag(y)}, {tTag(y)}, {tTag(z)}}
	evs, err := t.fresh(now()-60, func(i int) []nostr.Tag { return tags[i] }, len(tags))
	if err != nil {
		return "", "", err
	}
	return x, y, t.store(evs...)
}

// countForm: COUNT {#t:[x]} is answered ["COUNT",id,{"count":n}].
func countForm(t *checkRun) outcome {
	x, _, err := t.countEvents()
	if err != nil {
		return undecided(err)
	}
	a, err := t.count("c"+t.nonce, nostr.Filter{Tags: map[string][]string{"t": {x}}})
	switch {
	case err != nil:
		return undecided(err)
	case a.closed:
		return notRun("the relay refused the COUNT with CLOSED %q", a.reason)
	case a.bad != "":
		return fail("COUNT answered in another form: %s", a.bad)
	}
	return pass()
}

// countUnion: the counts of {#t:[x]} (3) and of [{#t:[x]},{#t:[y]}] (4,
// the event tagged both counted once) equal the stored matching events.
func countUnion(t *checkRun) outcome {
	x, y, err := t.countEvents()
	if err != nil {
		return undecided(err)
	}
	fx, fy := nostr.Filter{Tags: map[string][]string{"t": {x}}}, nostr.Filter{Tags: map[string][]string{"t": {y}}}
	for i, q := range []struct {
		filters []nostr.Filter
		want    int64
		what    string
	}{{[]nostr.Filter{fx}, 3, "one filter"}, {[]nostr.Filter{fx, fy}, 4, "two filters, one event matching both"}} {
		a, err := t.count(fmt.Sprintf("u%d%s", i, t.nonce), q.filters...)
		switch {
		case err != nil:
			return undecided(err)
		case a.closed:
			return notRun("the relay refused the COUNT with CLOSED %q", a.reason)
		case a.bad != "" && !a.bare: // a bare number is judged here, its form in nip45.count-form
			return unknown("the COUNT answer could not be read (%s; see nip45.count-form)", a.bad)
		case a.n != q.want && a.approximate:
			return named("COUNT of %s answered %d, marked approximate; %d matching events are stored (NIP-45: \"Relays may use probabilistic counts to reduce compute requirements.\")", q.what, a.n, q.want)
		case a.n != q.want:
			return fail("COUNT of %s answered %d; %d matching events are stored, each accepted", q.what, a.n, q.want)
		}
	}
	return pass()
}

// countClosed: a COUNT with a malformed filter is refused with CLOSED.
func countClosed(t *checkRun) outcome { return malformedRefused(t, "COUNT", "COUNT") }

// searchEvents stores three kind-1 events: A and B by two keys whose
// content holds a word unique to this run, C (by A's key) without it. It
// returns the word.
func (t *checkRun) searchEvents() (word string, evs []*nostr.Event, err error) {
	word = "rbc" + t.nonce + "kiwi"
	tag := t.tag("search")
	evs = []*nostr.Event{
		note(kindNote, now()-60, "relaybench conformance search "+word+" apple", tTag(tag)),
		note(kindNote, now()-60, "relaybench conformance "+word+" search pear", tTag(tag)),
		note(kindNote, now()-60, "relaybench conformance search rbc"+t.nonce+"plum apple", tTag(tag)),
	}
	k1, k2 := t.key(), t.key()
	if err := t.sign([]*corpus.Author{k1, k2, k1}, evs...); err != nil {
		return "", nil, err
	}
	return word, evs, t.store(evs...)
}

// The search checks' filters name kinds:[1] beside search, as clients'
// do (NIP-50: "Clients may include `kinds`, `ids` and other filter field
// to restrict the search results"; Wisp refuses a search without kinds).

// searchContent (NIP-50): {search: word, kinds:[1]} returns the two events whose
// content holds the word, not the third.
func searchContent(t *checkRun) outcome {
	word, evs, err := t.searchEvents()
	if err != nil {
		return undecided(err)
	}
	return t.searchJudge(nostr.Filter{Search: word, Kinds: []int{kindNote}}, evs[:2], evs[2:], "search "+word, "")
}

// searchExtension (NIP-50): {search: word + " relaybench:conformance",
// kinds:[1]}: an unsupported extension whose key and value are words of
// every event's content, the third's included: a relay that ignores it
// answers as to the word alone; one that searches its words too returns
// the third event (named).
func searchExtension(t *checkRun) outcome {
	word, evs, err := t.searchEvents()
	if err != nil {
		return undecided(err)
	}
	why := " (its content holds the extension's key and value as words: the extension was searched, not ignored)"
	if base, err := t.query("b"+t.nonce, nostr.Filter{Search: word, Kinds: []int{kindNote}}); err == nil && containsID(base.ids(), evs[2].ID) {
		why = " (the search for the word alone returned it too: see nip50.search-content)"
	}
	return t.searchJudge(nostr.Filter{Search: word + " relaybench:conformance", Kinds: []int{kindNote}}, evs[:2], evs[2:], "search with an unsupported extension", why)
}

// searchJudge queries f: every event of want back and none of not passes;
// anything else is named (NIP-50 matching is a SHOULD), an event of not
// with why.
func (t *checkRun) searchJudge(f nostr.Filter, want, not []*nostr.Event, what, why string) outcome {
	a, err := t.query("q"+t.nonce, f)
	if err != nil {
		return undecided(err)
	}
	missing, _, _ := compare(a, want)
	var wrong []string
	for _, e := range not {
		if slices.Contains(a.ids(), e.ID) {
			wrong = append(wrong, e.ID)
		}
	}
	switch {
	case len(missing) > 0:
		return named("%s: %d of %d stored events whose content holds the word did not come back %s", what, len(missing), len(want), shorts(missing))
	case len(wrong) > 0:
		return named("%s: an event whose content lacks the word came back %s%s", what, shorts(wrong), why)
	}
	return pass()
}

// searchAnd (NIP-50 with NIP-01's && of conditions): {search: word,
// kinds:[1], authors:[B's key]} returns B, never A (the word, another author).
func searchAnd(t *checkRun) outcome {
	word, evs, err := t.searchEvents()
	if err != nil {
		return undecided(err)
	}
	a, err := t.query("w"+t.nonce, nostr.Filter{Search: word, Kinds: []int{kindNote}, Authors: []string{evs[1].PubKey}})
	if err != nil {
		return undecided(err)
	}
	_, extra, _ := compare(a, evs[1:2])
	switch {
	case len(extra) > 0:
		return fail("a filter with search and authors returned %d events by another author %s", len(extra), shorts(extra))
	case len(a.events) == 0:
		return named("a filter with search and authors returned nothing (the matching event is stored): nothing to judge")
	}
	return pass()
}
