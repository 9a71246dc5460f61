package conformance

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/relaybench/relaybench/corpus"
	"github.com/relaybench/relaybench/nostr"
)

// The NIP sentences the checks rest on, quoted exactly.
const (
	sentUnion   = "A `REQ` message may contain multiple filters. In this case, events that match any of the filters are to be returned, i.e., multiple filters are to be interpreted as `||` conditions."
	sentReplace = "Any new events it receives SHOULD be sent to that same websocket until the connection is closed, a `CLOSE` event is received with the same `<subscription_id>`, or a new `REQ` is sent using the same `<subscription_id>` (in which case a new subscription is created, replacing the old one)."
	sentReturn  = "Upon receiving a `REQ` message, the relay SHOULD return events that match the filter."
	sentLimit0  = "The `limit` property of a filter is only valid for the initial query and MUST be ignored afterwards."
	sentOrder   = "When `limit: n` is present it is assumed that the events returned in the initial query will be the last `n` events ordered by the `created_at`. Newer events should appear first, and in the case of ties the event with the lowest id (first in lexical order) should be first."
	sentAnd     = "All conditions of a filter that are specified must match for an event for it to pass the filter, i.e., multiple conditions are interpreted as `&&` conditions."
	sentTag     = "In the case of tag attributes such as `#e`, for which an event may have multiple values, the event and filter condition values must have at least one item in common."
	sentSince   = "If a filter includes the `since` property, events with `created_at` greater than or equal to `since` are considered to match the filter. The `until` property is similar except that `created_at` must be less than or equal to `until`. In short, an event matches a filter if `since <= created_at <= until` holds."
	sentTie     = "In case of replaceable events with the same timestamp, the event with the lowest id (first in lexical order) should be retained, and the other discarded."
	sentLatest  = "for kind `n` such that `10000 <= n < 20000 || n == 0 || n == 3`, events are **replaceable**, which means that, for each combination of `pubkey` and `kind`, only the latest event MUST be stored by relays, older versions MAY be discarded."
	sentJust    = "When answering to `REQ` messages for replaceable events such as `{\"kinds\":[0],\"authors\":[<hex-key>]}`, even if the relay has more than one version stored, it SHOULD return just the latest one."
	sentOK      = "`OK` messages MUST be sent in response to `EVENT` messages received from clients, they must have the 3rd parameter set to `true` when an event has been accepted by the relay, `false` otherwise."
	sentEphem   = "for kind `n` such that `20000 <= n < 30000`, events are **ephemeral**, which means they are not expected to be stored by relays."
	// NIP-01's own example of an OK for a duplicate (no sentence says a
	// duplicate is "accepted"): a false is named, not failed.
	sentDup     = "`[\"OK\", \"b1a649ebe8...\", true, \"duplicate: already have this event\"]`"
	sentClosed  = "`CLOSED` messages MUST be sent in response to a `REQ` when the relay refuses to fulfill it."
	sentDelete  = "Relays SHOULD delete or stop publishing any referenced events that have an identical `pubkey` as the deletion request."
	sentExpired = "Relays SHOULD drop any events that are published to them if they are expired."
)

var all = []Check{
	{ID: "req.multi-filter-union", NIP: 1, Level: MUST, Sentence: sentUnion, run: multiFilterUnion},
	{ID: "req.multi-filter-once", NIP: 1, Level: MUST, Sentence: sentUnion, run: multiFilterOnce},
	{ID: "req.multi-filter-own-limit", NIP: 1, Level: MUST, Sentence: sentUnion, run: multiFilterOwnLimit},
	{ID: "req.same-id-replaces", NIP: 1, Level: MUST, Sentence: sentReplace, run: sameIDReplaces},
	{ID: "req.close-then-reuse", NIP: 1, Level: MUST, Sentence: sentReturn, run: closeThenReuse},
	{ID: "req.two-subscriptions-live", NIP: 1, Level: SHOULD, Sentence: sentReplace, run: twoSubscriptionsLive},
	{ID: "req.limit-zero", NIP: 1, Level: MUST, Sentence: sentLimit0, run: func(t *checkRun) outcome { return limitLive(t, 0) }},
	{ID: "req.limit-filled-live", NIP: 1, Level: MUST, Sentence: sentLimit0, run: func(t *checkRun) outcome { return limitLive(t, 1) }},
	{ID: "req.order-no-limit", NIP: 1, Level: SHOULD, Sentence: sentOrder, run: orderNoLimit},
	{ID: "req.ids-and-conditions", NIP: 1, Level: MUST, Sentence: sentAnd, run: idsAndConditions},
	{ID: "req.tag-value-exact", NIP: 1, Level: MUST, Sentence: sentTag, run: tagValueExact},
	{ID: "req.since-until-inclusive", NIP: 1, Level: MUST, Sentence: sentSince, run: sinceUntilInclusive},
	{ID: "req.limit-tie-lowest-id", NIP: 1, Level: SHOULD, Sentence: sentOrder, run: limitTie},
	{ID: "replaceable.latest-stored", NIP: 1, Level: MUST, Sentence: sentLatest, run: replaceableLatest},
	{ID: "replaceable.tie-lowest-id", NIP: 1, Level: SHOULD, Sentence: sentTie, run: func(t *checkRun) outcome { return replaceTie(t, false) }},
	{ID: "addressable.tie-lowest-id", NIP: 1, Level: SHOULD, Sentence: sentTie, run: func(t *checkRun) outcome { return replaceTie(t, true) }},
	{ID: "ephemeral.ok", NIP: 1, Level: MUST, Sentence: sentOK, run: ephemeralOK},
	{ID: "ephemeral.live", NIP: 1, Level: SHOULD, Sentence: sentReplace, run: ephemeralLive},
	{ID: "ephemeral.not-stored", NIP: 1, Level: SHOULD, Sentence: sentEphem, run: ephemeralNotStored},
	{ID: "event.duplicate-ok-true", NIP: 1, Level: SHOULD, Sentence: sentDup, run: duplicateOK},
	{ID: "req.malformed-closed", NIP: 1, Level: MUST, Sentence: sentClosed, run: malformedClosed},
	{ID: "nip09.deletion", NIP: 9, Level: SHOULD, Sentence: sentDelete, Needs: 9, run: deletion},
	{ID: "nip40.expired-dropped", NIP: 40, Level: SHOULD, Sentence: sentExpired, Needs: 40, run: expired},
	{ID: "nip11.document", NIP: 11, Level: SHOULD, Sentence: sent11Doc, Needs: 11, run: nip11Document},
	{ID: "nip11.cors", NIP: 11, Level: MUST, Sentence: sent11CORS, Needs: 11, run: nip11CORS},
	{ID: "nip42.auth-ok", NIP: 42, Level: MUST, Sentence: sent42OK, Needs: 42, run: authOK},
	{ID: "nip42.auth-accepted", NIP: 42, Level: MAY, Sentence: sent42Session, Needs: 42, run: authAcceptedCheck},
	{ID: "nip42.wrong-challenge-refused", NIP: 42, Level: MUST, Sentence: sent42Verify, Needs: 42, run: authWrongChallenge},
	{ID: "nip42.not-broadcast", NIP: 42, Level: MUST, Sentence: sent42Broadcast, Needs: 42, run: authNotBroadcast},
	{ID: "nip42.auth-required-prefix", NIP: 42, Level: MAY, Sentence: sent42Prefix, Needs: 42, run: authRequiredPrefix},
	{ID: "nip45.count-form", NIP: 45, Level: MUST, Sentence: sent45Form, Needs: 45, run: countForm},
	{ID: "nip45.count-union", NIP: 45, Level: MUST, Sentence: sent45Union, Needs: 45, run: countUnion},
	{ID: "nip45.refused-closed", NIP: 45, Level: MUST, Sentence: sent45Closed, Needs: 45, run: countClosed},
	{ID: "nip50.search-content", NIP: 50, Level: SHOULD, Sentence: sent50Match, Needs: 50, run: searchContent},
	{ID: "nip50.extension-ignored", NIP: 50, Level: SHOULD, Sentence: sent50Ext, Needs: 50, run: searchExtension},
	{ID: "nip50.search-and-conditions", NIP: 1, Level: MUST, Sentence: sentAnd, Needs: 50, run: searchAnd},
	{ID: "nip77.neg-open-answered", NIP: 77, Level: MUST, Sentence: sent77Answer, Needs: 77, run: negOpenAnswered},
	{ID: "nip77.reconcile", NIP: 77, Level: MUST, Sentence: sent77Goal, Needs: 77, run: negReconcile},
}

// Kinds of the checks' events: regular kind 1, and one kind of each
// replaceable range picked per run (fresh keys make them unique anyway).
const (
	kindNote        = 1
	kindReplaceable = 10777
	kindAddressable = 30777
	kindEphemeral   = 20777
)

func tTag(v string) nostr.Tag { return nostr.Tag{"t", v} }

// fresh signs n kind-1 events by one fresh key, created_at at, each with
// tags (copied).
func (t *checkRun) fresh(at int64, tagsOf func(i int) []nostr.Tag, n int) ([]*nostr.Event, error) {
	evs := make([]*nostr.Event, n)
	for i := range evs {
		evs[i] = note(kindNote, at, fmt.Sprintf("relaybench conformance %s %d", t.nonce, i), tagsOf(i)...)
	}
	return evs, t.sign([]*corpus.Author{t.key()}, evs...)
}

// compare sorts the ids of an answer against the expected set.
func compare(a answer, want []*nostr.Event) (missing, extra, dup []string) {
	exp := map[string]bool{}
	for _, e := range want {
		exp[e.ID] = true
	}
	seen := map[string]bool{}
	for _, e := range a.events {
		switch {
		case seen[e.ID]:
			dup = append(dup, e.ID)
		case !exp[e.ID]:
			extra = append(extra, e.ID)
		}
		seen[e.ID] = true
	}
	for _, e := range want {
		if !seen[e.ID] {
			missing = append(missing, e.ID)
		}
	}
	return
}

// opened judges the answer to a REQ a check keeps open: open when it
// ended in EOSE; else not run when the relay refused it (CLOSED, e.g.
// "auth-required: …"), unknown when no EOSE came.
func opened(a answer, err error) (outcome, bool) {
	switch {
	case a.closed:
		return notRun("the relay closed the REQ: %q", a.reason), false
	case err != nil:
		return unknown("no EOSE for the subscription: %v", err), false
	}
	return outcome{}, true
}

// exactly judges an answer that must hold want, each once, and nothing else.
func exactly(a answer, err error, want []*nostr.Event, what string) outcome {
	if err != nil {
		return undecided(err)
	}
	if a.closed {
		return notRun("the relay closed the REQ: %q", a.reason)
	}
	missing, extra, dup := compare(a, want)
	switch {
	case len(extra) > 0:
		return fail("%s: %d events that match no filter came back %s", what, len(extra), shorts(extra))
	case len(missing) > 0:
		return fail("%s: %d of %d matching stored events missing %s", what, len(missing), len(want), shorts(missing))
	case len(dup) > 0:
		return fail("%s: %d events came back more than once %s", what, len(dup), shorts(dup))
	}
	return pass()
}

// multiFilterUnion: two filters; events matching the first, the second or
// both come back, an event matching neither does not.
func multiFilterUnion(t *checkRun) outcome {
	evs, a, err := t.twoFilters()
	if err != nil {
		return undecided(err)
	}
	a.events = dedupe(a.events)
	return exactly(a, nil, evs[:3], "REQ with two filters")
}

// multiFilterOnce: an event matching both filters of one REQ comes once.
func multiFilterOnce(t *checkRun) outcome {
	evs, a, err := t.twoFilters()
	if err != nil {
		return undecided(err)
	}
	_, _, dup := compare(a, evs[:3])
	if len(dup) > 0 {
		return fail("an event matching both filters of one REQ came back %d times more than once %s", len(dup), shorts(dup))
	}
	if slices.ContainsFunc(a.events, func(e *nostr.Event) bool { return e.ID == evs[2].ID }) {
		return pass()
	}
	return unknown("the event matching both filters did not come back at all (see req.multi-filter-union)")
}

// multiFilterOwnLimit: A (no tag) and B1..B3 (#t y), asked as clients
// open a thread, the root by id beside its replies:
// [{"ids":[A],"limit":1},{"#t":[y]}]. The first filter's limit bounds its
// own events only: the union is all four.
func multiFilterOwnLimit(t *checkRun) outcome {
	y := t.tag("y")
	evs, err := t.fresh(now()-60, func(i int) []nostr.Tag {
		if i == 0 {
			return nil
		}
		return []nostr.Tag{tTag(y)}
	}, 4)
	if err != nil {
		return undecided(err)
	}
	if err := t.store(evs...); err != nil {
		return undecided(err)
	}
	a, err := t.query("w"+t.nonce, nostr.Filter{IDs: []string{evs[0].ID}, Limit: 1}, nostr.Filter{Tags: map[string][]string{"t": {y}}})
	return exactly(a, err, evs, `REQ [{"ids":[A],"limit":1},{"#t":[y]}]`)
}

// twoFilters stores A (#t x), B (#t y), C (both), D (#t z) and asks
// [{#t:[x]},{#t:[y]}]: A, B and C are the union.
func (t *checkRun) twoFilters() ([]*nostr.Event, answer, error) {
	x, y, z := t.tag("x"), t.tag("y"), t.tag("z")
	tags := [][]nostr.Tag{{tTag(x)}, {tTag(y)}, {tTag(x), tTag(y)}, {tTag(z)}}
	evs, err := t.fresh(now()-60, func(i int) []nostr.Tag { return tags[i] }, 4)
	if err != nil {
		return nil, answer{}, err
	}
	if err := t.store(evs...); err != nil {
		return nil, answer{}, err
	}
	a, err := t.query("u"+t.nonce, nostr.Filter{Tags: map[string][]string{"t": {x}}}, nostr.Filter{Tags: map[string][]string{"t": {y}}})
	return evs, a, err
}

func dedupe(evs []*nostr.Event) []*nostr.Event {
	seen := map[string]bool{}
	var out []*nostr.Event
	for _, e := range evs {
		if !seen[e.ID] {
			seen[e.ID] = true
			out = append(out, e)
		}
	}
	return out
}

// sameIDReplaces: REQ X {#t:[a]}, then REQ X {#t:[b]} while X is open;
// an event tagged a, then a marker tagged b, are published: the marker
// comes under X, the first must not (the first subscription is replaced).
func sameIDReplaces(t *checkRun) outcome {
	ta, tb := t.tag("old"), t.tag("new")
	p, err := t.conn()
	if err != nil {
		return undecided(err)
	}
	sub := "r" + t.nonce
	for _, tag := range []string{ta, tb} {
		if err := p.req(t.ctx, sub, nostr.Filter{Tags: map[string][]string{"t": {tag}}}); err != nil {
			return undecided(err)
		}
		a, err := t.collect(p, sub)
		if err != nil {
			return undecided(err)
		}
		if a.closed {
			return notRun("the relay closed the REQ: %q", a.reason)
		}
	}
	evs, err := t.fresh(now(), func(i int) []nostr.Tag { return []nostr.Tag{tTag([]string{ta, tb}[i])} }, 2)
	if err != nil {
		return undecided(err)
	}
	if err := t.store(evs...); err != nil {
		return undecided(err)
	}
	got, err := t.until(p, sub, evs[1].ID)
	if err != nil {
		return unknown("the marker event (matching the second REQ) did not come: %v", err)
	}
	if slices.Contains(got, evs[0].ID) {
		return fail("after a second REQ under the same id, an event matching only the first REQ's filter came under that id (%s): the old subscription was not replaced", short(evs[0].ID))
	}
	return pass()
}

// until reads p's frames until the EVENT with id comes under sub; it
// returns the ids of the events that came under sub meanwhile (id last).
func (t *checkRun) until(p *probe, sub, id string) ([]string, error) {
	ctx, cancel := t.wait()
	defer cancel()
	return t.untilCtx(ctx, p, sub, id)
}

// untilCtx is until with its own deadline.
func (t *checkRun) untilCtx(ctx context.Context, p *probe, sub, id string) ([]string, error) {
	var got []string
	for {
		f, err := p.next(ctx)
		if err != nil {
			return got, err
		}
		if f.label == "CLOSED" && f.str(0) == sub {
			return got, fmt.Errorf("the relay closed the subscription: %q", f.str(1))
		}
		if f.label != "EVENT" || f.str(0) != sub {
			continue
		}
		if len(got) >= answerCap {
			return got, errOverCap
		}
		if ev := t.event(f); ev != nil {
			got = append(got, ev.ID)
			if ev.ID == id {
				return got, nil
			}
		}
	}
}

// closeThenReuse: a stored event; REQ X, EOSE, CLOSE X and at once REQ X
// again, several times: every answer holds the stored event.
func closeThenReuse(t *checkRun) outcome {
	const rounds = 20
	tag := t.tag("reuse")
	evs, err := t.fresh(now()-60, func(int) []nostr.Tag { return []nostr.Tag{tTag(tag)} }, 1)
	if err != nil {
		return undecided(err)
	}
	if err := t.store(evs...); err != nil {
		return undecided(err)
	}
	p, err := t.conn()
	if err != nil {
		return undecided(err)
	}
	sub := "c" + t.nonce
	f := nostr.Filter{Tags: map[string][]string{"t": {tag}}}
	empty, firstEmpty := 0, false // empty: answers after a CLOSE
	for i := 0; i < rounds; i++ {
		if i > 0 {
			if err := p.closeSub(t.ctx, sub); err != nil {
				return undecided(err)
			}
		}
		if err := p.req(t.ctx, sub, f); err != nil {
			return undecided(err)
		}
		a, err := t.collect(p, sub)
		if err != nil {
			return undecided(err)
		}
		if a.closed {
			return notRun("round %d: the relay refused the REQ with CLOSED %q", i+1, a.reason)
		}
		switch {
		case len(a.events) > 0:
		case i == 0:
			firstEmpty = true
		default:
			empty++
		}
	}
	return reuseOutcome(empty, rounds-1, firstEmpty, evs[0].ID)
}

// reuseOutcome judges closeThenReuse: empty of n answers to a REQ sent
// right after a CLOSE of its id lacked the stored event; firstEmpty: so
// did the answer to the first REQ, before any CLOSE.
func reuseOutcome(empty, n int, firstEmpty bool, id string) outcome {
	first := ""
	if firstEmpty {
		first = "; the first REQ, before any CLOSE, was answered without it too"
	}
	switch {
	case empty > 0:
		return fail("%d of %d REQs sent right after a CLOSE of the same id were answered EOSE without the stored matching event %s%s", empty, n, short(id), first)
	case firstEmpty:
		return fail("the first REQ (before any CLOSE) was answered EOSE without the stored matching event %s; the %d after a CLOSE got it", short(id), n)
	}
	return pass()
}

// limitLive: a stored event; REQ {#t, limit n} (n 0 or 1): EOSE with the
// newest n stored, then a new matching event comes live (limit is "only
// valid for the initial query"). A second subscription on the same
// connection, same filter without limit, is the sync point: once the new
// event came there, the limited one has Timeout more to get it. (The
// control is on a connection of its own: a relay that delivers an event to
// one subscription per connection is req.two-subscriptions-live's finding.)
func limitLive(t *checkRun, n int) outcome {
	tag := t.tag("l0")
	evs, err := t.fresh(now()-60, func(int) []nostr.Tag { return []nostr.Tag{tTag(tag)} }, 2)
	if err != nil {
		return undecided(err)
	}
	if err := t.store(evs[0]); err != nil {
		return undecided(err)
	}
	p, err := t.conn()
	if err != nil {
		return undecided(err)
	}
	sub, control := "z"+t.nonce, "k"+t.nonce
	var notes []string
	// nostr.Filter leaves a zero limit out: the REQ is written here.
	req := fmt.Sprintf(`["REQ",%q,{"#t":[%q],"limit":%d}]`, sub, tag, n)
	if err := p.sendRaw(t.ctx, []byte(req)); err != nil {
		return undecided(err)
	}
	a, err := t.collect(p, sub)
	switch {
	case a.closed:
		return notRun("the relay closed the REQ: %q", a.reason)
	case err != nil:
		notes = append(notes, "no EOSE within the timeout (NIP-01 names no keyword for EOSE)")
	case len(a.events) > n:
		notes = append(notes, fmt.Sprintf("%d stored events returned for limit %d (limit is a SHOULD)", len(a.events), n))
	}
	q, err := t.conn()
	if err != nil {
		return undecided(err)
	}
	if err := q.req(t.ctx, control, nostr.Filter{Tags: map[string][]string{"t": {tag}}}); err != nil {
		return undecided(err)
	}
	if o, open := opened(t.collect(q, control)); !open {
		return outcome{o.status, "the control subscription (same filter, no limit): " + o.detail}
	}
	if err := t.store(evs[1]); err != nil {
		return undecided(err)
	}
	switch t.liveBoth(p, q, sub, control, evs[1].ID) {
	case 0:
		return unknown("the new event came to neither subscription")
	case 1:
		return fail("a new event matching a `limit: %d` filter (whose initial query returned %d stored events) was not delivered live, while the same filter without limit on another connection got it", n, len(a.events))
	}
	if len(notes) > 0 {
		return named("%s", notes[0])
	}
	return pass()
}

// liveBoth waits for the EVENT id under control on q, then under sub on p
// (p's frames wait in its queue meanwhile): 2 when sub got it, 1 when only
// control did, 0 when neither did.
func (t *checkRun) liveBoth(p, q *probe, sub, control, id string) int {
	_, errControl := t.until(q, control, id)
	_, errSub := t.until(p, sub, id)
	switch {
	case errSub == nil:
		return 2
	case errControl == nil:
		return 1
	}
	return 0
}

// orderNoLimit: three events at three created_at, published oldest first;
// a REQ without limit: newest first is named if not followed.
func orderNoLimit(t *checkRun) outcome {
	tag := t.tag("ord")
	base := now() - 300
	evs := make([]*nostr.Event, 3)
	for i := range evs {
		evs[i] = note(kindNote, base+int64(i)*10, "order "+t.nonce, tTag(tag))
	}
	if err := t.signStore([]*corpus.Author{t.key()}, evs...); err != nil {
		return undecided(err)
	}
	a, err := t.query("o"+t.nonce, nostr.Filter{Tags: map[string][]string{"t": {tag}}})
	if o := exactly(a, err, evs, "REQ without limit"); o.status != "pass" {
		return o
	}
	if !sort.SliceIsSorted(a.events, func(i, j int) bool { return a.events[i].CreatedAt > a.events[j].CreatedAt }) {
		return named("without limit, events came in created_at order %v, not newest first (NIP-01 states the order only for `limit: n`)", createdAts(a.events))
	}
	return pass()
}

func createdAts(evs []*nostr.Event) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.CreatedAt - evs[0].CreatedAt
	}
	return out
}

// idsAndConditions: {ids:[A,B,C], authors:[k1], kinds:[1]} where B is by
// another author and C another kind: only A.
func idsAndConditions(t *checkRun) outcome {
	k1, k2 := t.key(), t.key()
	tag := t.tag("ids")
	a := note(kindNote, now()-60, "ids "+t.nonce, tTag(tag))
	b := note(kindNote, now()-60, "ids "+t.nonce, tTag(tag))
	c := note(7, now()-60, "+", tTag(tag))
	if err := t.signStore([]*corpus.Author{k1, k2, k1}, a, b, c); err != nil {
		return undecided(err)
	}
	ans, err := t.query("i"+t.nonce, nostr.Filter{IDs: []string{a.ID, b.ID, c.ID}, Authors: []string{a.PubKey}, Kinds: []int{kindNote}})
	return exactly(ans, err, []*nostr.Event{a}, "a filter with ids, authors and kinds")
}

// tagValueExact: #t:[v] must not match an event tagged v+"athon", nor one
// with v under another tag letter.
func tagValueExact(t *checkRun) outcome {
	v := t.tag("zap")
	tags := [][]nostr.Tag{{tTag(v)}, {tTag(v + "athon")}, {{"r", v}}, {{"T", v}}}
	evs, err := t.fresh(now()-60, func(i int) []nostr.Tag { return tags[i] }, len(tags))
	if err != nil {
		return undecided(err)
	}
	if err := t.store(evs...); err != nil {
		return undecided(err)
	}
	a, err := t.query("t"+t.nonce, nostr.Filter{Tags: map[string][]string{"t": {v}}})
	return exactly(a, err, evs[:1], "#t with a value that prefixes another and is another letter's value")
}

// sinceUntilInclusive: events at T-1, T, T+1; {since:T, until:T}: only T.
func sinceUntilInclusive(t *checkRun) outcome {
	tag := t.tag("su")
	at := now() - 120
	evs := make([]*nostr.Event, 3)
	for i := range evs {
		evs[i] = note(kindNote, at+int64(i)-1, "since "+t.nonce, tTag(tag))
	}
	if err := t.signStore([]*corpus.Author{t.key()}, evs...); err != nil {
		return undecided(err)
	}
	a, err := t.query("s"+t.nonce, nostr.Filter{Tags: map[string][]string{"t": {tag}}, Since: nostr.Int64(at), Until: nostr.Int64(at)})
	return exactly(a, err, evs[1:2], "since = until = created_at")
}

// limitTie: four events with one created_at, published highest id first
// for one tag and lowest first for another; {limit:2}: the two lowest ids.
func limitTie(t *checkRun) outcome {
	at := now() - 60
	for round, asc := range []bool{false, true} {
		tag := t.tag(fmt.Sprintf("tie%d", round))
		evs, err := t.fresh(at, func(int) []nostr.Tag { return []nostr.Tag{tTag(tag)} }, 4)
		if err != nil {
			return undecided(err)
		}
		sort.Slice(evs, func(i, j int) bool { return (evs[i].ID < evs[j].ID) == asc })
		if err := t.store(evs...); err != nil {
			return undecided(err)
		}
		a, err := t.query(fmt.Sprintf("l%d%s", round, t.nonce), nostr.Filter{Tags: map[string][]string{"t": {tag}}, Limit: 2})
		if err != nil {
			return undecided(err)
		}
		ids := make([]string, len(evs))
		for i, e := range evs {
			ids[i] = e.ID
		}
		slices.Sort(ids)
		got := a.ids()
		if !slices.Equal(got, ids[:2]) {
			order := map[bool]string{true: "lowest id first", false: "highest id first"}[asc]
			return named("4 events with one created_at, published %s; limit 2 returned %s, not the two lowest ids in order %s", order, shorts(got), shorts(ids[:2]))
		}
	}
	return pass()
}

// replaceableLatest: an older then a newer version of a replaceable event:
// the newer comes back (the older alone is a failure; both named).
func replaceableLatest(t *checkRun) outcome {
	k := t.key()
	old := note(kindReplaceable, now()-120, "old "+t.nonce)
	newer := note(kindReplaceable, now()-60, "new "+t.nonce)
	if err := t.signStore([]*corpus.Author{k}, old, newer); err != nil {
		return undecided(err)
	}
	a, err := t.query("p"+t.nonce, nostr.Filter{Authors: []string{old.PubKey}, Kinds: []int{kindReplaceable}})
	if err != nil {
		return undecided(err)
	}
	got := a.ids()
	switch {
	case !slices.Contains(got, newer.ID):
		return fail("after an older and a newer version, the answer %s lacks the newer %s", shorts(got), short(newer.ID))
	case len(dedupe(a.events)) > 1:
		return named("both versions came back %s: %s", shorts(got), sentJust)
	}
	return pass()
}

// replaceTie: two versions with one created_at, published in both orders
// (each pair by its own fresh key): the lowest id stays.
func replaceTie(t *checkRun, addressable bool) outcome {
	kind := kindReplaceable
	var tags []nostr.Tag
	if addressable {
		kind, tags = kindAddressable, []nostr.Tag{{"d", t.tag("d")}}
	}
	at := now() - 60
	for round, lowFirst := range []bool{true, false} {
		k := t.key()
		a := note(kind, at, "version a "+t.nonce, tags...)
		b := note(kind, at, "version b "+t.nonce, tags...)
		if err := t.sign([]*corpus.Author{k}, a, b); err != nil {
			return undecided(err)
		}
		lo, hi := a, b
		if hi.ID < lo.ID {
			lo, hi = hi, lo
		}
		first, second := lo, hi
		if !lowFirst {
			first, second = hi, lo
		}
		if err := t.store(first); err != nil {
			return undecided(err)
		}
		o, err := t.send(second)
		if err != nil {
			return undecided(err)
		}
		ans, err := t.query(fmt.Sprintf("a%d%s", round, t.nonce), nostr.Filter{Authors: []string{lo.PubKey}, Kinds: []int{kind}})
		if err != nil {
			return undecided(err)
		}
		got := dedupe(ans.events)
		order := map[bool]string{true: "lowest id first", false: "highest id first"}[lowFirst]
		switch {
		case len(got) == 1 && got[0].ID == lo.ID:
		case len(got) == 0:
			return named("two versions with one created_at (%s, the second answered OK %v %q): none came back", order, o.accepted, o.reason)
		case len(got) > 1:
			return named("two versions with one created_at (%s): both came back %s (%s)", order, shorts(ans.ids()), sentJust)
		default:
			return named("two versions with one created_at, published %s: the relay kept %s, not the lowest id %s", order, short(got[0].ID), short(lo.ID))
		}
	}
	return pass()
}
